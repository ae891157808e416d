/** Extends a worker's lease on a Running run, if the lease is still its own. */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { addMs } from '../job-queue/model.js';

export interface HeartbeatRunArgs {
  readonly runId: string;
  readonly owner: string;
  readonly now: Date;
  readonly leaseMs: number;
}

/** False when the lease was lost (taken over after expiry): stop working on the run. */
export async function heartbeatRun(db: Db, { runId, owner, now, leaseMs }: HeartbeatRunArgs): Promise<boolean> {
  const result = await sql`
    update ifw_import_run
       set lease_expires_at = ${addMs(now, leaseMs)}
     where run_id = ${runId}
       and status = 'Running'
       and lease_owner = ${owner}`.execute(db);
  return result.numAffectedRows === 1n;
}

/** Whether the run is still Running under this worker's lease (read only; a cancel clears it). */
export async function runLeaseHeld(db: Db, runId: string, owner: string): Promise<boolean> {
  const row = await db
    .selectFrom('ifw_import_run')
    .select('run_id')
    .where('run_id', '=', runId)
    .where('status', '=', 'Running')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return row !== undefined;
}
