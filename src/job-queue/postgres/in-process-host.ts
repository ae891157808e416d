/**
 * The job queue on PostgreSQL, in this process's event loop: no worker threads. pg is asynchronous, so
 * an import waiting on the server blocks nothing, and a thread per lane would only add a second pool
 * and message passing. The lanes stay, as async loops over one worker pool:
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
import type { PostgresDatabase } from '../../storage/database.js';
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

export async function startInProcessHost(options: InProcessHostOptions): Promise<QueueHost> {
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
  let listener: WakeListener;
  try {
    listener = await listenForWakes(options.target, wakeAll, logger);
  } catch (err) {
    await db.close();
    throw err;
  }
  for (const l of loops) l.start();
  for (const r of runners) r.start();
  logger.info(
    { concurrency: config.workerConcurrency, owners: loops.flatMap((l) => l.owners) },
    'job queue running in this process (PostgreSQL: async loops, no worker threads)',
  );

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    const stopped = Promise.all([...loops.map((l) => l.stop()), ...runners.map((r) => r.stop())]);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), options.closeTimeoutMs)));
    const result = await Promise.race([stopped.then(() => 'stopped' as const), timedOut]);
    clearTimeout(timer);
    await listener.close();
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
    get listening() {
      return listener.listening;
    },
    close() {
      closing ??= close();
      return closing;
    },
  };
}
