/** Extends a worker's lease on a Processing request, if the lease is still its own. */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { addMs } from '../job-queue/model.js';

export interface HeartbeatRequestArgs {
  readonly requestId: string;
  readonly owner: string;
  readonly now: Date;
  readonly leaseMs: number;
}

/** False when the lease was lost (taken over after expiry, cancelled or reset): stop working on it. */
export async function heartbeatRequest(db: Db, { requestId, owner, now, leaseMs }: HeartbeatRequestArgs): Promise<boolean> {
  const result = await sql`
    update ifw_bulk_import_request
       set lease_expires_at = ${addMs(now, leaseMs)}
     where request_id = ${requestId}
       and status = 'Processing'
       and lease_owner = ${owner}`.execute(db);
  return result.numAffectedRows === 1n;
}

/** Whether the request is still Processing under this worker's lease (read only; a cancel or reset clears it). */
export async function leaseHeld(db: Db, requestId: string, owner: string): Promise<boolean> {
  const row = await db
    .selectFrom('ifw_bulk_import_request')
    .select('request_id')
    .where('request_id', '=', requestId)
    .where('status', '=', 'Processing')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return row !== undefined;
}
