/**
 * Starting the job queue of this process, for `ifw serve` and `ifw worker`: worker threads (one per
 * lane, each building its lane's kinds in queue-thread.ts) on SQLite; on PostgreSQL async loops over a
 * worker pool of its own, so that imports never take the API's connections.
 */
import { systemClock, type Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { createLogger, type Logger } from '../core/logger.js';
import { threadEntry } from '../core/threads.js';
import type { QueueHost } from '../job-queue/host.js';
import { lanesOf } from '../job-queue/jobs.js';
import { startInProcessHost, workerPoolSize } from '../job-queue/postgres/in-process-host.js';
import { startThreadHost } from '../job-queue/sqlite/thread-host.js';
import { openDatabase } from '../storage/database.js';
import { jobKinds, type JobOptions } from './jobs.js';
import { withWorld } from './world.js';

export interface JobQueueOptions {
  readonly logger?: Logger;
  /** How long close() waits for the current work item before giving up on it (default 60 s). */
  readonly closeTimeoutMs?: number;
  /** SQLite: restarts of a lane's thread after unexpected exits before giving up (default 5). */
  readonly maxRestarts?: number;
  /** PostgreSQL (in-process workers): the clock of the transitions; worker threads always use the system clock. */
  readonly clock?: Clock;
  /** PostgreSQL: the importer; tests may substitute one (worker threads always run the real one). */
  readonly importPayloadPg?: JobOptions['importPayloadPg'];
}

export async function startJobQueue(config: Config, options: JobQueueOptions = {}): Promise<QueueHost> {
  const logger = options.logger ?? createLogger(config);
  const closeTimeoutMs = options.closeTimeoutMs ?? 60_000;
  const target = config.database;
  if (target.kind === 'postgres') {
    const db = openDatabase(
      { ...target, poolSize: workerPoolSize(config) },
      {
        onIdleClientError: (err) =>
          logger.warn({ err }, 'a pooled PostgreSQL connection of the workers failed while idle; it is replaced when needed'),
      },
    );
    const jobs = jobKinds(config, { importPayloadPg: options.importPayloadPg });
    return startInProcessHost({ config, target, db, jobs, logger, clock: options.clock ?? systemClock, closeTimeoutMs });
  }
  if (config.workerConcurrency > 1) {
    logger.warn(
      { workerConcurrency: config.workerConcurrency },
      'IFW_WORKER_CONCURRENCY > 1 changes nothing on SQLite (one writer): one thread per lane',
    );
  }
  return startThreadHost({
    config,
    lanes: [...lanesOf(jobKinds(config)).keys()],
    entry: threadEntry(import.meta.url, 'queue-thread'),
    logger,
    closeTimeoutMs,
    maxRestarts: options.maxRestarts ?? 5,
  });
}

/** `ifw worker`: the database migrated (safe with many processes: the migrator takes a lock), then the job queue. */
export async function startWorker(config: Config, options: JobQueueOptions & { readonly logger: Logger }): Promise<QueueHost> {
  await withWorld(config, { logger: options.logger, busyTimeoutMs: 10_000 }, () => Promise.resolve());
  return startJobQueue(config, options);
}
