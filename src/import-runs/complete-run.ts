/**
 * Running → Completed, fenced by the lease token. On the raw connection because it runs inside the
 * importer's transaction (synchronous on SQLite; on PostgreSQL the run's own client): the records and
 * the Completed status commit together, or (when the lease was lost) neither does. The staged records
 * are cleared in the same transaction.
 */
import { sql } from 'kysely';
import type { RunStopReason } from '../rest-source/model.js';
import type { Connection, PostgresConnection, SqliteConnection } from '../storage/connection.js';
import type { RunRecordError } from './run-errors.js';
import { endRun } from './staged.js';

export interface CompleteRunArgs {
  readonly runId: string;
  readonly owner: string;
  readonly now: Date;
  readonly durationMs: number;
  readonly inserted: number;
  readonly updated: number;
  readonly skipped: number;
  readonly stopReason: RunStopReason;
  readonly stopDetail: string;
  /** The per-record errors kept, with the page and place each record came from. */
  readonly errors?: readonly RunRecordError[];
  readonly warnings: readonly string[];
  /** Describes skipped records when the integration skips bad ones; '' otherwise. */
  readonly errorMessage: string;
}

/** False when the lease is no longer this worker's: nothing changed. */
export function completeRun(conn: SqliteConnection, args: CompleteRunArgs): boolean;
export function completeRun(conn: PostgresConnection, args: CompleteRunArgs): Promise<boolean>;
export function completeRun(conn: Connection, args: CompleteRunArgs): boolean | Promise<boolean> {
  const now = args.now.toISOString();
  const complete = sql`
    update ifw_import_run
       set status = 'Completed',
           ended_at = ${now},
           duration_ms = ${args.durationMs},
           inserted_count = ${args.inserted},
           updated_count = ${args.updated},
           skipped_count = ${args.skipped},
           stop_reason = ${args.stopReason},
           stop_detail = ${args.stopDetail},
           warnings = ${JSON.stringify(args.warnings)},
           error_message = ${args.errorMessage},
           lease_owner = null,
           lease_expires_at = null
     where run_id = ${args.runId}
       and status = 'Running'
       and lease_owner = ${args.owner}`;
  return endRun(conn, complete, args.runId, { status: 'Completed', now: args.now }, args.errors);
}
