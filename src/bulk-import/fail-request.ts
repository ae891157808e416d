/**
 * Processing → Failed, fenced by the lease token. On the importer's transaction connection (after the
 * data writes were rolled back) as well as alone: synchronous on SQLite, awaited on PostgreSQL.
 */
import { sql } from 'kysely';
import type { Connection, PostgresConnection, SqliteConnection } from '../storage/connection.js';
import { endWithEvents } from '../webhooks/outbox.js';

export interface FailRequestArgs {
  readonly requestId: string;
  readonly owner: string;
  readonly now: Date;
  readonly errorMessage: string;
  /** Records written: 0 for a failed request, since one request is one transaction. */
  readonly recordCount?: number;
}

/** False when the lease is no longer this worker's (taken over, cancelled or reset): nothing changed. */
export function failRequest(conn: SqliteConnection, args: FailRequestArgs): boolean;
export function failRequest(conn: PostgresConnection, args: FailRequestArgs): Promise<boolean>;
export function failRequest(conn: Connection, args: FailRequestArgs): boolean | Promise<boolean>;
export function failRequest(conn: Connection, args: FailRequestArgs): boolean | Promise<boolean> {
  const now = args.now.toISOString();
  return endWithEvents(
    conn,
    sql`
      update ifw_bulk_import_request
         set status = 'Failed',
             processed_at = ${now},
             ended_at = ${now},
             record_count = ${args.recordCount ?? 0},
             inserted_count = 0,
             updated_count = 0,
             skipped_count = 0,
             error_message = ${args.errorMessage},
             lease_owner = null,
             lease_expires_at = null
       where request_id = ${args.requestId}
         and status = 'Processing'
         and lease_owner = ${args.owner}`,
    { subject: 'request', id: args.requestId, status: 'Failed', now: args.now },
  );
}
