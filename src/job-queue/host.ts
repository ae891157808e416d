/**
 * Starts the job queue of this process. On PostgreSQL it runs in this event loop (in-process-host.ts).
 * On SQLite it runs on worker threads, off the HTTP event loop: better-sqlite3 is synchronous and an
 * import of a large payload holds its thread for as long as it takes. There are two lanes, each a
 * thread with its own connection running only its job kinds, so that a REST import fetching pages for
 * minutes never keeps a bulk import request waiting. A worker that dies is restarted with backoff a
 * few times; while it is down `healthy` is false (the readiness check reports it).
 */
import { Worker } from 'node:worker_threads';
import { systemClock, type Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { threadEntry } from '../core/threads.js';
import { createLogger, type Logger } from '../core/logger.js';
import type { HostMessage, WorkerData, WorkerMessage } from './messages.js';
import { startInProcessHost } from './postgres/in-process-host.js';
import type { JobKind } from './model.js';
import type { ImportFnPg } from '../bulk-import/processor.js';

/** Which job kinds run on which thread. */
export const LANES: Readonly<Record<string, readonly JobKind[]>> = {
  bulk: ['bulkImportProcessor', 'retentionCleanup'],
  imports: ['importRunProcessor', 'endpointImport'],
};

export interface QueueHost {
  /** Asks the workers to run the Bulk Import Processor and the Import Run Processor now (if their entries are Ready). */
  wake(): void;
  readonly healthy: boolean;
  /**
   * PostgreSQL: whether the LISTEN connection that brings wake-ups from other processes is up (while it
   * reconnects, workers start at their scheduler tick). Undefined on SQLite, where wake-ups stay in-process.
   */
  readonly listening?: boolean;
  /** Lets the current request finish, then stops the worker (terminating it after closeTimeoutMs). */
  close(): Promise<void>;
}

export interface QueueHostOptions {
  readonly logger?: Logger;
  /** How long close() waits for the current request before terminating the thread (default 60 s). */
  readonly closeTimeoutMs?: number;
  /** Restarts after unexpected exits before giving up (default 5); the count resets after a minute of running. */
  readonly maxRestarts?: number;
  /** PostgreSQL (in-process workers): the clock of the transitions (worker threads always use the system clock). */
  readonly clock?: Clock;
  /** PostgreSQL: the importer; tests may substitute one. */
  readonly importPayloadPg?: ImportFnPg;
}

const RESTART_BASE_MS = 1000;
const RESTART_MAX_MS = 30_000;
const STABLE_AFTER_MS = 60_000;

export async function startQueueHost(config: Config, options: QueueHostOptions = {}): Promise<QueueHost> {
  const target = config.database;
  if (target.kind === 'postgres') {
    return startInProcessHost(config, target, {
      logger: options.logger ?? createLogger(config),
      clock: options.clock ?? systemClock,
      closeTimeoutMs: options.closeTimeoutMs ?? 60_000,
      importPayloadPg: options.importPayloadPg,
    });
  }
  if (config.workerConcurrency > 1) {
    (options.logger ?? createLogger(config)).warn(
      { workerConcurrency: config.workerConcurrency },
      'IFW_WORKER_CONCURRENCY > 1 changes nothing on SQLite (one writer): one thread per lane',
    );
  }
  const lanes: QueueHost[] = [];
  try {
    for (const [lane, kinds] of Object.entries(LANES)) lanes.push(await startLane(config, lane, kinds, options));
  } catch (err) {
    await Promise.all(lanes.map((l) => l.close()));
    throw err;
  }
  return {
    wake() {
      for (const l of lanes) l.wake();
    },
    get healthy() {
      return lanes.every((l) => l.healthy);
    },
    async close() {
      await Promise.all(lanes.map((l) => l.close()));
    },
  };
}

async function startLane(config: Config, lane: string, kinds: readonly JobKind[], options: QueueHostOptions): Promise<QueueHost> {
  const logger = (options.logger ?? createLogger(config)).child({ component: 'job-queue-host', lane });
  const closeTimeoutMs = options.closeTimeoutMs ?? 60_000;
  const maxRestarts = options.maxRestarts ?? 5;
  let worker: Worker | undefined;
  let healthy = false;
  let closing = false;
  let restarts = 0;
  let restartTimer: NodeJS.Timeout | undefined;

  function spawn(): Promise<void> {
    const { filename, eval: isCode } = threadEntry(import.meta.url, '../main/queue-thread');
    const data: WorkerData = { config, kinds };
    const w = new Worker(filename, { workerData: data, eval: isCode });
    const startedAt = Date.now();
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      w.on('message', (message: WorkerMessage) => {
        if (message.type !== 'ready' || ready) return;
        if (closing) {
          // close() came while this (re)start was under way: it found no worker to stop.
          void w.terminate();
          return;
        }
        ready = true;
        worker = w;
        healthy = true;
        resolve();
      });
      let failure: Error | undefined;
      w.on('error', (err) => {
        failure = err;
        logger.error({ err }, 'job queue worker thread failed');
      });
      w.on('exit', (code) => {
        if (worker === w) worker = undefined;
        healthy = false;
        if (!ready) {
          const why = failure === undefined ? '' : `: ${failure.message}`;
          reject(new Error(`the job queue worker thread exited with code ${code} before it was ready${why}`, { cause: failure }));
          return;
        }
        if (closing) return;
        if (Date.now() - startedAt >= STABLE_AFTER_MS) restarts = 0;
        scheduleRestart({ code });
      });
    });
  }

  function scheduleRestart(why: Record<string, unknown>): void {
    if (closing) return;
    if (restarts >= maxRestarts) {
      logger.error(
        { ...why, restarts },
        'job queue worker thread stopped unexpectedly; not restarting it again: no requests are processed',
      );
      return;
    }
    const delay = Math.min(RESTART_BASE_MS * 2 ** restarts, RESTART_MAX_MS);
    restarts += 1;
    logger.error({ ...why, restartInMs: delay, restart: restarts }, 'job queue worker thread stopped unexpectedly; restarting it');
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      if (closing) return;
      spawn().catch((err: unknown) => scheduleRestart({ err }));
    }, delay);
    restartTimer.unref();
  }

  await spawn();

  return {
    wake() {
      if (worker !== undefined && !closing) worker.postMessage({ type: 'wake' } satisfies HostMessage);
    },
    get healthy() {
      return healthy;
    },
    async close() {
      if (closing) return;
      closing = true;
      if (restartTimer !== undefined) clearTimeout(restartTimer);
      const w = worker;
      if (w === undefined) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      w.postMessage({ type: 'stop' } satisfies HostMessage);
      const timeout = setTimeout(() => {
        logger.warn(
          { closeTimeoutMs },
          'job queue worker did not stop in time; terminating it (its request is retried after its lease expires)',
        );
        void w.terminate();
      }, closeTimeoutMs);
      await exited;
      clearTimeout(timeout);
    },
  };
}
