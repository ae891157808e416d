/**
 * Migrations, in order, run at start (and by `ifw migrate`). They use only what SQLite and PostgreSQL
 * both understand, so one list serves both dialects. Never edit a released migration: add a new one.
 */
import { randomUUID } from 'node:crypto';
import { PostgresAdapter, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

const m001_initial: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('ifw_target_table')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('ifw_integration')
      .addColumn('sorting_order', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('target_table', 'text', (c) => c.notNull().references('ifw_target_table.name'))
      .addColumn('records_path', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('accept_bulk_import', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('max_payload_size_kb', 'integer')
      .addColumn('write_mode', 'text', (c) => c.notNull().defaultTo('insert'))
      .addColumn('on_record_error', 'text', (c) => c.notNull().defaultTo('fail'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('ifw_integration_field')
      .addColumn('integration_sorting_order', 'integer', (c) => c.notNull().references('ifw_integration.sorting_order').onDelete('cascade'))
      .addColumn('field_no', 'integer', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('source_path', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('column_type', 'text', (c) => c.notNull().defaultTo('standard'))
      .addColumn('constant_value', 'text')
      .addPrimaryKeyConstraint('ifw_integration_field_pk', ['integration_sorting_order', 'field_no'])
      .execute();

    await db.schema
      .createTable('ifw_integration_mapping')
      .addColumn('integration_sorting_order', 'integer', (c) => c.notNull())
      .addColumn('field_no', 'integer', (c) => c.notNull())
      .addColumn('target_field', 'text', (c) => c.notNull())
      .addColumn('required', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('ifw_integration_mapping_pk', ['integration_sorting_order', 'field_no'])
      .addForeignKeyConstraint(
        'ifw_integration_mapping_field_fk',
        ['integration_sorting_order', 'field_no'],
        'ifw_integration_field',
        ['integration_sorting_order', 'field_no'],
        (fk) => fk.onDelete('cascade'),
      )
      .addUniqueConstraint('ifw_integration_mapping_target_uq', ['integration_sorting_order', 'target_field'])
      .execute();

    await db.schema
      .createTable('ifw_bulk_import_request')
      .addColumn('request_id', 'text', (c) => c.primaryKey())
      .addColumn('integration_sorting_order', 'integer', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('submitted_at', 'text', (c) => c.notNull())
      .addColumn('processed_at', 'text')
      .addColumn('record_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('error_message', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('inserted_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('updated_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('skipped_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('started_at', 'text')
      .addColumn('ended_at', 'text')
      .addColumn('submitted_by', 'text')
      .execute();
    // The queue's hot indexes are partial: they hold only Pending (claims) and Processing (the reaper)
    // requests, so they stay small however much history the table keeps.
    await db.schema
      .createIndex('ifw_bulk_import_request_pending_idx')
      .on('ifw_bulk_import_request')
      .columns(['submitted_at', 'request_id'])
      .where(sql.ref('status'), '=', 'Pending')
      .execute();
    await db.schema
      .createIndex('ifw_bulk_import_request_processing_idx')
      .on('ifw_bulk_import_request')
      .column('lease_expires_at')
      .where(sql.ref('status'), '=', 'Processing')
      .execute();
    await db.schema
      .createIndex('ifw_bulk_import_request_submitted_idx')
      .on('ifw_bulk_import_request')
      .columns(['submitted_at', 'request_id'])
      .execute();
    await db.schema
      .createIndex('ifw_bulk_import_request_ended_idx')
      .on('ifw_bulk_import_request')
      .column('ended_at')
      .where(sql.ref('ended_at'), 'is not', null)
      .execute();

    await db.schema
      .createTable('ifw_bulk_import_error')
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('record_no', 'integer')
      .addColumn('field', 'text')
      .addColumn('value', 'text')
      .addColumn('rule', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('ifw_bulk_import_error_pk', ['request_id', 'seq'])
      .execute();

    await db.schema
      .createTable('ifw_job_queue_entry')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('recurrence_seconds', 'integer', (c) => c.notNull())
      .addColumn('next_run_at', 'text')
      .addColumn('last_run_at', 'text')
      .addColumn('last_ended_at', 'text')
      .addColumn('last_error', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('parameters', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    const now = new Date().toISOString();
    await sql`insert into ifw_job_queue_entry (id, kind, description, status, recurrence_seconds, next_run_at, created_at, updated_at)
      values ('bulk-import-processor', 'bulkImportProcessor', 'VENDOR IF Bulk Import Processor', 'Ready', 60, ${now}, ${now}, ${now}),
             ('retention-cleanup', 'retentionCleanup', 'VENDOR IF Bulk Import Retention Cleanup', 'Ready', 3600, ${now}, ${now}, ${now})`.execute(
      db,
    );
  },
};

/**
 * REST API connections and endpoints. Secrets (password, token, API key, client secret) live only in
 * `secrets`, sealed by src/rest-source/secrets.ts; `auth_config` holds the non-secret parts as JSON. A
 * Response Data Path of `$` means the response root is the array.
 */
const m002_rest_api: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('ifw_rest_connection')
      .addColumn('code', 'text', (c) => c.primaryKey())
      .addColumn('base_url', 'text', (c) => c.notNull())
      .addColumn('auth_type', 'text', (c) => c.notNull().defaultTo('none'))
      .addColumn('auth_config', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('secrets', 'text')
      .addColumn('headers', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('query', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('timeout_ms', 'integer', (c) => c.notNull().defaultTo(30_000))
      .addColumn('max_retries', 'integer', (c) => c.notNull().defaultTo(3))
      .addColumn('initial_delay_ms', 'integer', (c) => c.notNull().defaultTo(500))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('ifw_rest_endpoint')
      .addColumn('code', 'text', (c) => c.primaryKey())
      .addColumn('connection_code', 'text', (c) => c.notNull().references('ifw_rest_connection.code'))
      .addColumn('path', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('method', 'text', (c) => c.notNull().defaultTo('GET'))
      .addColumn('headers', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('query', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('body', 'text')
      .addColumn('integration_sorting_order', 'integer', (c) => c.notNull().references('ifw_integration.sorting_order'))
      .addColumn('pagination_type', 'text', (c) => c.notNull().defaultTo('none'))
      .addColumn('next_link_path', 'text')
      .addColumn('page_param', 'text')
      .addColumn('offset_param', 'text')
      .addColumn('limit_param', 'text')
      .addColumn('page_size', 'integer')
      .addColumn('max_pages', 'integer', (c) => c.notNull().defaultTo(100))
      .addColumn('response_data_path', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('allow_cross_origin', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('schedule_seconds', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('ifw_rest_endpoint_connection_idx').on('ifw_rest_endpoint').column('connection_code').execute();
    await db.schema.createIndex('ifw_rest_endpoint_integration_idx').on('ifw_rest_endpoint').column('integration_sorting_order').execute();
  },
};

/**
 * Import runs: one row per pull from a REST API endpoint, and its pages. A page's records are staged
 * as JSON while the run fetches (so memory does not grow with the number of pages) and cleared once
 * the run ends; the page row stays as the run's log (URL, record count).
 */
const m003_import_runs: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('ifw_import_run')
      .addColumn('run_id', 'text', (c) => c.primaryKey())
      .addColumn('endpoint_code', 'text', (c) => c.notNull())
      .addColumn('integration_sorting_order', 'integer', (c) => c.notNull())
      .addColumn('trigger', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('queued_at', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text')
      .addColumn('ended_at', 'text')
      .addColumn('duration_ms', 'integer')
      .addColumn('pages_fetched', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('record_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('inserted_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('updated_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('skipped_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('stop_reason', 'text')
      .addColumn('stop_detail', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('warnings', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('error_message', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('ifw_import_run_queued_idx')
      .on('ifw_import_run')
      .columns(['queued_at', 'run_id'])
      .where(sql.ref('status'), '=', 'Queued')
      .execute();
    await db.schema
      .createIndex('ifw_import_run_running_idx')
      .on('ifw_import_run')
      .column('lease_expires_at')
      .where(sql.ref('status'), '=', 'Running')
      .execute();
    await db.schema.createIndex('ifw_import_run_endpoint_idx').on('ifw_import_run').columns(['endpoint_code', 'queued_at']).execute();
    // At most one run in progress per endpoint, whoever queues it (API, schedule, CLI, another host).
    await db.schema
      .createIndex('ifw_import_run_active_uq')
      .on('ifw_import_run')
      .column('endpoint_code')
      .unique()
      .where(sql<boolean>`status in ('Queued', 'Running')`)
      .execute();

    await db.schema
      .createTable('ifw_import_run_page')
      .addColumn('run_id', 'text', (c) => c.notNull().references('ifw_import_run.run_id').onDelete('cascade'))
      .addColumn('page_no', 'integer', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('record_count', 'integer', (c) => c.notNull())
      .addColumn('records', 'text')
      .addPrimaryKeyConstraint('ifw_import_run_page_pk', ['run_id', 'page_no'])
      .execute();

    const now = new Date().toISOString();
    await sql`insert into ifw_job_queue_entry (id, kind, description, status, recurrence_seconds, next_run_at, created_at, updated_at)
      values ('import-run-processor', 'importRunProcessor', 'VENDOR IF Import Run Processor', 'Ready', 60, ${now}, ${now}, ${now})`.execute(
      db,
    );
  },
};

/**
 * Service users (Basic authentication) and registered OAuth client applications, each holding
 * permission sets (a JSON array of set names, validated on the way in).
 */
const m004_security: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('ifw_user')
      .addColumn('user_name', 'text', (c) => c.primaryKey())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('permission_sets', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('password_changed_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('ifw_application')
      .addColumn('client_id', 'text', (c) => c.primaryKey())
      .addColumn('display_name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('permission_sets', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },
};

/** The Pagination section of a REST API endpoint as migration 002 stored it. */
interface FlatPaginationRow {
  code: string;
  pagination_type: string;
  next_link_path: string | null;
  page_param: string | null;
  offset_param: string | null;
  limit_param: string | null;
  page_size: number | null;
  max_pages: number;
  response_data_path: string;
  allow_cross_origin: number;
}

/**
 * The flat columns as the union. This is the migration's own copy of the mapping, so that later
 * changes to the service's types cannot change what it does. A name or Page Size the type needs but
 * the row lacks (no version of the service saved such a row) becomes '' or 0: the row stays readable
 * and editable, and a run of it fails at once saying which setting is missing.
 */
function paginationOfFlatRow(row: FlatPaginationRow): Record<string, unknown> {
  const common = { maxPages: row.max_pages, pageSize: row.page_size, responseDataPath: row.response_data_path };
  switch (row.pagination_type) {
    case 'none':
      return { type: 'none', ...common };
    case 'nextLink':
      return { type: 'nextLink', nextLinkPath: row.next_link_path ?? '', allowCrossOrigin: row.allow_cross_origin === 1, ...common };
    case 'pageNumber':
      return { type: 'pageNumber', pageParam: row.page_param ?? '', ...common, pageSize: row.page_size ?? 0 };
    case 'offsetLimit':
      return {
        type: 'offsetLimit',
        offsetParam: row.offset_param ?? '',
        limitParam: row.limit_param ?? '',
        ...common,
        pageSize: row.page_size ?? 0,
      };
    default:
      throw new Error(
        `REST API endpoint "${row.code}" has pagination_type "${row.pagination_type}", which no version of the service wrote; set it to none, nextLink, pageNumber or offsetLimit and migrate again`,
      );
  }
}

/** What the old columns' defaults meant together: no pagination, Max Pages 100, the root array. */
const NO_PAGINATION = JSON.stringify({ type: 'none', maxPages: 100, pageSize: null, responseDataPath: '' });

/**
 * An endpoint's Pagination section in one column, `pagination`: the tagged union it is validated into
 * (src/pagination/types.ts), as JSON, Response Data Path as configured (`$` kept). The flat columns it
 * replaces could hold states no pagination type allows (a Next Link endpoint without its path); the
 * union cannot.
 */
const m005_rest_endpoint_pagination: Migration = {
  async up(db: Kysely<unknown>) {
    const convert = async (tx: Kysely<unknown>): Promise<void> => {
      // SQLite adds a NOT NULL column only with a default.
      await tx.schema
        .alterTable('ifw_rest_endpoint')
        .addColumn('pagination', 'text', (c) => c.notNull().defaultTo(NO_PAGINATION))
        .execute();
      const { rows } = await sql<FlatPaginationRow>`select code, pagination_type, next_link_path, page_param, offset_param,
        limit_param, page_size, max_pages, response_data_path, allow_cross_origin from ifw_rest_endpoint`.execute(tx);
      for (const row of rows) {
        const pagination = JSON.stringify(paginationOfFlatRow(row));
        await sql`update ifw_rest_endpoint set pagination = ${pagination} where code = ${row.code}`.execute(tx);
      }
      // One column per statement: SQLite's ALTER TABLE drops one at a time.
      for (const column of [
        'pagination_type',
        'next_link_path',
        'page_param',
        'offset_param',
        'limit_param',
        'page_size',
        'max_pages',
        'response_data_path',
        'allow_cross_origin',
      ]) {
        await tx.schema.alterTable('ifw_rest_endpoint').dropColumn(column).execute();
      }
    };
    // The migrator runs SQLite's migrations outside a transaction (PostgreSQL's inside one): without
    // this, a failure half-way would leave the new column beside the old ones, and the next start would
    // fail to add it again.
    if (db.isTransaction) await convert(db);
    else await db.transaction().execute(convert);
  },
};

/**
 * REST API endpoints keep the settings of the pagination types not in use (`pagination_kept`, JSON,
 * src/rest-source/stored-pagination.ts), so that switching the type and back restores them. A Response
 * Data Path left blank for None or Next Link was stored as '' and meant "not set": it becomes null,
 * which now says so ('' is the blank a user writes: the root array). An import run's figure of records
 * received is named for what it counts (`records_fetched`), on the run and on each page.
 */
const m006_kept_pagination_and_records_fetched: Migration = {
  async up(db: Kysely<unknown>) {
    const change = async (tx: Kysely<unknown>): Promise<void> => {
      await tx.schema
        .alterTable('ifw_rest_endpoint')
        .addColumn('pagination_kept', 'text', (c) => c.notNull().defaultTo('{}'))
        .execute();
      const { rows } = await sql<{ code: string; pagination: string }>`select code, pagination from ifw_rest_endpoint`.execute(tx);
      for (const row of rows) {
        const pagination = JSON.parse(row.pagination) as { type: string; responseDataPath: string | null };
        if ((pagination.type === 'none' || pagination.type === 'nextLink') && pagination.responseDataPath === '') {
          const unset = JSON.stringify({ ...pagination, responseDataPath: null });
          await sql`update ifw_rest_endpoint set pagination = ${unset} where code = ${row.code}`.execute(tx);
        }
      }
      await tx.schema.alterTable('ifw_import_run').renameColumn('record_count', 'records_fetched').execute();
      await tx.schema.alterTable('ifw_import_run_page').renameColumn('record_count', 'records_fetched').execute();
    };
    // As in 005: SQLite's migrations run outside a transaction, and half of this must not stay behind.
    if (db.isTransaction) await change(db);
    else await db.transaction().execute(change);
  },
};

const m007_console_sessions: Migration = {
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

const m008_request_list_indexes: Migration = {
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
const m009_payload_chunks: Migration = {
  async up(db: Kysely<unknown>) {
    const bytes = db.getExecutor().adapter instanceof PostgresAdapter ? sql`bytea` : sql`blob`;
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
};

/**
 * Console sessions name their user by an id that is never reused and hold the user's security stamp of
 * the moment they signed in (src/console/sessions.ts): a session ends when its user is deleted (and a
 * user created again under the same name is someone else), and when the password, permission sets or
 * enabled state change, whoever changes them. Sessions from before are ended: they named users by name.
 * Applications are bound to the issuer whose tokens name them.
 */
const m010_session_identity: Migration = {
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

export const migrations: Record<string, Migration> = {
  '001_initial': m001_initial,
  '002_rest_api': m002_rest_api,
  '003_import_runs': m003_import_runs,
  '004_security': m004_security,
  '005_rest_endpoint_pagination': m005_rest_endpoint_pagination,
  '006_kept_pagination_and_records_fetched': m006_kept_pagination_and_records_fetched,
  '007_console_sessions': m007_console_sessions,
  '008_request_list_indexes': m008_request_list_indexes,
  '009_payload_chunks': m009_payload_chunks,
  '010_session_identity': m010_session_identity,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
