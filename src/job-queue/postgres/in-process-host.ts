/**
 * The job queue on PostgreSQL as async loops in one event loop: in production that of one worker
 * thread (main/queue-thread.ts, started by main/job-queue.ts), in tests that substitute a clock or an
 * importer that of the test. pg is asynchronous, so an import waiting on the server blocks nothing,
 * and the lanes are async loops over one worker pool:
 *
 * - each kind with a concurrent drain (the Bulk Import Processor): workerConcurrency loops (drain-loops.ts);
 * - each lane's other kinds (retention cleanup; import runs and endpoint schedules), a job queue runner
 *   claiming their entries, so a REST import fetching pages for minutes never holds up another lane;
 * - one LISTEN connection that wakes all of them when any process NOTIFYs.
 *
 * Connections: the worker pool needs workerConcurrency + 3 (an import each, the lease renewals and
 * claims, the two entry runners' statements), plus the LISTEN connection.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { Config, PostgresTarget } from '../../core/config.js';
import { openDatabase, type PostgresDatabase } from '../../storage/database.js';
import type { QueueHost } from '../host.js';
import { lanesOf, type JobKind } from '../jobs.js';
import { createQueueRunner } from '../runner.js';
import { createDrainLoops } from './drain-loops.js';
import { listenForWakes, type WakeListener } from './wake-channel.js';

export interface InProcessHostOptions {
  readonly config: Config;
  readonly target: PostgresTarget;
  /** The workers' pool (workerConcurrency + 3 connections); the host closes it when it closes. */
  readonly db: PostgresDatabase;
  readonly jobs: readonly JobKind[];
  readonly logger: Logger;
  readonly clock: Clock;
  readonly closeTimeoutMs: number;
}

/** The connections the in-process host's pool needs. */
export const workerPoolSize = (config: Pick<Config, 'workerConcurrency'>): number => config.workerConcurrency + 3;

/** The workers' own pool (workerPoolSize connections), so that imports never take the API's. */
export function openWorkerPool(config: Config, target: PostgresTarget, logger: Logger): PostgresDatabase {
  return openDatabase(
    { ...target, poolSize: workerPoolSize(config) },
    {
      onIdleClientError: (err) =>
        logger.warn({ err }, 'a pooled PostgreSQL connection of the workers failed while idle; it is replaced when needed'),
    },
  );
}

/** The workers and the LISTEN connection that wakes them. */
export async function startInProcessHost(options: InProcessHostOptions): Promise<QueueHost> {
  return withWakeListener(startPostgresWorkers(options), options.target, options.logger.child({ component: 'job-queue-host' }));
}

/** `host`, woken whenever any process NOTIFYs, through a LISTEN connection of its own that closes with it. */
export async function withWakeListener(host: QueueHost, target: PostgresTarget, logger: Logger): Promise<QueueHost> {
  let listener: WakeListener;
  try {
    listener = await listenForWakes(target, () => host.wake(), logger);
  } catch (err) {
    await host.close();
    throw err;
  }
  return {
    wake: () => host.wake(),
    get healthy() {
      return host.healthy;
    },
    get listening() {
      return listener.listening;
    },
    async close() {
      await listener.close();
      await host.close();
    },
  };
}

/**
 * The workers without a LISTEN connection: a worker thread's (whoever starts the thread listens and
 * forwards the wakes). They start at once; close() stops them and closes the pool.
 */
export function startPostgresWorkers(options: Omit<InProcessHostOptions, 'target'>): QueueHost {
  const { config, db, clock } = options;
  const logger = options.logger.child({ component: 'job-queue-host' });
  const loops = options.jobs.flatMap((job) =>
    job.concurrent === undefined || job.wakes === undefined
      ? []
      : [
          createDrainLoops({
            db,
            config,
            clock,
            logger: options.logger.child({ component: job.kind }),
            entry: job.wakes,
            drain: job.concurrent,
          }),
        ],
  );
  const entryJobs = options.jobs.filter((job) => job.concurrent === undefined);
  const runners = [...lanesOf(entryJobs)].map(([lane, jobs]) =>
    createQueueRunner({ db, config, clock, logger: options.logger.child({ lane }), jobs, onlyTheseKinds: true }),
  );
  const wakeAll = (): void => {
    for (const l of loops) l.wake();
    for (const r of runners) r.wake().catch((err: unknown) => logger.error({ err }, 'job queue wake failed'));
  };
  for (const l of loops) l.start();
  for (const r of runners) r.start();
  logger.info(
    { concurrency: config.workerConcurrency, owners: loops.flatMap((l) => l.owners) },
    'job queue running (PostgreSQL: async loops over one pool)',
  );

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    const stopped = Promise.all([...loops.map((l) => l.stop()), ...runners.map((r) => r.stop())]);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), options.closeTimeoutMs)));
    const result = await Promise.race([stopped.then(() => 'stopped' as const), timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') {
      // The work in progress cannot finish in time: its items go back to their queue now, and their
      // transactions (whose fenced finish now fails) die with the connections.
      const released = (
        await Promise.all(
          loops.map((l) =>
            l.release().catch((err: unknown) => {
              logger.error({ err }, 'could not release the leases; the work is retried once they expire');
              return [];
            }),
          ),
        )
      ).flat();
      logger.warn(
        { closeTimeoutMs: options.closeTimeoutMs, released },
        'job queue workers did not stop in time; their work was returned to its queue',
      );
      // Do not wait for pool.end(): it waits for the clients the unfinished imports still hold.
      void db.close().catch(() => undefined);
      return;
    }
    await db.close();
  }

  return {
    wake: wakeAll,
    get healthy() {
      return closing === undefined;
    },
    close() {
      closing ??= close();
      return closing;
    },
  };
}
