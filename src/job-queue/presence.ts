/**
 * A process's place in the workers list: its row is written at start and at every heartbeat (with what
 * each lane runs now), and deleted when the workers stop. Each beat also removes the workers dead for
 * longer than the forget time. A beat that fails (the database is away) is logged and the next one
 * tries again: the process's workers go on meanwhile.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { Db } from '../storage/db.js';
import type { LaneActivity } from './activity.js';
import { beatWorker, forgetWorkers, removeWorker, type WorkerInfo } from './workers.js';

export interface PresenceOptions {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: Pick<Config, 'workerHeartbeatSeconds' | 'workerForgetHours' | 'workerConcurrency'>;
  /** The lanes this process runs. */
  readonly roles: readonly string[];
  readonly version: string;
  /** What the lanes run now. */
  readonly activity: () => readonly LaneActivity[];
}

export interface Presence {
  readonly info: WorkerInfo;
  /** Writes a heartbeat now (the timer does it every IFW_WORKER_HEARTBEAT_SECONDS). */
  beat(): Promise<void>;
  /** Stops the heartbeats and deletes the row. */
  close(): Promise<void>;
}

/** Registers the process (its first heartbeat) and starts the timer. */
export async function startPresence(options: PresenceOptions): Promise<Presence> {
  const { db, clock, config, logger } = options;
  const info: WorkerInfo = {
    workerId: randomUUID(),
    host: hostname(),
    pid: process.pid,
    version: options.version,
    startedAt: clock().toISOString(),
    roles: options.roles,
    concurrency: config.workerConcurrency,
  };
  const forgetMs = config.workerForgetHours * 3_600_000;
  async function beat(): Promise<void> {
    const now = clock();
    await beatWorker(db, { info, now, lanes: options.activity() });
    await forgetWorkers(db, new Date(now.getTime() - forgetMs));
  }
  await beat();
  let beating: Promise<void> | undefined;
  const timer = setInterval(() => {
    beating ??= beat()
      .catch((err: unknown) => logger.warn({ err }, 'could not write the workers heartbeat; trying again at the next one'))
      .finally(() => (beating = undefined));
  }, config.workerHeartbeatSeconds * 1000);
  timer.unref();
  return {
    info,
    beat,
    async close() {
      clearInterval(timer);
      await beating;
      await removeWorker(db, info.workerId).catch((err: unknown) =>
        logger.warn({ err }, 'could not remove this process from the workers list; it is shown dead, then removed'),
      );
    },
  };
}
