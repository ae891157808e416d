/**
 * Entry of a job queue worker thread. On SQLite it runs one lane: its own connection (which may block
 * this thread while waiting for a lock: the HTTP thread never waits on it) and its lane's job kinds.
 * On PostgreSQL it runs every lane over its own worker pool (postgres/in-process-host.ts); the thread
 * that started it listens for wake-ups and forwards them. Either way the lanes are async loops
 * (job-queue/loop-host.ts), and run until the host says stop. The main thread has migrated the
 * database before starting it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../core/clock.js';
import { createLogger } from '../core/logger.js';
import { createMetrics } from '../core/metrics.js';
import { createActivity } from '../job-queue/activity.js';
import { lanesOf } from '../job-queue/jobs.js';
import { startLoopHost } from '../job-queue/loop-host.js';
import { openWorkerPool } from '../job-queue/postgres/in-process-host.js';
import type { QueueHost } from '../job-queue/host.js';
import type { HostMessage, WorkerData, WorkerMessage } from '../job-queue/thread-messages.js';
import { openDatabase } from '../storage/database.js';
import { jobKinds } from './jobs.js';

if (parentPort === null) throw new Error('queue-thread.ts runs as a worker thread; start it through startJobQueue');
const port = parentPort;
const { config, lane, closeTimeoutMs } = workerData as WorkerData;
const target = config.database;
const jobs = jobKinds(config).filter((job) => lane === null || job.lane === lane);
const logger = createLogger(config, { thread: 'job-queue', kinds: jobs.map((job) => job.kind) });
const send = (message: WorkerMessage) => port.postMessage(message);
const metrics = createMetrics();
const activity = createActivity(systemClock, [...lanesOf(jobs).keys()]);

/** What the lanes run now reaches the heartbeat on the thread that started this one: after a change, at most this often. */
const ACTIVITY_EVERY_MS = 250;
setInterval(() => {
  if (activity.changed) send({ type: 'activity', lanes: activity.snapshot() });
}, ACTIVITY_EVERY_MS).unref();

function start(): QueueHost {
  const db = target.kind === 'postgres' ? openWorkerPool(config, target, logger) : openDatabase(target, { busyTimeoutMs: 10_000 });
  return startLoopHost({ config, db, jobs, logger, clock: systemClock, closeTimeoutMs, activity, ...(config.metrics ? { metrics } : {}) });
}

const queue = start();
let stopping: Promise<void> | undefined;

port.on('message', (message: HostMessage) => {
  switch (message.type) {
    case 'wake':
      queue.wake();
      return;
    case 'metrics':
      void metrics.registry.getMetricsAsJSON().then((json) => send({ type: 'metrics', id: message.id, json }));
      return;
    case 'stop':
      stopping ??= queue
        .close()
        .then(() => {
          send({ type: 'stopped' });
          port.close();
          // On PostgreSQL an import that outlived the close timeout still holds its connection (its
          // work was returned to the queue): ending the thread drops it, and the transaction with it.
          process.exit(0);
        })
        .catch((err: unknown) => {
          logger.error({ err }, 'job queue worker did not stop cleanly');
          process.exit(1);
        });
      return;
    default: {
      const unknown: never = message;
      logger.warn({ message: unknown }, 'unknown message to the job queue worker');
    }
  }
});

send({ type: 'ready' });
