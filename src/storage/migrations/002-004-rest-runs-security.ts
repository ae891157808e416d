/** Migrations 002 to 004: REST API connections and endpoints, import runs, users and applications. Released migrations are never edited (see ../migrations.ts). */
import { sql, type Kysely, type Migration } from 'kysely';

/**
 * REST API connections and endpoints. Secrets (password, token, API key, client secret) live only in
 * `secrets`, sealed by src/rest-source/secrets.ts; `auth_config` holds the non-secret parts as JSON. A
 * Response Data Path of `$` means the response root is the array.
 */
export const m002_rest_api: Migration = {
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
export const m003_import_runs: Migration = {
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
export const m004_security: Migration = {
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
