/**
 * Running → Queued when this worker stops before the run ends (shutdown): the run is not the user's
 * fault, so it is neither failed nor left to wait for its lease to expire. Its staged pages are
 * discarded by the next attempt, which fetches from page 1.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';

export async function releaseRun(db: Db, { runId, owner }: { readonly runId: string; readonly owner: string }): Promise<boolean> {
  const result = await sql`
    update ifw_import_run
       set status = 'Queued',
           lease_owner = null,
           lease_expires_at = null,
           attempts = attempts - 1
     where run_id = ${runId}
       and status = 'Running'
       and lease_owner = ${owner}`.execute(db);
  return result.numAffectedRows === 1n;
}
