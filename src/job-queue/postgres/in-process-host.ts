/**
 * The job queue on PostgreSQL: the workers' own pool, and the LISTEN connection that wakes them when any
 * process NOTIFYs. The workers are async loops (../loop-host.ts): in production those of one worker
 * thread (main/queue-thread.ts, started by main/job-queue.ts), in tests that substitute a clock or an
 * importer those of the test.
 *
 * Connections: the worker pool needs workerConcurrency + 3 (an import each, the lease renewals and
 * claims, the two entry runners' statements), plus the LISTEN connection.
 */
import type { Logger } from 'pino';
import type { Config, PostgresTarget } from '../../core/config.js';
import { openDatabase, type PostgresDatabase } from '../../storage/database.js';
import type { QueueHost } from '../host.js';
import { startLoopHost, type LoopHostOptions } from '../loop-host.js';
import { listenForWakes, type WakeListener } from './wake-channel.js';

/** The connections the workers' pool needs. */
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

/** The workers (in this event loop) and the LISTEN connection that wakes them. */
export async function startInProcessHost(options: LoopHostOptions & { readonly target: PostgresTarget }): Promise<QueueHost> {
  return withWakeListener(startLoopHost(options), options.target, options.logger.child({ component: 'job-queue-host' }));
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
    activity: () => host.activity(),
    metrics: () => host.metrics(),
    async close() {
      await listener.close();
      await host.close();
    },
  };
}
