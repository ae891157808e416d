/**
 * PostgreSQL: the drain of a kind with a `concurrent` drain (the Bulk Import Processor) runs as N
 * loops in every worker process, each under its own lease token. The work items' leases (claimed
 * `for update skip locked`) keep workers apart, not the kind's entry: an entry claimed by one process
 * would let one machine drain at a time. The entry stays the administrator's switch: On Hold stops
 * every loop before its next claim, Ready lets them run.
 *
 * A loop drains until nothing is left, then again at a wake (LISTEN/NOTIFY, or a wake in this process)
 * or the scheduler tick; a wake during a drain makes it drain once more (loop.ts).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { Config } from '../../core/config.js';
import type { Metrics } from '../../core/metrics.js';
import type { Activity } from '../activity.js';
import type { Database } from '../../storage/database.js';
import { entryOnHold } from '../entries.js';
import type { ConcurrentDrain } from '../jobs.js';
import { createLoop, type Loop } from '../loop.js';

export interface DrainLoopsOptions {
  readonly db: Database;
  readonly config: Pick<Config, 'leaseSeconds' | 'maxAttempts' | 'schedulerTickMs' | 'workerConcurrency'>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The kind's entry: its On Hold stops the loops. */
  readonly entry: string;
  readonly drain: ConcurrentDrain;
  /** The lane the loops belong to; each loop says what it runs as `<lane> #<n>`. */
  readonly lane?: string;
  readonly activity?: Activity;
  readonly metrics?: Metrics;
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
  const onHold = () => entryOnHold(db, options.entry);
  const { activity } = options;
  const loops = owners.map((owner, i) => {
    const name = `${options.lane ?? options.entry} #${i + 1}`;
    const ctx = {
      db,
      clock,
      logger,
      owner,
      leaseMs: config.leaseSeconds * 1000,
      maxAttempts: config.maxAttempts,
      keepGoing: async () => !loop.stopping && !(await onHold()),
      ...(activity === undefined ? {} : { onClaim: (what: string) => activity.claimed(name, what) }),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    };
    const drainOnce = async (): Promise<void> => {
      try {
        if (!(await onHold())) await options.drain.drain(ctx);
      } catch (err) {
        logger.error({ err, owner }, 'drain failed; retried at the next wake or tick');
      } finally {
        activity?.idle(name);
      }
    };
    const loop: Loop = createLoop(drainOnce, config.schedulerTickMs, () => undefined);
    return loop;
  });

  return {
    owners,
    wake() {
      for (const l of loops) void l.tick();
    },
    start() {
      for (const l of loops) l.start();
    },
    async stop() {
      await Promise.all(loops.map((l) => l.stop()));
    },
    release: () => options.drain.release(db, owners),
  };
}
