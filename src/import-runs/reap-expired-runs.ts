/**
 * Running with an expired lease → Queued again (the worker died; another may try from page 1), or →
 * Failed once the run has been claimed maxAttempts times, so that an endpoint that kills its worker
 * every time cannot loop forever. One statement decides per row. Staged records live in the staging
 * worker's own connection (staged-records.ts): a worker that died took them with it, and a worker that
 * is alive but lost the lease drops them when it finds out (at its next staging write or finish, or
 * here when it reaps the run itself; on PostgreSQL the run's own client clears them as the run ends).
 */
import { sql } from 'kysely';
import type { Database } from '../storage/database.js';
import { asDb } from '../storage/db.js';
import { enqueueEvents } from '../webhooks/outbox.js';
import { clearStaged } from './staged.js';

export interface ReapRunsArgs {
  readonly now: Date;
  readonly maxAttempts: number;
}

export interface ReapedRuns {
  readonly requeued: readonly string[];
  readonly failed: readonly string[];
}

export async function reapExpiredRuns(db: Database, { now, maxAttempts }: ReapRunsArgs): Promise<ReapedRuns> {
  const at = now.toISOString();
  const reaped = await db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ run_id: string; status: string }>`
      update ifw_import_run
         set status = case when attempts < ${maxAttempts} then 'Queued' else 'Failed' end,
             error_message = case when attempts < ${maxAttempts} then error_message
                             else 'the run was interrupted ' || attempts || ' times (the worker stopped before finishing and its lease expired); not retried' end,
             ended_at = case when attempts < ${maxAttempts} then ended_at else ${at} end,
             lease_owner = null,
             lease_expires_at = null
       where status = 'Running'
         and lease_expires_at < ${at}
      returning run_id, status`.execute(trx);
    const failed = rows.filter((r) => r.status === 'Failed').map((r) => r.run_id);
    await enqueueEvents(asDb(trx, db.dialect), 'run', 'Failed', failed, now);
    return { requeued: rows.filter((r) => r.status === 'Queued').map((r) => r.run_id), failed };
  });
  // When this very connection staged one of them (its worker lost the lease but lives on), drop those
  // records. On PostgreSQL staging has a client of its own, which the run clears when it ends.
  if (db.dialect === 'sqlite') for (const runId of [...reaped.requeued, ...reaped.failed]) clearStaged(db, runId);
  return reaped;
}
