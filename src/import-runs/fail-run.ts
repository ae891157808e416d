/**
 * Running → Failed, fenced by the lease token: nothing of the run is imported. Synchronous on the raw
 * connection so that it can run inside the importer's transaction (after the data writes were rolled
 * back) as well as alone (a page that could not be fetched); either way the status and the clearing of
 * the staged records commit together.
 */
import type { PgClient } from '../table-writer/postgres/client.js';
import type { StopReason } from '../pagination/types.js';
import { sqliteOf, type Database } from '../storage/database.js';
import { runFenced, type NamedParams } from '../storage/connection.js';
import { dropStagedRows } from '../table-writer/sqlite/staged-rows.js';
import { clearStagedRecordsPg } from './postgres/staged-records.js';

export interface FailRunArgs {
  readonly runId: string;
  readonly owner: string;
  readonly now: Date;
  readonly durationMs: number;
  readonly errorMessage: string;
  /** Known when every page was fetched and the import itself failed. */
  readonly stopReason?: StopReason | null;
  readonly stopDetail?: string;
  readonly warnings?: readonly string[];
}

const FAIL_RUN = `
  update ifw_import_run
     set status = 'Failed',
         ended_at = @now,
         duration_ms = @durationMs,
         inserted_count = 0,
         updated_count = 0,
         skipped_count = 0,
         stop_reason = @stopReason,
         stop_detail = @stopDetail,
         warnings = @warnings,
         error_message = @errorMessage,
         lease_owner = null,
         lease_expires_at = null
   where run_id = @runId
     and status = 'Running'
     and lease_owner = @owner`;

const parameters = (args: FailRunArgs): NamedParams => ({
  runId: args.runId,
  owner: args.owner,
  now: args.now.toISOString(),
  durationMs: args.durationMs,
  stopReason: args.stopReason ?? null,
  stopDetail: args.stopDetail ?? '',
  warnings: JSON.stringify(args.warnings ?? []),
  errorMessage: args.errorMessage,
});

/** False when the lease is no longer this worker's: nothing changed. */
export function failRun(db: Database, args: FailRunArgs): boolean {
  const fail = sqliteOf(db).transaction((): boolean => {
    if (!runFenced({ dialect: 'sqlite', sqlite: sqliteOf(db) }, FAIL_RUN, parameters(args))) return false;
    dropStagedRows(sqliteOf(db), args.runId);
    return true;
  });
  // Inside the importer's transaction this nests as a savepoint; alone it takes the write lock up front.
  return fail.immediate();
}

/**
 * The same on PostgreSQL, on the run's own client: inside its import transaction, or alone. Alone, the
 * status update is its own (durable) commit; the staged records are the session's scratch data, so
 * clearing them need not share that commit.
 */
export async function failRunPg(client: PgClient, args: FailRunArgs): Promise<boolean> {
  if (!(await runFenced({ dialect: 'postgres', pg: client }, FAIL_RUN, parameters(args)))) return false;
  await clearStagedRecordsPg(client, args.runId);
  return true;
}
