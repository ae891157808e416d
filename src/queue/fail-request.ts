/**
 * Processing → Failed, fenced by the lease token. Synchronous on the raw connection so that it can
 * run inside the importer's transaction (after the data writes were rolled back) as well as alone.
 */
import { sqliteOf, type Database } from '../storage/database.js';

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
export function failRequest(db: Database, args: FailRequestArgs): boolean {
  const { changes } = sqliteOf(db).prepare(FAIL_REQUEST).run({
    requestId: args.requestId,
    owner: args.owner,
    now: args.now.toISOString(),
    recordCount: args.recordCount ?? 0,
    errorMessage: args.errorMessage,
  });
  return changes === 1;
}
