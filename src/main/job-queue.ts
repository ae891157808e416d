/**
 * Starting the job queue of this process, for `ifw serve` and `ifw worker`, on worker threads (their
 * kinds built in queue-thread.ts): on SQLite one per lane; on PostgreSQL one running every lane as
 * async loops over a worker pool of its own (so that imports never take the API's connections), woken
 * by this thread's LISTEN connection. Tests that substitute a clock or an importer (functions, which
 * cannot cross to a thread) get the PostgreSQL loops in this thread instead.
 */
import { systemClock, type Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { createLogger, type Logger } from '../core/logger.js';
import { threadEntry } from '../core/threads.js';
import type { QueueHost } from '../job-queue/host.js';
import { lanesOf } from '../job-queue/jobs.js';
import { openWorkerPool, startInProcessHost, withWakeListener } from '../job-queue/postgres/in-process-host.js';
import { startThreadHost } from '../job-queue/thread-host.js';
import { jobKinds, type JobOptions } from './jobs.js';
import { withWorld } from './world.js';

export interface JobQueueOptions {
  readonly logger?: Logger;
  /** How long close() waits for the current work item before giving up on it (default 60 s). */
  readonly closeTimeoutMs?: number;
  /** Restarts of a thread after unexpected exits before giving up (default 5). */
  readonly maxRestarts?: number;
  /** PostgreSQL: the clock of the transitions; another than the system clock keeps the workers in this thread. */
  readonly clock?: Clock;
  /** PostgreSQL: the importer; tests may substitute one, which keeps the workers in this thread. */
  readonly importPayloadPg?: JobOptions['importPayloadPg'];
}

export async function startJobQueue(config: Config, options: JobQueueOptions = {}): Promise<QueueHost> {
  const logger = options.logger ?? createLogger(config);
  const closeTimeoutMs = options.closeTimeoutMs ?? 60_000;
  const target = config.database;
  const threads = (lanes: readonly (string | null)[]) =>
    startThreadHost({
      config,
      lanes,
      entry: threadEntry(import.meta.url, 'queue-thread'),
      logger,
      closeTimeoutMs,
      maxRestarts: options.maxRestarts ?? 5,
    });
  if (target.kind === 'postgres') {
    const inThisThread = (options.clock !== undefined && options.clock !== systemClock) || options.importPayloadPg !== undefined;
    if (inThisThread) {
      const db = openWorkerPool(config, target, logger);
      const jobs = jobKinds(config, { importPayloadPg: options.importPayloadPg });
      return startInProcessHost({ config, target, db, jobs, logger, clock: options.clock ?? systemClock, closeTimeoutMs });
    }
    return withWakeListener(await threads([null]), target, logger.child({ component: 'job-queue-host' }));
  }
  if (config.workerConcurrency > 1) {
    logger.warn(
      { workerConcurrency: config.workerConcurrency },
      'IFW_WORKER_CONCURRENCY > 1 changes nothing on SQLite (one writer): one thread per lane',
    );
  }
  return threads([...lanesOf(jobKinds(config)).keys()]);
}

/** `ifw worker`: the database migrated (safe with many processes: the migrator takes a lock), then the job queue. */
export async function startWorker(config: Config, options: JobQueueOptions & { readonly logger: Logger }): Promise<QueueHost> {
  await withWorld(config, { logger: options.logger, busyTimeoutMs: 10_000 }, () => Promise.resolve());
  return startJobQueue(config, options);
}
