/**
 * In Process → Ready after a successful run, fenced by the runner's lease token (an administrator
 * who put the entry On Hold meanwhile cleared the lease, so the entry stays On Hold). The next run is
 * the one asked for during this run, if any, else now + recurrence.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { addMs } from './model.js';

export interface FinishEntryArgs {
  readonly id: string;
  readonly owner: string;
  readonly now: Date;
  readonly recurrenceSeconds: number;
}

export async function finishEntryRun(db: Db, { id, owner, now, recurrenceSeconds }: FinishEntryArgs): Promise<boolean> {
  const at = now.toISOString();
  const result = await sql`
    update ifw_job_queue_entry
       set status = 'Ready',
           next_run_at = coalesce(next_run_at, ${addMs(now, recurrenceSeconds * 1000)}),
           last_ended_at = ${at},
           last_error = '',
           lease_owner = null,
           lease_expires_at = null,
           updated_at = ${at}
     where id = ${id}
       and status = 'In Process'
       and lease_owner = ${owner}`.execute(db);
  return result.numAffectedRows === 1n;
}
