/**
 * On Hold or Error → Ready, by an administrator. An entry In Process is already active and is left
 * as it is. An entry whose run time passed while it was on hold runs at once.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';

export async function readyEntry(db: Db, { id, now }: { readonly id: string; readonly now: Date }): Promise<boolean> {
  const at = now.toISOString();
  const result = await sql`
    update ifw_job_queue_entry
       set status = 'Ready',
           next_run_at = coalesce(next_run_at, ${at}),
           updated_at = ${at}
     where id = ${id}
       and status in ('Ready', 'On Hold', 'Error')`.execute(db);
  return result.numAffectedRows === 1n;
}
