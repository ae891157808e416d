/**
 * Running → Completed, fenced by the lease token. On the raw connection because it runs inside the
 * importer's transaction (synchronous on SQLite; on PostgreSQL the run's own client): the records and
 * the Completed status commit together, or (when the lease was lost) neither does. The staged records
 * are cleared in the same transaction.
 */
import type { PgClient } from '../table-writer/postgres/client.js';
import type { StopReason } from '../pagination/types.js';
import { sqliteOf, type Database } from '../storage/database.js';
import { runFenced, type NamedParams } from '../storage/connection.js';
import { dropStagedRows } from '../table-writer/sqlite/staged-rows.js';
import { clearStagedRecordsPg } from './postgres/staged-records.js';

export interface CompleteRunArgs {
  readonly runId: string;
  readonly owner: string;
  readonly now: Date;
  readonly durationMs: number;
  readonly inserted: number;
  readonly updated: number;
  readonly skipped: number;
  readonly stopReason: StopReason;
  readonly stopDetail: string;
  readonly warnings: readonly string[];
  /** Describes skipped records when the integration skips bad ones; '' otherwise. */
  readonly errorMessage: string;
}

const COMPLETE_RUN = `
  update ifw_import_run
     set status = 'Completed',
         ended_at = @now,
         duration_ms = @durationMs,
         inserted_count = @inserted,
         updated_count = @updated,
         skipped_count = @skipped,
         stop_reason = @stopReason,
         stop_detail = @stopDetail,
         warnings = @warnings,
         error_message = @errorMessage,
         lease_owner = null,
         lease_expires_at = null
   where run_id = @runId
     and status = 'Running'
     and lease_owner = @owner`;

const parameters = (args: CompleteRunArgs): NamedParams => ({
  runId: args.runId,
  owner: args.owner,
  now: args.now.toISOString(),
  durationMs: args.durationMs,
  inserted: args.inserted,
  updated: args.updated,
  skipped: args.skipped,
  stopReason: args.stopReason,
  stopDetail: args.stopDetail,
  warnings: JSON.stringify(args.warnings),
  errorMessage: args.errorMessage,
});

/** False when the lease is no longer this worker's: nothing changed. */
export function completeRun(db: Database, args: CompleteRunArgs): boolean {
  if (!runFenced({ dialect: 'sqlite', sqlite: sqliteOf(db) }, COMPLETE_RUN, parameters(args))) return false;
  dropStagedRows(sqliteOf(db), args.runId);
  return true;
}

/** The same on PostgreSQL, on the run's client inside its import transaction. */
export async function completeRunPg(client: PgClient, args: CompleteRunArgs): Promise<boolean> {
  if (!(await runFenced({ dialect: 'postgres', pg: client }, COMPLETE_RUN, parameters(args)))) return false;
  await clearStagedRecordsPg(client, args.runId);
  return true;
}
