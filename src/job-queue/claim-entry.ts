/**
 * A due job queue entry → In Process under a lease, in one statement. Due means Ready or Error with
 * its next run time reached, or In Process with an expired lease (its runner died). On Hold never is.
 * next_run_at is cleared while the entry runs: a "run now" that arrives meanwhile sets it again, and
 * the run's finish keeps it instead of planning the next recurrence. Schedulers of several processes
 * (PostgreSQL) each claim a different entry: the subquery locks its pick (see claimLock).
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { addMs, claimLock, type ClaimedEntry } from './model.js';

export interface ClaimEntryArgs {
  readonly owner: string;
  readonly now: Date;
  readonly leaseMs: number;
  /** Only entries of these kinds (a runner's lane); all kinds when omitted. */
  readonly kinds?: readonly string[];
}

export async function claimNextDueEntry(db: Db, { owner, now, leaseMs, kinds }: ClaimEntryArgs): Promise<ClaimedEntry | undefined> {
  const at = now.toISOString();
  const ofKinds = kinds === undefined ? sql`1 = 1` : sql`kind in (${sql.join(kinds)})`;
  const { rows } = await sql<{ id: string; kind: string; recurrence_seconds: number; parameters: string }>`
    update ifw_job_queue_entry
       set status = 'In Process',
           lease_owner = ${owner},
           lease_expires_at = ${addMs(now, leaseMs)},
           last_run_at = ${at},
           next_run_at = null,
           updated_at = ${at}
     where id = (select id
                   from ifw_job_queue_entry
                  where ((status in ('Ready', 'Error') and next_run_at <= ${at})
                      or (status = 'In Process' and lease_expires_at < ${at}))
                    and ${ofKinds}
                  order by next_run_at, id
                  limit 1
                  ${claimLock(db)})
       and ((status in ('Ready', 'Error') and next_run_at <= ${at})
            or (status = 'In Process' and lease_expires_at < ${at}))
    returning id, kind, recurrence_seconds, parameters`.execute(db);
  const row = rows[0];
  return row === undefined
    ? undefined
    : { id: row.id, kind: row.kind, recurrenceSeconds: row.recurrence_seconds, parameters: row.parameters };
}
