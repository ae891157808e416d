/**
 * Where staged records wait for the import on PostgreSQL: a TEMP table of the run's own session (a pool
 * client the run holds from its first page to its end), not a table of the database. Staged records
 * are scratch data (a run that is interrupted starts again from page 1, and only the session that
 * fetched them reads them), so they stay out of the write-ahead log, and the import's durable commit
 * carries the target rows and the run's status, not megabytes of staged JSON being cleared. The page
 * rows in `ifw_import_run_page` (URL, record count) stay in the database, where every reader sees the
 * run's progress. SQLite stages mapped rows instead: importer/staged-rows.ts.
 */
import type { PgClient } from '../../table-writer/postgres/client.js';

const CREATE = `
  create temp table if not exists ifw_staged_records (
    run_id text not null,
    page_no integer not null,
    records text not null,
    primary key (run_id, page_no)
  )`;

/** The session's staging table on PostgreSQL; cheap when it exists, so a run asks once as it starts. */
export async function stagedRecordsTablePg(client: PgClient): Promise<void> {
  // A notice "relation already exists, skipping" per run says nothing: keep it out of the server log.
  await client.query(`set local client_min_messages = warning; ${CREATE.trim()}`);
}

export async function clearStagedRecordsPg(client: PgClient, runId: string): Promise<void> {
  await client.query('delete from pg_temp.ifw_staged_records where run_id = $1', [runId]);
}
