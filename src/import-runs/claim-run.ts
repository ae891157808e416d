/**
 * Queued → Running: a worker takes the oldest Queued run (or the one it names) under a lease, in one
 * statement. The subquery picks the candidate and the outer `status = 'Queued'` re-checks it, so two
 * workers racing for the same run cannot both win. Counters restart: a run taken over after an
 * interrupted attempt fetches again from page 1.
 *
 * The one difference between the dialects (capability `skipLocked`): PostgreSQL's claimers run
 * concurrently (several workers, several hosts), so the subquery locks its candidate and skips rows
 * another claimer holds, and each claimer takes a different run instead of queueing behind the first.
 * SQLite has one writer at a time.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { addMs, claimLock } from '../job-queue/model.js';
import type { ClaimedRun } from './model.js';

export interface ClaimRunArgs {
  /** The lease token: every later write by this worker is fenced by it. */
  readonly owner: string;
  readonly now: Date;
  readonly leaseMs: number;
  /** Claim this run only (the CLI runs the one it queued); default: the oldest Queued run. */
  readonly runId?: string;
}

interface ClaimedRow {
  run_id: string;
  endpoint_code: string;
  integration_sorting_order: number;
  attempts: number;
  lease_owner: string;
  lease_expires_at: string;
  started_at: string;
}

export async function claimNextRun(db: Db, { owner, now, leaseMs, runId }: ClaimRunArgs): Promise<ClaimedRun | undefined> {
  const only = runId === undefined ? sql`` : sql`and run_id = ${runId}`;
  const { rows } = await sql<ClaimedRow>`
    update ifw_import_run
       set status = 'Running',
           lease_owner = ${owner},
           lease_expires_at = ${addMs(now, leaseMs)},
           attempts = attempts + 1,
           started_at = ${now.toISOString()},
           pages_fetched = 0,
           records_fetched = 0
     where run_id = (select run_id
                       from ifw_import_run
                      where status = 'Queued' ${only}
                      order by queued_at, run_id
                      limit 1
                        ${claimLock(db)})
       and status = 'Queued'
    returning run_id, endpoint_code, integration_sorting_order, attempts, lease_owner, lease_expires_at, started_at`.execute(db);
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    runId: row.run_id,
    endpointCode: row.endpoint_code,
    integrationSortingOrder: row.integration_sorting_order,
    attempts: row.attempts,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    startedAt: row.started_at,
  };
}
