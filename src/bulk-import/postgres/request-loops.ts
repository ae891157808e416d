/**
 * PostgreSQL's Bulk Import Processor: N claim loops in this process, each draining Pending requests
 * under its own lease token, as many processes as there are workers. The request leases (claimed
 * `for update skip locked`) are what keep workers apart, not the Bulk Import Processor entry: an entry
 * claimed by one process would let one machine drain at a time. The entry stays the administrator's
 * switch: On Hold stops every loop before its next claim, Ready lets them run.
 *
 * A loop drains until nothing is Pending, then waits for a wake (LISTEN/NOTIFY, or a wake in this
 * process) or the scheduler tick, whichever comes first. A wake during a drain is not lost: the loop
 * compares wake generations before it waits.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../../core/clock.js';
import type { Config } from '../../core/config.js';
import type { PostgresDatabase } from '../../storage/database.js';
import { entryOnHold } from '../../job-queue/entries.js';
import { BULK_IMPORT_PROCESSOR_ENTRY } from '../../job-queue/model.js';
import { processPendingRequests, type ImportFnPg } from '../processor.js';
import { releaseRequests } from '../release-requests.js';

export interface RequestLoopsOptions {
  readonly db: PostgresDatabase;
  readonly config: Pick<Config, 'leaseSeconds' | 'maxAttempts' | 'schedulerTickMs' | 'workerConcurrency'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly importPayloadPg?: ImportFnPg;
}

export interface RequestLoops {
  /** The lease tokens of the loops (host:pid:loop:random). */
  readonly owners: readonly string[];
  wake(): void;
  start(): void;
  /** No further claims; resolves when the requests in progress are finished. */
  stop(): Promise<void>;
  /** Returns the leases still held to Pending (for an exit that cannot wait for them). */
  release(): Promise<string[]>;
}

export function createRequestLoops(options: RequestLoopsOptions): RequestLoops {
  const { db, config, clock } = options;
  const logger = options.logger.child({ component: 'bulk-import-processor' });
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

  const onHold = () => entryOnHold(db, BULK_IMPORT_PROCESSOR_ENTRY);

  async function loop(owner: string): Promise<void> {
    const ctx = {
      db,
      clock,
      logger,
      owner,
      leaseMs: config.leaseSeconds * 1000,
      maxAttempts: config.maxAttempts,
      importPayloadPg: options.importPayloadPg,
      keepGoing: async () => !stopping && !(await onHold()),
    };
    while (!stopping) {
      const seen = generation;
      try {
        if (!(await onHold())) await processPendingRequests(ctx);
      } catch (err) {
        logger.error({ err, owner }, 'bulk import drain failed; retried at the next wake or tick');
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
    release: () => releaseRequests(db, { owners }),
  };
}
