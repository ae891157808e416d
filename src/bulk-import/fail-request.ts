/**
 * Processing → Failed, fenced by the lease token. On the importer's transaction connection (after the
 * data writes were rolled back) as well as alone: synchronous on SQLite, awaited on PostgreSQL.
 */
import { runFenced, type Connection, type PostgresConnection, type SqliteConnection } from '../storage/connection.js';

export interface FailRequestArgs {
  readonly requestId: string;
  readonly owner: string;
  readonly now: Date;
  readonly errorMessage: string;
  /** Records written: 0 for a failed request, since one request is one transaction. */
  readonly recordCount?: number;
}

const FAIL_REQUEST = `
  update ifw_bulk_import_request
     set status = 'Failed',
         processed_at = @now,
         ended_at = @now,
         record_count = @recordCount,
         inserted_count = 0,
         updated_count = 0,
         skipped_count = 0,
         error_message = @errorMessage,
         lease_owner = null,
         lease_expires_at = null
   where request_id = @requestId
     and status = 'Processing'
     and lease_owner = @owner`;

/** False when the lease is no longer this worker's (taken over, cancelled or reset): nothing changed. */
export function failRequest(conn: SqliteConnection, args: FailRequestArgs): boolean;
export function failRequest(conn: PostgresConnection, args: FailRequestArgs): Promise<boolean>;
export function failRequest(conn: Connection, args: FailRequestArgs): boolean | Promise<boolean>;
export function failRequest(conn: Connection, args: FailRequestArgs): boolean | Promise<boolean> {
  return runFenced(conn, FAIL_REQUEST, {
    requestId: args.requestId,
    owner: args.owner,
    now: args.now.toISOString(),
    recordCount: args.recordCount ?? 0,
    errorMessage: args.errorMessage,
  });
}
