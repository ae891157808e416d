/**
 * A wake (a new submission, a reset request) makes an active entry due now. Active means Ready, or
 * In Process (the running one then runs once more). On Hold stays on hold, and an entry in Error
 * waits for its retry time, so a burst of submissions cannot hammer a failing processor.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';

export async function wakeEntry(db: Db, { id, now }: { readonly id: string; readonly now: Date }): Promise<boolean> {
  const at = now.toISOString();
  const result = await sql`
    update ifw_job_queue_entry
       set next_run_at = ${at}
     where id = ${id}
       and status in ('Ready', 'In Process')
       and (next_run_at is null or next_run_at > ${at})`.execute(db);
  return result.numAffectedRows === 1n;
}
