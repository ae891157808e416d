/**
 * Where staged records wait for the import: a TEMP table of the worker's own connection, not a table
 * of the database file. Staged records are scratch data — a run that is interrupted starts again from
 * page 1, and only the connection that fetched them ever reads them — so they need not go through the
 * write-ahead log at all: staging commits stay small, and the import's durable commit carries the
 * target rows and the run's status, not megabytes of staged JSON being cleared. The page rows in
 * `ifw_import_run_page` (URL, record count) stay in the database file, where every reader sees the
 * run's progress.
 */
import type BetterSqlite3 from 'better-sqlite3';

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

/** Drops a run's staged records (it ended, failed, or starts again). */
export function clearStagedRecords(sqlite: BetterSqlite3.Database, runId: string): void {
  stagedRecordsTable(sqlite);
  sqlite.prepare('delete from temp.ifw_staged_records where run_id = ?').run(runId);
}
