/**
 * Starting the job queue of this process, for `ifw serve` and `ifw worker`, on worker threads (their
 * kinds built in queue-thread.ts): on SQLite one per lane; on PostgreSQL one running every lane as
 * async loops over a worker pool of its own (so that imports never take the API's connections), woken
 * by this thread's LISTEN connection. Tests that substitute a clock or an importer (functions, which
 * cannot cross to a thread) get the PostgreSQL loops in this thread instead.
 *
 * The process registers itself in the workers list and heartbeats there while the queue runs
 * (job-queue/presence.ts), from this thread, with what the lanes say they run.
 */
import fs from 'node:fs';
import { systemClock, type Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { createLogger, type Logger } from '../core/logger.js';
import type { Metrics } from '../core/metrics.js';
import { threadEntry } from '../core/threads.js';
import { createActivity } from '../job-queue/activity.js';
import type { QueueHost } from '../job-queue/host.js';
import { lanesOf } from '../job-queue/jobs.js';
import { openWorkerPool, startInProcessHost, withWakeListener } from '../job-queue/postgres/in-process-host.js';
import { startPresence, type Presence } from '../job-queue/presence.js';
import { startThreadHost } from '../job-queue/thread-host.js';
import { openDatabase } from '../storage/database.js';
import type { Db } from '../storage/db.js';
import { jobKinds, type JobOptions } from './jobs.js';
import { withWorld } from './world.js';

export interface JobQueueOptions {
  readonly logger?: Logger;
  /** How long close() waits for the current work item before giving up on it (default 60 s). */
  readonly closeTimeoutMs?: number;
  /** Restarts of a thread after unexpected exits before giving up (default 5). */
  readonly maxRestarts?: number;
  /**
   * The clock of the heartbeats; on PostgreSQL also of the transitions, where another than the system
   * clock keeps the workers in this thread.
   */
  readonly clock?: Clock;
  /** PostgreSQL: the importer; tests may substitute one, which keeps the workers in this thread. */
  readonly importPayloadPg?: JobOptions['importPayloadPg'];
  /** The metrics of this thread, counted into by workers that run in it (PostgreSQL in tests). */
  readonly metrics?: Metrics;
  /** This thread's database handle, where the heartbeats are written; default: a connection of their own, closed with the queue. */
  readonly db?: Db;
}

/** The job queue of this process and its entry in the workers list. */
export interface ProcessQueue extends QueueHost {
  readonly presence: Presence;
}

/** The service's version, as the workers list shows it. */
export const VERSION = readVersion();

function readVersion(): string {
  try {
    const manifest = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export async function startJobQueue(config: Config, options: JobQueueOptions = {}): Promise<ProcessQueue> {
  const logger = options.logger ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  const host = await startHost(config, logger, options);
  const target = config.database.kind === 'postgres' ? { ...config.database, poolSize: 1 } : config.database;
  const own = options.db === undefined ? openDatabase(target, { busyTimeoutMs: 10_000 }) : undefined;
  const db = options.db ?? own!;
  let presence: Presence;
  try {
    presence = await startPresence({
      db,
      clock,
      logger: logger.child({ component: 'workers' }),
      config,
      roles: [...lanesOf(jobKinds(config)).keys()],
      version: VERSION,
      activity: () => host.activity(),
    });
  } catch (err) {
    await host.close();
    await own?.close();
    throw err;
  }
  return {
    presence,
    wake: () => host.wake(),
    get healthy() {
      return host.healthy;
    },
    get listening() {
      return host.listening;
    },
    activity: () => host.activity(),
    metrics: () => host.metrics(),
    async close() {
      await presence.close();
      await host.close();
      await own?.close();
    },
  };
}

async function startHost(config: Config, logger: Logger, options: JobQueueOptions): Promise<QueueHost> {
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
      const clock = options.clock ?? systemClock;
      const activity = createActivity(clock, [...lanesOf(jobs).keys()]);
      const metrics = options.metrics === undefined ? {} : { metrics: options.metrics };
      return startInProcessHost({ config, target, db, jobs, logger, clock, closeTimeoutMs, activity, ...metrics });
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
export async function startWorker(config: Config, options: JobQueueOptions & { readonly logger: Logger }): Promise<ProcessQueue> {
  await withWorld(config, { logger: options.logger, busyTimeoutMs: 10_000 }, () => Promise.resolve());
  return startJobQueue(config, options);
}
