/**
 * The job queue as async loops in one event loop, over one database handle: a job queue worker
 * thread's (main/queue-thread.ts; on SQLite one lane's, on PostgreSQL every lane's), or, in tests that
 * substitute a clock or an importer, the test's own.
 *
 * - each lane's kinds: a job queue runner claiming their entries (runner.ts), so a REST import fetching
 *   pages for minutes never holds up another lane;
 * - where claimers can skip each other's locked rows (PostgreSQL), each kind with a concurrent drain
 *   (the Bulk Import Processor): workerConcurrency loops instead (postgres/drain-loops.ts).
 */
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { Metrics } from '../core/metrics.js';
import type { Activity } from './activity.js';
import type { Database } from '../storage/database.js';
import { capabilitiesOf } from '../storage/db.js';
import type { QueueHost } from './host.js';
import { lanesOf, type JobKind } from './jobs.js';
import { createDrainLoops } from './postgres/drain-loops.js';
import { createQueueRunner } from './runner.js';

export interface LoopHostOptions {
  readonly config: Config;
  /** The workers' handle; the host closes it when it closes. */
  readonly db: Database;
  readonly jobs: readonly JobKind[];
  readonly logger: Logger;
  readonly clock: Clock;
  readonly closeTimeoutMs: number;
  /** Where the lanes say what they run now (the workers list). */
  readonly activity?: Activity;
  /** The thread's metrics, handed to the kinds. */
  readonly metrics?: Metrics;
}

/** The loops start at once; close() stops them and closes the database handle. */
export function startLoopHost(options: LoopHostOptions): QueueHost {
  const { config, db, clock } = options;
  const logger = options.logger.child({ component: 'job-queue-host' });
  const extras = {
    ...(options.activity === undefined ? {} : { activity: options.activity }),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  };
  const concurrent = (job: JobKind) => capabilitiesOf(db).skipLocked && job.concurrent !== undefined && job.wakes !== undefined;
  const loops = options.jobs.flatMap((job) =>
    !concurrent(job)
      ? []
      : [
          createDrainLoops({
            db,
            config,
            clock,
            logger: options.logger.child({ component: job.kind }),
            entry: job.wakes!,
            drain: job.concurrent!,
            lane: job.lane,
            ...extras,
          }),
        ],
  );
  const runners = [...lanesOf(options.jobs.filter((job) => !concurrent(job)))].map(([lane, jobs]) =>
    createQueueRunner({ db, config, clock, logger: options.logger.child({ lane }), jobs, onlyTheseKinds: true, ...extras }),
  );
  const wakeAll = (): void => {
    for (const l of loops) l.wake();
    for (const r of runners) r.wake().catch((err: unknown) => logger.error({ err }, 'job queue wake failed'));
  };
  for (const l of loops) l.start();
  for (const r of runners) r.start();
  logger.info(
    { lanes: [...lanesOf(options.jobs).keys()], concurrency: config.workerConcurrency, owners: loops.flatMap((l) => l.owners) },
    'job queue running',
  );

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    const stopped = Promise.all([...loops.map((l) => l.stop()), ...runners.map((r) => r.stop())]);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), options.closeTimeoutMs)));
    const result = await Promise.race([stopped.then(() => 'stopped' as const), timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') {
      // The work in progress cannot finish in time: the drains' items go back to their queue now (the
      // rest when their leases expire), and their transactions (whose fenced finish now fails) die
      // with the connections.
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
        'job queue workers did not stop in time; their work goes back to its queue',
      );
      // Do not wait for the pool's end: it waits for the clients the unfinished imports still hold.
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
    activity: () => options.activity?.snapshot() ?? [],
    metrics: () => Promise.resolve([]),
    close() {
      closing ??= close();
      return closing;
    },
  };
}
