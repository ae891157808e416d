/** An administrator's "run now": the entry becomes due at once, whatever its status but On Hold. */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';

/** False when no entry was changed: it does not exist or is On Hold. */
export async function runEntryNow(db: Db, { id, now }: { readonly id: string; readonly now: Date }): Promise<boolean> {
  const at = now.toISOString();
  const result = await sql`
    update ifw_job_queue_entry
       set next_run_at = ${at},
           updated_at = ${at}
     where id = ${id}
       and status <> 'On Hold'`.execute(db);
  return result.numAffectedRows === 1n;
}
