/**
 * The job queue on PostgreSQL, in this process's event loop: no worker threads. pg is asynchronous, so
 * an import waiting on the server blocks nothing, and a thread per lane would only add a second pool
 * and message passing. The lanes stay, as async loops over one worker pool:
 *
 * - the Bulk Import Processor: workerConcurrency claim loops (request-loops.ts);
 * - the bulk lane's other entries (retention cleanup) and the imports lane (import runs, endpoint
 *   schedules), each a job queue runner claiming entries, so a REST import fetching pages for minutes
 *   never holds up retention or bulk requests;
 * - one LISTEN connection that wakes all of them when any process NOTIFYs.
 *
 * Connections: the worker pool has workerConcurrency + 3 (an import each, the lease renewals and claims,
 * the two entry runners' statements), plus the LISTEN connection.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { Config, PostgresTarget } from '../../core/config.js';
import { openDatabase } from '../../storage/database.js';
import type { QueueHost } from '../host.js';
import type { JobKind } from '../model.js';
import type { ImportFnPg } from '../../bulk-import/processor.js';
import { createRequestLoops } from '../../bulk-import/postgres/request-loops.js';
import { createQueueRunner } from '../runner.js';
import { listenForWakes, type WakeListener } from './wake-channel.js';

/** The entry kinds of each runner; bulkImportProcessor is the request loops' (see request-loops.ts). */
const ENTRY_LANES: Readonly<Record<string, readonly JobKind[]>> = {
  bulk: ['retentionCleanup'],
  imports: ['importRunProcessor', 'endpointImport'],
};

export interface InProcessHostOptions {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly closeTimeoutMs: number;
  readonly importPayloadPg?: ImportFnPg;
}

export async function startInProcessHost(config: Config, target: PostgresTarget, options: InProcessHostOptions): Promise<QueueHost> {
  const logger = options.logger.child({ component: 'job-queue-host' });
  const db = openDatabase(
    { ...target, poolSize: config.workerConcurrency + 3 },
    {
      onIdleClientError: (err) =>
        logger.warn({ err }, 'a pooled PostgreSQL connection of the workers failed while idle; it is replaced when needed'),
    },
  );
  const { clock } = options;
  const requests = createRequestLoops({ db, config, clock, logger: options.logger, importPayloadPg: options.importPayloadPg });
  const runners = Object.entries(ENTRY_LANES).map(([lane, kinds]) =>
    createQueueRunner({ db, config, clock, logger: options.logger.child({ lane }), kinds }),
  );
  const wakeAll = (): void => {
    requests.wake();
    for (const r of runners) r.wake().catch((err: unknown) => logger.error({ err }, 'job queue wake failed'));
  };
  let listener: WakeListener;
  try {
    listener = await listenForWakes(target, wakeAll, logger);
  } catch (err) {
    await db.close();
    throw err;
  }
  requests.start();
  for (const r of runners) r.start();
  logger.info(
    { concurrency: config.workerConcurrency, owners: requests.owners },
    'job queue running in this process (PostgreSQL: async loops, no worker threads)',
  );

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    const stopped = Promise.all([requests.stop(), ...runners.map((r) => r.stop())]);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), options.closeTimeoutMs)));
    const result = await Promise.race([stopped.then(() => 'stopped' as const), timedOut]);
    clearTimeout(timer);
    await listener.close();
    if (result === 'timeout') {
      // The imports in progress cannot finish in time: their requests go back to Pending now, and
      // their transactions (whose fenced finish now fails) die with the connections.
      const released = await requests.release().catch((err: unknown) => {
        logger.error({ err }, 'could not release the leases; the requests are retried once they expire');
        return [];
      });
      logger.warn(
        { closeTimeoutMs: options.closeTimeoutMs, released },
        'job queue workers did not stop in time; their requests were returned to Pending',
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
