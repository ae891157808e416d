/**
 * Processing → Completed, fenced by the lease token. It runs on the importer's transaction connection
 * (synchronously on SQLite, on the pg client inside BEGIN on PostgreSQL): the records and the Completed
 * status commit together, or (when the lease was lost) neither does.
 */
import { runFenced, type Connection, type PostgresConnection, type SqliteConnection } from '../storage/connection.js';

export interface CompleteRequestArgs {
  readonly requestId: string;
  readonly owner: string;
  readonly now: Date;
  readonly recordCount: number;
  readonly inserted: number;
  readonly updated: number;
  readonly skipped: number;
  /** Describes skipped records when the integration skips bad ones; '' otherwise. */
  readonly errorMessage?: string;
}

const COMPLETE_REQUEST = `
  update ifw_bulk_import_request
     set status = 'Completed',
         processed_at = @now,
         ended_at = @now,
         record_count = @recordCount,
         inserted_count = @inserted,
         updated_count = @updated,
         skipped_count = @skipped,
         error_message = @errorMessage,
         lease_owner = null,
         lease_expires_at = null
   where request_id = @requestId
     and status = 'Processing'
     and lease_owner = @owner`;

/** False when the lease is no longer this worker's (taken over, cancelled or reset): nothing changed. */
export function completeRequest(conn: SqliteConnection, args: CompleteRequestArgs): boolean;
export function completeRequest(conn: PostgresConnection, args: CompleteRequestArgs): Promise<boolean>;
export function completeRequest(conn: Connection, args: CompleteRequestArgs): boolean | Promise<boolean>;
export function completeRequest(conn: Connection, args: CompleteRequestArgs): boolean | Promise<boolean> {
  return runFenced(conn, COMPLETE_REQUEST, {
    requestId: args.requestId,
    owner: args.owner,
    now: args.now.toISOString(),
    recordCount: args.recordCount,
    inserted: args.inserted,
    updated: args.updated,
    skipped: args.skipped,
    errorMessage: args.errorMessage ?? '',
  });
}
