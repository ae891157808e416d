/** Migrations 011 and 012: Idempotency-Key of submissions, resubmitted requests. Released migrations are never edited (see ../migrations.ts). */
import type { Kysely, Migration } from 'kysely';

/**
 * A submission that carried an `Idempotency-Key` header (src/bulk-import/idempotency.ts): per caller and
 * key, the request it created, when (its 202 body is answered again to a repeat), what was submitted
 * (a SHA-256 fingerprint of the integration and the payload, to refuse the same key with another body)
 * and until when the key holds.
 */
export const m011_idempotency_keys: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('ifw_idempotency_key')
      .addColumn('caller', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('submitted_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('ifw_idempotency_key_pk', ['caller', 'idempotency_key'])
      .execute();
    await db.schema.createIndex('ifw_idempotency_key_expires_ix').on('ifw_idempotency_key').column('expires_at').execute();
  },
};

/**
 * Resubmitted requests (src/bulk-import/resubmit-request.ts): a new request made from a Failed or
 * Cancelled one names it (`resubmitted_from`), and the old one names the new (`resubmitted_as`).
 */
export const m012_resubmitted_requests: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('ifw_bulk_import_request').addColumn('resubmitted_from', 'text').execute();
    await db.schema.alterTable('ifw_bulk_import_request').addColumn('resubmitted_as', 'text').execute();
  },
};
