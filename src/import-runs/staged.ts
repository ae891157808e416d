/**
 * Clearing what a run staged, on the connection that staged it (and ending a run, which clears it): SQLite's staging table of mapped rows
 * (table-writer/sqlite/staged-rows.ts) or PostgreSQL's session table of records (postgres/staged-records.ts).
 * Synchronous on SQLite, so it can run inside the importer's transaction.
 */
import type { RawBuilder } from 'kysely';
import type { Connection, PostgresConnection, SqliteConnection } from '../storage/connection.js';
import { endWithEvents } from '../webhooks/outbox.js';
import { dropStagedRows } from '../table-writer/sqlite/staged-rows.js';
import { clearStagedRecords } from './postgres/staged-records.js';
import { replaceRunErrors, type RunRecordError } from './run-errors.js';

export function clearStaged(conn: SqliteConnection, runId: string): void;
export function clearStaged(conn: PostgresConnection, runId: string): Promise<void>;
export function clearStaged(conn: Connection, runId: string): void | Promise<void>;
export function clearStaged(conn: Connection, runId: string): void | Promise<void> {
  if (conn.dialect === 'sqlite') return dropStagedRows(conn.sqlite, runId);
  return clearStagedRecords(conn, runId);
}

/** How a run ends, for its webhook events. */
export interface RunEnding {
  readonly status: 'Completed' | 'Failed';
  readonly now: Date;
}

/**
 * A run's last status write (fenced by its lease) with its webhook events (the outbox, in the same
 * transaction), and, when it changed the run, the clearing of what the run staged and its per-record
 * errors kept (run-errors.ts). False when the lease is no longer this worker's: nothing changed.
 */
export function endRun(
  conn: SqliteConnection,
  statusWrite: RawBuilder<unknown>,
  runId: string,
  ending: RunEnding,
  errors?: readonly RunRecordError[],
): boolean;
export function endRun(
  conn: PostgresConnection,
  statusWrite: RawBuilder<unknown>,
  runId: string,
  ending: RunEnding,
  errors?: readonly RunRecordError[],
): Promise<boolean>;
export function endRun(
  conn: Connection,
  statusWrite: RawBuilder<unknown>,
  runId: string,
  ending: RunEnding,
  errors?: readonly RunRecordError[],
): boolean | Promise<boolean>;
export function endRun(
  conn: Connection,
  statusWrite: RawBuilder<unknown>,
  runId: string,
  ending: RunEnding,
  errors: readonly RunRecordError[] = [],
): boolean | Promise<boolean> {
  const end = { subject: 'run' as const, id: runId, ...ending };
  if (conn.dialect === 'sqlite') {
    if (!endWithEvents(conn, statusWrite, end)) return false;
    clearStaged(conn, runId);
    void replaceRunErrors(conn, runId, errors);
    return true;
  }
  return (async () => {
    if (!(await endWithEvents(conn, statusWrite, end))) return false;
    await clearStaged(conn, runId);
    await replaceRunErrors(conn, runId, errors);
    return true;
  })();
}
