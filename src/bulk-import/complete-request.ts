/**
 * Processing → Completed, fenced by the lease token. It runs on the importer's transaction connection
 * (synchronously on SQLite, on the pg client inside BEGIN on PostgreSQL): the records and the Completed
 * status commit together, or (when the lease was lost) neither does.
 */
import { sql } from 'kysely';
import type { Connection, PostgresConnection, SqliteConnection } from '../storage/connection.js';
import { endWithEvents } from '../webhooks/outbox.js';

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

/** False when the lease is no longer this worker's (taken over, cancelled or reset): nothing changed. */
export function completeRequest(conn: SqliteConnection, args: CompleteRequestArgs): boolean;
export function completeRequest(conn: PostgresConnection, args: CompleteRequestArgs): Promise<boolean>;
export function completeRequest(conn: Connection, args: CompleteRequestArgs): boolean | Promise<boolean>;
export function completeRequest(conn: Connection, args: CompleteRequestArgs): boolean | Promise<boolean> {
  const now = args.now.toISOString();
  return endWithEvents(
    conn,
    sql`
      update ifw_bulk_import_request
         set status = 'Completed',
             processed_at = ${now},
             ended_at = ${now},
             record_count = ${args.recordCount},
             inserted_count = ${args.inserted},
             updated_count = ${args.updated},
             skipped_count = ${args.skipped},
             error_message = ${args.errorMessage ?? ''},
             lease_owner = null,
             lease_expires_at = null
       where request_id = ${args.requestId}
         and status = 'Processing'
         and lease_owner = ${args.owner}`,
    { subject: 'request', id: args.requestId, status: 'Completed', now: args.now },
  );
}
