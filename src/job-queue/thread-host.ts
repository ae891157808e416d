/**
 * The job queue on worker threads, off the HTTP event loop. On SQLite, better-sqlite3 is synchronous
 * and an import of a large payload holds its thread for as long as it takes: each lane is a thread
 * with its own connection running only its lane's kinds, so that a REST import fetching pages for
 * minutes never keeps a bulk import request waiting. On PostgreSQL one thread runs every lane as async
 * loops over one pool (loop-host.ts, postgres/in-process-host.ts): the waits are the server's, but parsing and
 * mapping a large payload is seconds of CPU that would otherwise delay every API answer.
 *
 * Each thread's heap has a ceiling (QUEUE_THREAD_HEAP_MB). A thread that dies (also of running out of
 * it) is restarted with backoff a few times; while it is down `healthy` is false (the readiness check
 * reports it), and the requests it held are retried once their leases expire.
 *
 * The thread's entry module is the composition root's (it builds the lane's job kinds there, since
 * functions cannot cross to another thread); this host only starts, wakes and stops threads.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../core/config.js';
import type { MetricsJson } from '../core/metrics.js';
import type { LaneActivity } from './activity.js';
import type { QueueHost } from './host.js';
import type { HostMessage, WorkerData, WorkerMessage } from './thread-messages.js';

export interface ThreadHostOptions {
  readonly config: Config;
  /** The lanes to start, one thread each (null: one thread for every lane, see WorkerData). */
  readonly lanes: readonly (string | null)[];
  /** The thread's entry module (see core/threads.ts `threadEntry`); it receives WorkerData. */
  readonly entry: { readonly filename: string | URL; readonly eval: boolean };
  readonly logger: Logger;
  /** How long close() lets the thread wait for its current work item (the thread is terminated a little later). */
  readonly closeTimeoutMs: number;
  /** Restarts after unexpected exits before giving up; the count resets after a minute of running. */
  readonly maxRestarts: number;
}

/**
 * The old generation of a queue thread's heap may grow to this, in MB. An import holds a bounded
 * amount of data at a time (a batch, a chunk of records), so it needs far less; the ceiling matters
 * because V8 lets a heap with a high ceiling grow to about four times what it holds before it collects
 * (measured: the peak memory of a 1 000 000-record import fell by more than half), and with 1024 MB
 * to about 1.6 times.
 */
export const QUEUE_THREAD_HEAP_MB = 1024;

/**
 * The young generation of a queue thread's heap, in MB (by default V8 takes up to 48: two 16 MB
 * semi-spaces and as much for large new objects). An import's garbage dies young (a batch of records
 * at a time), so a smaller one is collected more often at no measurable cost in records/s, and the
 * peak memory of a 1 000 000-record import on SQLite fell by about 16 MB.
 */
export const QUEUE_THREAD_YOUNG_MB = 16;

/**
 * A thread of every lane (PostgreSQL) returns its unfinished work to the queue itself once its close
 * timeout has passed; it has this much longer to do so before it is terminated.
 */
const STOP_GRACE_MS = 5000;

/** A thread that does not answer a metrics request within this long is left out of that scrape. */
const METRICS_TIMEOUT_MS = 2000;

const RESTART_BASE_MS = 1000;
const RESTART_MAX_MS = 30_000;
const STABLE_AFTER_MS = 60_000;

export async function startThreadHost(options: ThreadHostOptions): Promise<QueueHost> {
  const lanes: QueueHost[] = [];
  try {
    for (const lane of options.lanes) lanes.push(await startLane(lane, options));
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
    activity: () => lanes.flatMap((l) => l.activity()),
    async metrics() {
      return (await Promise.all(lanes.map((l) => l.metrics()))).flat();
    },
    async close() {
      await Promise.all(lanes.map((l) => l.close()));
    },
  };
}

async function startLane(lane: string | null, options: ThreadHostOptions): Promise<QueueHost> {
  const { config, closeTimeoutMs, maxRestarts } = options;
  const logger = options.logger.child({ component: 'job-queue-host', lane: lane ?? 'all' });
  let worker: Worker | undefined;
  let healthy = false;
  let closing = false;
  let restarts = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  let activity: readonly LaneActivity[] = [];
  let nextMetricsId = 0;
  const metricsWaiting = new Map<number, (json: readonly MetricsJson[]) => void>();

  function spawn(): Promise<void> {
    const data: WorkerData = { config, lane, closeTimeoutMs };
    const w = new Worker(options.entry.filename, {
      workerData: data,
      eval: options.entry.eval,
      resourceLimits: { maxOldGenerationSizeMb: QUEUE_THREAD_HEAP_MB, maxYoungGenerationSizeMb: QUEUE_THREAD_YOUNG_MB },
    });
    const startedAt = Date.now();
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      w.on('message', (message: WorkerMessage) => {
        if (message.type === 'activity') {
          activity = message.lanes;
          return;
        }
        if (message.type === 'metrics') {
          metricsWaiting.get(message.id)?.([message.json]);
          return;
        }
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
    activity: () => activity,
    metrics() {
      const w = worker;
      if (w === undefined || closing) return Promise.resolve([]);
      const id = ++nextMetricsId;
      return new Promise<readonly MetricsJson[]>((resolve) => {
        const timer = setTimeout(() => answer([]), METRICS_TIMEOUT_MS);
        function answer(json: readonly MetricsJson[]): void {
          clearTimeout(timer);
          metricsWaiting.delete(id);
          resolve(json);
        }
        metricsWaiting.set(id, answer);
        w.postMessage({ type: 'metrics', id } satisfies HostMessage);
      });
    },
    async close() {
      if (closing) return;
      closing = true;
      if (restartTimer !== undefined) clearTimeout(restartTimer);
      const w = worker;
      if (w === undefined) return;
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      w.postMessage({ type: 'stop' } satisfies HostMessage);
      const timeout = setTimeout(
        () => {
          logger.warn(
            { closeTimeoutMs },
            'job queue worker did not stop in time; terminating it (its request is retried after its lease expires)',
          );
          void w.terminate();
        },
        closeTimeoutMs + (lane === null ? STOP_GRACE_MS : 0),
      );
      await exited;
      clearTimeout(timeout);
    },
  };
}
