/**
 * Migrations, in order, run at start (and by `ifw migrate`). They use only what SQLite and PostgreSQL
 * both understand, so one list serves both dialects. Never edit a released migration: add a new one.
 */
import type { Migration, MigrationProvider } from 'kysely';
import type { Dialect } from './db.js';
import { m001_initial } from './migrations/001-initial.js';
import { m002_rest_api, m003_import_runs, m004_security } from './migrations/002-004-rest-runs-security.js';
import { m005_rest_endpoint_pagination, m006_kept_pagination_and_records_fetched } from './migrations/005-006-pagination.js';
import {
  m007_console_sessions,
  m008_request_list_indexes,
  m009_payload_chunks,
  m010_session_identity,
} from './migrations/007-010-sessions-chunks.js';
import { m011_idempotency_keys, m012_resubmitted_requests } from './migrations/011-012-idempotency-resubmit.js';
import { m013_workers } from './migrations/013-workers.js';
import { m014_response_actions_and_cookies } from './migrations/014-response-actions-cookies.js';
import { m015_webhooks } from './migrations/015-webhooks.js';
import { m017_run_errors_and_retention } from './migrations/017-run-housekeeping.js';
import { m018_incremental_imports } from './migrations/018-incremental-imports.js';
import { m019_payload_chunk_compression } from './migrations/019-payload-chunk-compression.js';

/** The list, by name; the names are the ids in `ifw_migration` of every existing database: never rename one. */
export const migrations = (dialect: Dialect): Record<string, Migration> => ({
  '001_initial': m001_initial,
  '002_rest_api': m002_rest_api,
  '003_import_runs': m003_import_runs,
  '004_security': m004_security,
  '005_rest_endpoint_pagination': m005_rest_endpoint_pagination,
  '006_kept_pagination_and_records_fetched': m006_kept_pagination_and_records_fetched,
  '007_console_sessions': m007_console_sessions,
  '008_request_list_indexes': m008_request_list_indexes,
  '009_payload_chunks': m009_payload_chunks(dialect),
  '010_session_identity': m010_session_identity,
  '011_idempotency_keys': m011_idempotency_keys,
  '012_resubmitted_requests': m012_resubmitted_requests,
  '013_workers': m013_workers,
  '014_response_actions_and_cookies': m014_response_actions_and_cookies,
  '015_webhooks': m015_webhooks,
  '017_run_errors_and_retention': m017_run_errors_and_retention,
  '018_incremental_imports': m018_incremental_imports,
  '019_payload_chunk_compression': m019_payload_chunk_compression(dialect),
});

export const migrationProvider = (dialect: Dialect): MigrationProvider => ({
  getMigrations: () => Promise.resolve(migrations(dialect)),
});
