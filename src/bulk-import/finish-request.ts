/**
 * The last writes of a request's import transaction: Completed or Failed (fenced by the lease) and the
 * per-record errors, on the transaction's own connection (synchronously on SQLite, awaited on
 * PostgreSQL). False when the lease is no longer this worker's: then the caller rolls everything back.
 */
import type { ImportOutcome } from '../table-writer/model.js';
import type { Connection, PostgresConnection, SqliteConnection } from '../storage/connection.js';
import { completeRequest } from './complete-request.js';
import { failRequest } from './fail-request.js';
import { replaceRequestErrors } from './record-errors.js';

export interface FinishArgs {
  readonly requestId: string;
  readonly owner: string;
  readonly now: Date;
  readonly outcome: ImportOutcome;
}

function statusWrite(conn: Connection, { requestId, owner, now, outcome }: FinishArgs): boolean | Promise<boolean> {
  return outcome.ok
    ? completeRequest(conn, {
        requestId,
        owner,
        now,
        recordCount: outcome.recordCount,
        inserted: outcome.inserted,
        updated: outcome.updated,
        skipped: outcome.skipped,
        errorMessage: outcome.errorMessage,
      })
    : failRequest(conn, { requestId, owner, now, errorMessage: outcome.errorMessage });
}

export function finishRequest(conn: SqliteConnection, args: FinishArgs): boolean;
export function finishRequest(conn: PostgresConnection, args: FinishArgs): Promise<boolean>;
export function finishRequest(conn: Connection, args: FinishArgs): boolean | Promise<boolean> {
  if (conn.dialect === 'sqlite') {
    const finished = statusWrite(conn, args) as boolean;
    if (finished) replaceRequestErrors(conn, args.requestId, args.outcome.errors);
    return finished;
  }
  return (async () => {
    const finished = await statusWrite(conn, args);
    if (finished) await replaceRequestErrors(conn, args.requestId, args.outcome.errors);
    return finished;
  })();
}
