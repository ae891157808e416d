/** Migrations 007 to 010: console sessions, request list indexes, payload chunks, session identity. Released migrations are never edited (see ../migrations.ts). */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../db.js';

export const m007_console_sessions: Migration = {
  async up(db: Kysely<unknown>) {
    // Signed-in browser sessions of the admin console. The token lives only in the cookie: a stolen
    // copy of this table signs no one in.
    await db.schema
      .createTable('ifw_console_session')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_name', 'text', (c) => c.notNull())
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_seen_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('ifw_console_session_user_ix').on('ifw_console_session').column('user_name').execute();
  },
};

export const m008_request_list_indexes: Migration = {
  async up(db: Kysely<unknown>) {
    // The console's request list filters by status, integration or submitter, newest first, and pages
    // by keyset: with one of these indexes a page reads its 50 rows whatever the table holds, also when
    // the matching requests are few and old (without one, the newest-first scan walks the whole table).
    for (const [name, column] of [
      ['ifw_bulk_import_request_status_list_idx', 'status'],
      ['ifw_bulk_import_request_integration_list_idx', 'integration_sorting_order'],
      ['ifw_bulk_import_request_submitter_list_idx', 'submitted_by'],
    ] as const) {
      await db.schema.createIndex(name).on('ifw_bulk_import_request').columns([column, 'submitted_at', 'request_id']).execute();
    }
  },
};

/**
 * Large payloads are stored in chunks of bytes instead of one text value, so that neither the submit
 * path nor the processor holds a payload whole (src/bulk-import/upload.ts, payload-chunks.ts). A
 * request says how many chunks it has (`payload_chunks`, 0: the payload is the `payload` text, as
 * before) and how long its payload is in characters (`payload_length`, null for requests stored before).
 */
export const m009_payload_chunks = (dialect: Dialect): Migration => ({
  async up(db: Kysely<unknown>) {
    const bytes = dialect === 'postgres' ? sql`bytea` : sql`blob`;
    const change = async (tx: Kysely<unknown>): Promise<void> => {
      await tx.schema
        .createTable('ifw_bulk_import_payload_chunk')
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('data', bytes, (c) => c.notNull())
        .addPrimaryKeyConstraint('ifw_bulk_import_payload_chunk_pk', ['request_id', 'seq'])
        .execute();
      await tx.schema
        .alterTable('ifw_bulk_import_request')
        .addColumn('payload_chunks', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await tx.schema.alterTable('ifw_bulk_import_request').addColumn('payload_length', 'integer').execute();
    };
    if (db.isTransaction) await change(db);
    else await db.transaction().execute(change);
  },
});

/**
 * Console sessions name their user by an id that is never reused and hold the user's security stamp of
 * the moment they signed in (src/console/sessions.ts): a session ends when its user is deleted (and a
 * user created again under the same name is someone else), and when the password, permission sets or
 * enabled state change, whoever changes them. Sessions from before are ended: they named users by name.
 * Applications are bound to the issuer whose tokens name them.
 */
export const m010_session_identity: Migration = {
  async up(db: Kysely<unknown>) {
    const change = async (tx: Kysely<unknown>): Promise<void> => {
      await tx.schema.alterTable('ifw_user').addColumn('user_id', 'text').execute();
      await tx.schema.alterTable('ifw_user').addColumn('security_stamp', 'text').execute();
      const users = await sql<{ user_name: string }>`select user_name from ifw_user`.execute(tx);
      for (const { user_name } of users.rows)
        await sql`update ifw_user set user_id = ${randomUUID()}, security_stamp = ${randomUUID()} where user_name = ${user_name}`.execute(
          tx,
        );
      await tx.schema.createIndex('ifw_user_id_ux').on('ifw_user').column('user_id').unique().execute();
      await tx.schema.dropTable('ifw_console_session').execute();
      await tx.schema
        .createTable('ifw_console_session')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('security_stamp', 'text', (c) => c.notNull())
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_seen_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await tx.schema.createIndex('ifw_console_session_user_id_ix').on('ifw_console_session').columns(['user_id', 'created_at']).execute();
      await tx.schema.alterTable('ifw_application').addColumn('issuer', 'text').execute();
    };
    if (db.isTransaction) await change(db);
    else await db.transaction().execute(change);
  },
};
