/**
 * Running → Completed, fenced by the lease token. On the raw connection because it runs inside the
 * importer's transaction (synchronous on SQLite; on PostgreSQL the run's own client): the records and
 * the Completed status commit together, or (when the lease was lost) neither does. The staged records
 * are cleared in the same transaction.
 */
import { sql } from 'kysely';
import type { RunStopReason } from '../rest-source/model.js';
import { execute, type Connection, type PostgresConnection, type SqliteConnection } from '../storage/connection.js';
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
  /** The endpoint's bookmark and last successful run, moved in the same transaction (absent: left as they are). */
  readonly bookmark?: BookmarkMove;
}

/**
 * What a Completed run writes on its endpoint: when it started ({{lastSuccessfulRun.startedAt}}), and
 * the new bookmark (`to`, null: unchanged), written only while the stored one is still `from`, the
 * value the run started with: a set or reset by an administrator meanwhile wins.
 */
export interface BookmarkMove {
  readonly endpointCode: string;
  readonly startedAt: string;
  readonly from: string | null;
  readonly to: string | null;
}

function bookmarkStatements(move: BookmarkMove, now: string) {
  const statements = [sql`update ifw_rest_endpoint set last_success_started_at = ${move.startedAt} where code = ${move.endpointCode}`];
  if (move.to !== null && move.to !== move.from) {
    const unchanged = move.from === null ? sql`cursor_value is null` : sql`cursor_value = ${move.from}`;
    statements.push(sql`
      update ifw_rest_endpoint
         set cursor_value = ${move.to}, cursor_updated_at = ${now}
       where code = ${move.endpointCode} and ${unchanged}`);
  }
  return statements;
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
  const { bookmark } = args;
  if (bookmark === undefined) return endRun(conn, complete, args.runId, { status: 'Completed', now: args.now }, args.errors);
  // Inside the importer's transaction: the records, the status and the bookmark commit together.
  if (conn.dialect === 'sqlite') {
    if (!endRun(conn, complete, args.runId, { status: 'Completed', now: args.now }, args.errors)) return false;
    for (const statement of bookmarkStatements(bookmark, now)) execute(conn, statement);
    return true;
  }
  return (async () => {
    if (!(await endRun(conn, complete, args.runId, { status: 'Completed', now: args.now }, args.errors))) return false;
    for (const statement of bookmarkStatements(bookmark, now)) await execute(conn, statement);
    return true;
  })();
}
