/**
 * Any status → On Hold, by an administrator. Clearing the lease is what stops a run in progress: its
 * next heartbeat finds the entry no longer its own, and its finish changes nothing.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';

export async function holdEntry(db: Db, { id, now }: { readonly id: string; readonly now: Date }): Promise<boolean> {
  const result = await sql`
    update ifw_job_queue_entry
       set status = 'On Hold',
           lease_owner = null,
           lease_expires_at = null,
           updated_at = ${now.toISOString()}
     where id = ${id}`.execute(db);
  return result.numAffectedRows === 1n;
}
