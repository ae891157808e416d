/**
 * Changes how often an entry runs. A shorter interval pulls the next run in (it is never later than
 * now + the new interval); a longer one leaves the planned next run alone.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { addMs } from './model.js';

export interface SetRecurrenceArgs {
  readonly id: string;
  readonly now: Date;
  readonly recurrenceSeconds: number;
}

export async function setEntryRecurrence(db: Db, { id, now, recurrenceSeconds }: SetRecurrenceArgs): Promise<boolean> {
  const latest = addMs(now, recurrenceSeconds * 1000);
  const result = await sql`
    update ifw_job_queue_entry
       set recurrence_seconds = ${recurrenceSeconds},
           next_run_at = case when next_run_at > ${latest} then ${latest} else next_run_at end,
           updated_at = ${now.toISOString()}
     where id = ${id}`.execute(db);
  return result.numAffectedRows === 1n;
}
