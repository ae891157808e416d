/**
 * Extends a runner's lease on an In Process entry. A long drain calls it between requests: false
 * means the entry was put On Hold (or taken over), and the run should stop.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { addMs } from './model.js';

export interface HeartbeatEntryArgs {
  readonly id: string;
  readonly owner: string;
  readonly now: Date;
  readonly leaseMs: number;
}

export async function heartbeatEntry(db: Db, { id, owner, now, leaseMs }: HeartbeatEntryArgs): Promise<boolean> {
  const result = await sql`
    update ifw_job_queue_entry
       set lease_expires_at = ${addMs(now, leaseMs)}
     where id = ${id}
       and status = 'In Process'
       and lease_owner = ${owner}`.execute(db);
  return result.numAffectedRows === 1n;
}
