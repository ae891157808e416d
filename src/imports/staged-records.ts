/**
 * Where staged records wait for the import: a TEMP table of the worker's own connection, not a table
 * of the database. Staged records are scratch data — a run that is interrupted starts again from
 * page 1, and only the connection that fetched them ever reads them — so they need not go through the
 * write-ahead log at all: staging commits stay small, and the import's durable commit carries the
 * target rows and the run's status, not megabytes of staged JSON being cleared. The page rows in
 * `ifw_import_run_page` (URL, record count) stay in the database, where every reader sees the run's
 * progress. On PostgreSQL the connection is a pool client the run holds from its first page to its end
 * (TEMP tables belong to a session).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { PgClient } from '../importer/postgres/client.js';

const CREATE = `
  create temp table if not exists ifw_staged_records (
    run_id text not null,
    page_no integer not null,
    records text not null,
    primary key (run_id, page_no)
  )`;

const ready = new WeakSet<BetterSqlite3.Database>();

/** Creates the connection's staging table once; every function touching staged records calls it first. */
export function stagedRecordsTable(sqlite: BetterSqlite3.Database): void {
  if (ready.has(sqlite)) return;
  sqlite.exec(CREATE);
  ready.add(sqlite);
}

export const INSERT_STAGED_RECORDS = `insert into temp.ifw_staged_records (run_id, page_no, records) values (?, ?, ?)`;

const CLEAR = 'delete from temp.ifw_staged_records where run_id = ?';

/** Drops a run's staged records (it ended, failed, or starts again). */
export function clearStagedRecords(sqlite: BetterSqlite3.Database, runId: string): void {
  stagedRecordsTable(sqlite);
  sqlite.prepare(CLEAR).run(runId);
}

/** The session's staging table on PostgreSQL; cheap when it exists, so a run asks once as it starts. */
export async function stagedRecordsTablePg(client: PgClient): Promise<void> {
  // A notice "relation already exists, skipping" per run says nothing: keep it out of the server log.
  await client.query(`set local client_min_messages = warning; ${CREATE.trim()}`);
}

export async function clearStagedRecordsPg(client: PgClient, runId: string): Promise<void> {
  await client.query('delete from pg_temp.ifw_staged_records where run_id = $1', [runId]);
}
