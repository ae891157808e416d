/**
 * Entry of the job queue's worker thread. It owns its own SQLite connection (which may block this
 * thread while waiting for a lock: the HTTP thread never waits on it) and runs the runner until the
 * host says stop. The main thread has migrated the database before starting it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../core/clock.js';
import { createLogger } from '../core/logger.js';
import { openDatabase } from '../storage/database.js';
import type { HostMessage, WorkerData, WorkerMessage } from '../job-queue/messages.js';
import { createQueueRunner } from '../job-queue/runner.js';

if (parentPort === null) throw new Error('worker-thread.ts runs as a worker thread; start it through startQueueHost');
const port = parentPort;
const { config, kinds } = workerData as WorkerData;
const logger = createLogger(config, { thread: 'job-queue', kinds });
const db = openDatabase(config.database, { busyTimeoutMs: 10_000 });
const runner = createQueueRunner({ db, config, clock: systemClock, logger, kinds });
const send = (message: WorkerMessage) => port.postMessage(message);

let stopping: Promise<void> | undefined;
async function stop(): Promise<void> {
  await runner.stop();
  await db.close();
  send({ type: 'stopped' });
  port.close();
}

port.on('message', (message: HostMessage) => {
  switch (message.type) {
    case 'wake':
      runner.wake().catch((err: unknown) => logger.error({ err }, 'job queue wake failed'));
      return;
    case 'stop':
      stopping ??= stop().catch((err: unknown) => {
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

runner.start();
send({ type: 'ready' });
