/**
 * PostgreSQL: the drain of a kind with a `concurrent` drain (the Bulk Import Processor) runs as N
 * loops in every worker process, each under its own lease token. The work items' leases (claimed
 * `for update skip locked`) keep workers apart, not the kind's entry: an entry claimed by one process
 * would let one machine drain at a time. The entry stays the administrator's switch: On Hold stops
 * every loop before its next claim, Ready lets them run.
 *
 * A loop drains until nothing is left, then waits for a wake (LISTEN/NOTIFY, or a wake in this
 * process) or the scheduler tick, whichever comes first. A wake during a drain is not lost: the loop
 * compares wake generations before it waits.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { Config } from '../../core/config.js';
import type { PostgresDatabase } from '../../storage/database.js';
import { entryOnHold } from '../entries.js';
import type { ConcurrentDrain } from '../jobs.js';

export interface DrainLoopsOptions {
  readonly db: PostgresDatabase;
  readonly config: Pick<Config, 'leaseSeconds' | 'maxAttempts' | 'schedulerTickMs' | 'workerConcurrency'>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The kind's entry: its On Hold stops the loops. */
  readonly entry: string;
  readonly drain: ConcurrentDrain;
}

export interface DrainLoops {
  /** The lease tokens of the loops (host:pid:loop:random). */
  readonly owners: readonly string[];
  wake(): void;
  start(): void;
  /** No further claims; resolves when the work items in progress are finished. */
  stop(): Promise<void>;
  /** Returns the work items still held to their queue (for an exit that cannot wait for them). */
  release(): Promise<readonly string[]>;
}

export function createDrainLoops(options: DrainLoopsOptions): DrainLoops {
  const { db, config, clock, logger } = options;
  const token = randomUUID().slice(0, 8);
  const owners = Array.from({ length: config.workerConcurrency }, (_, i) => `${hostname()}:${process.pid}:loop${i + 1}:${token}`);
  let stopping = false;
  let generation = 0;
  let waiters: (() => void)[] = [];
  let loops: Promise<void>[] = [];

  function wake(): void {
    generation += 1;
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  }

  /** Until the next wake after `seen`, the tick, or stop. */
  function nextTurn(seen: number): Promise<void> {
    if (stopping || generation !== seen) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, config.schedulerTickMs);
      function done(): void {
        clearTimeout(timer);
        waiters = waiters.filter((w) => w !== done);
        resolve();
      }
      waiters.push(done);
    });
  }

  const onHold = () => entryOnHold(db, options.entry);

  async function loop(owner: string): Promise<void> {
    const ctx = {
      db,
      clock,
      logger,
      owner,
      leaseMs: config.leaseSeconds * 1000,
      maxAttempts: config.maxAttempts,
      keepGoing: async () => !stopping && !(await onHold()),
    };
    while (!stopping) {
      const seen = generation;
      try {
        if (!(await onHold())) await options.drain.drain(ctx);
      } catch (err) {
        logger.error({ err, owner }, 'drain failed; retried at the next wake or tick');
      }
      await nextTurn(seen);
    }
  }

  return {
    owners,
    wake,
    start() {
      if (loops.length > 0 || stopping) return;
      loops = owners.map((owner) => loop(owner));
    },
    async stop() {
      stopping = true;
      wake();
      await Promise.all(loops);
    },
    release: () => options.drain.release(db, owners),
  };
}
