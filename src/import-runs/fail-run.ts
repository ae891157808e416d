/**
 * Running → Failed, fenced by the lease token: nothing of the run is imported. On the raw connection, so
 * that it can run inside the importer's transaction (after the data writes were rolled back) as well as
 * alone (a page that could not be fetched).
 */
import { sql } from 'kysely';
import type { RunStopReason } from '../rest-source/model.js';
import type { Connection, PostgresConnection, SqliteConnection } from '../storage/connection.js';
import type { RunRecordError } from './run-errors.js';
import { endRun } from './staged.js';

export interface FailRunArgs {
  readonly runId: string;
  readonly owner: string;
  readonly now: Date;
  readonly durationMs: number;
  readonly errorMessage: string;
  /** Known when every page was fetched and the import itself failed. */
  readonly stopReason?: RunStopReason | null;
  readonly stopDetail?: string;
  /** The per-record errors kept, with the page and place each record came from. */
  readonly errors?: readonly RunRecordError[];
  readonly warnings?: readonly string[];
}

function failStatement(args: FailRunArgs) {
  return sql`
    update ifw_import_run
       set status = 'Failed',
           ended_at = ${args.now.toISOString()},
           duration_ms = ${args.durationMs},
           inserted_count = 0,
           updated_count = 0,
           skipped_count = 0,
           stop_reason = ${args.stopReason ?? null},
           stop_detail = ${args.stopDetail ?? ''},
           warnings = ${JSON.stringify(args.warnings ?? [])},
           error_message = ${args.errorMessage},
           lease_owner = null,
           lease_expires_at = null
     where run_id = ${args.runId}
       and status = 'Running'
       and lease_owner = ${args.owner}`;
}

/**
 * False when the lease is no longer this worker's: nothing changed. On SQLite the status and the
 * clearing of the staged rows commit together: inside the importer's transaction this nests as a
 * savepoint; alone it takes the write lock up front. On PostgreSQL, on the run's own client, inside
 * its import transaction or alone: alone, the status update is its own (durable) commit, and the
 * staged records are the session's scratch data, so clearing them need not share that commit.
 */
export function failRun(conn: SqliteConnection, args: FailRunArgs): boolean;
export function failRun(conn: PostgresConnection, args: FailRunArgs): Promise<boolean>;
export function failRun(conn: Connection, args: FailRunArgs): boolean | Promise<boolean> {
  if (conn.dialect === 'sqlite')
    return conn.sqlite
      .transaction(() => endRun(conn, failStatement(args), args.runId, { status: 'Failed', now: args.now }, args.errors))
      .immediate();
  return endRun(conn, failStatement(args), args.runId, { status: 'Failed', now: args.now }, args.errors);
}
