/**
 * In Process → Error when a run threw, fenced by the runner's lease token. An entry in Error is
 * retried at its next run time (now + recurrence); a successful run makes it Ready again.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { addMs } from './model.js';

export interface FailEntryArgs {
  readonly id: string;
  readonly owner: string;
  readonly now: Date;
  readonly recurrenceSeconds: number;
  readonly error: string;
}

export async function failEntryRun(db: Db, { id, owner, now, recurrenceSeconds, error }: FailEntryArgs): Promise<boolean> {
  const at = now.toISOString();
  const result = await sql`
    update ifw_job_queue_entry
       set status = 'Error',
           next_run_at = coalesce(next_run_at, ${addMs(now, recurrenceSeconds * 1000)}),
           last_ended_at = ${at},
           last_error = ${error},
           lease_owner = null,
           lease_expires_at = null,
           updated_at = ${at}
     where id = ${id}
       and status = 'In Process'
       and lease_owner = ${owner}`.execute(db);
  return result.numAffectedRows === 1n;
}
