/**
 * Entry of a job queue lane's worker thread (SQLite). It owns its own connection (which may block this
 * thread while waiting for a lock: the HTTP thread never waits on it), builds its lane's job kinds and
 * runs them until the host says stop. The main thread has migrated the database before starting it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../core/clock.js';
import { createLogger } from '../core/logger.js';
import type { HostMessage, WorkerData, WorkerMessage } from '../job-queue/sqlite/messages.js';
import { createQueueRunner } from '../job-queue/runner.js';
import { openDatabase } from '../storage/database.js';
import { jobKinds } from './jobs.js';

if (parentPort === null) throw new Error('queue-thread.ts runs as a worker thread; start it through startJobQueue');
const port = parentPort;
const { config, lane } = workerData as WorkerData;
const jobs = jobKinds(config).filter((job) => job.lane === lane);
const logger = createLogger(config, { thread: 'job-queue', kinds: jobs.map((job) => job.kind) });
const db = openDatabase(config.database, { busyTimeoutMs: 10_000 });
const runner = createQueueRunner({ db, config, clock: systemClock, logger, jobs, onlyTheseKinds: true });
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
