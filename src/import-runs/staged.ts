/**
 * Clearing what a run staged, on the connection that staged it: SQLite's staging table of mapped rows
 * (table-writer/sqlite/staged-rows.ts) or PostgreSQL's session table of records (postgres/staged-records.ts).
 * Synchronous on SQLite, so it can run inside the importer's transaction.
 */
import type { Connection, PostgresConnection, SqliteConnection } from '../storage/connection.js';
import { dropStagedRows } from '../table-writer/sqlite/staged-rows.js';
import { clearStagedRecords } from './postgres/staged-records.js';

export function clearStaged(conn: SqliteConnection, runId: string): void;
export function clearStaged(conn: PostgresConnection, runId: string): Promise<void>;
export function clearStaged(conn: Connection, runId: string): void | Promise<void>;
export function clearStaged(conn: Connection, runId: string): void | Promise<void> {
  if (conn.dialect === 'sqlite') return dropStagedRows(conn.sqlite, runId);
  return clearStagedRecords(conn, runId);
}
