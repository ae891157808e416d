/**
 * What the job queue runs, declared by the features and listed once by the composition root
 * (src/main/jobs.ts), as graphile-worker takes a task list. The queue itself knows no feature: it
 * claims due entries of the kinds it was given and calls their `run`.
 *
 * A kind belongs to a lane. On SQLite each lane is a worker thread with its own connection; on
 * PostgreSQL each lane is a runner in the event loop. Either way a slow lane (a REST import waiting on
 * an API for minutes) never holds up the work of another (bulk import requests).
 */
import type { Db } from '../storage/db.js';
import type { ClaimedEntry } from './model.js';
import type { WorkerContext } from './worker-context.js';

/** What a kind's `run` is given for one claimed entry. */
export interface JobContext extends WorkerContext {
  readonly entry: ClaimedEntry;
  /** Aborted when the runner stops: work that waits on the outside world gives up and is retried later. */
  readonly signal: AbortSignal;
  /** Between work items: false once the runner stops or the entry is put On Hold. */
  readonly keepGoing: () => Promise<boolean>;
}

/**
 * PostgreSQL: the kind's entry is a switch, not a lock. Claimed by one process, it would let one
 * machine work at a time; instead every worker process drains the kind's work in
 * `workerConcurrency` loops of its own while the entry is not On Hold, and the work items' own leases
 * keep the loops apart.
 */
export interface ConcurrentDrain {
  /** Drains until nothing is left or `keepGoing` says stop. */
  drain(ctx: WorkerContext): Promise<unknown>;
  /** Returns the work items still held by these lease owners (an exit that cannot wait for them). */
  release(db: Db, owners: readonly string[]): Promise<readonly string[]>;
}

export interface JobKind {
  /** As stored in `ifw_job_queue_entry.kind`. */
  readonly kind: string;
  readonly lane: string;
  /** Runs one claimed entry to its end; a throw puts the entry in Error until its next run time. */
  run(ctx: JobContext): Promise<void>;
  /** The entry a wake makes due at once (after a submission, a queued run): work waits for this kind. */
  readonly wakes?: string;
  /** PostgreSQL only: drained by loops in every worker process instead of by the entry's runner (needs `wakes`). */
  readonly concurrent?: ConcurrentDrain;
}

/** The lanes of a job list, each with its kinds, in the order the list names them. */
export function lanesOf(jobs: readonly JobKind[]): ReadonlyMap<string, readonly JobKind[]> {
  const lanes = new Map<string, JobKind[]>();
  for (const job of jobs) lanes.set(job.lane, [...(lanes.get(job.lane) ?? []), job]);
  return lanes;
}
