/**
 * The job queue runner: claims due entries of its kinds and runs them, on a timer and when woken. It
 * runs on the thread that owns its database connection, and that connection must be its own: the
 * SQLite importer holds synchronous transactions on it that must not interleave with anyone else's.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { threadId } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { Metrics } from '../core/metrics.js';
import type { Activity } from './activity.js';
import type { Database } from '../storage/database.js';
import { claimNextDueEntry } from './claim-entry.js';
import { holdsEntry } from './entries.js';
import { failEntryRun } from './fail-entry.js';
import { finishEntryRun } from './finish-entry.js';
import { heartbeatEntry } from './heartbeat-entry.js';
import type { JobKind } from './jobs.js';
import { createLoop } from './loop.js';
import type { ClaimedEntry } from './model.js';
import { wakeEntry } from './wake-entry.js';

export interface QueueRunnerOptions {
  readonly db: Database;
  readonly config: Pick<Config, 'leaseSeconds' | 'maxAttempts' | 'schedulerTickMs'>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Lease token of this runner; defaults to host:pid:thread:random. */
  readonly owner?: string;
  /** The kinds this runner runs (its lane). */
  readonly jobs: readonly JobKind[];
  /**
   * Claim entries of the given kinds only (a lane). Otherwise every due entry is claimed, and one of a
   * kind nobody declared goes into Error, where an administrator sees it.
   */
  readonly onlyTheseKinds?: boolean;
  /** Where the runner says what it runs now (the workers list), under its lane's name. */
  readonly activity?: Activity;
  /** The thread's metrics, handed to the kinds. */
  readonly metrics?: Metrics;
}

export interface QueueRunner {
  readonly owner: string;
  /** Runs every due entry. Ticks never overlap: asked for during one, a tick runs right after it (once, however often asked). */
  tick(): Promise<void>;
  /** Makes the entries that work waits for (the kinds' `wakes`) due now if they are Ready, then ticks. */
  wake(): Promise<void>;
  /** Wakes once (work left from before a restart runs at once), then ticks every schedulerTickMs. */
  start(): void;
  /** Stops the timer, lets the current work item finish (no further claims) and waits for the tick. */
  stop(): Promise<void>;
}

/** Guards a tick against an entry that keeps being due (a clock that does not move). */
const MAX_RUNS_PER_TICK = 100;

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function createQueueRunner(options: QueueRunnerOptions): QueueRunner {
  const { db, config, clock, jobs } = options;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${threadId}:${randomUUID().slice(0, 8)}`;
  const logger = options.logger.child({ component: 'job-queue' });
  const leaseMs = config.leaseSeconds * 1000;
  const byKind = new Map(jobs.map((job) => [job.kind, job]));
  const kinds = options.onlyTheseKinds === true ? [...byKind.keys()] : undefined;
  const woken = jobs.flatMap((job) => (job.wakes === undefined ? [] : [job.wakes]));
  // Aborts work that waits on the outside world (an import run's page fetch) when the runner stops.
  const stopSignal = new AbortController();
  const lane = jobs[0]?.lane ?? 'all';
  const { activity } = options;

  // Between two work items: stop when asked to, or when the entry was put On Hold (its lease
  // cleared). The lease is renewed once half of it has passed; until then reading it is enough (no commit).
  function keepGoingFor(entry: ClaimedEntry): () => Promise<boolean> {
    let renewedAt = clock().getTime();
    return async () => {
      if (loop.stopping) return false;
      const now = clock();
      if (now.getTime() - renewedAt < leaseMs / 2) return holdsEntry(db, { id: entry.id, owner });
      renewedAt = now.getTime();
      return heartbeatEntry(db, { id: entry.id, owner, now, leaseMs });
    };
  }

  async function runEntry(entry: ClaimedEntry): Promise<void> {
    const base = { id: entry.id, owner, recurrenceSeconds: entry.recurrenceSeconds };
    try {
      const job = byKind.get(entry.kind);
      if (job === undefined) throw new Error(`unknown job kind "${entry.kind}"`);
      const keepGoing = keepGoingFor(entry);
      activity?.claimed(lane, entry.id);
      const onClaim = activity === undefined ? undefined : (what: string) => activity.claimed(lane, `${entry.id}: ${what}`);
      await job.run({
        db,
        clock,
        logger,
        owner,
        leaseMs,
        maxAttempts: config.maxAttempts,
        entry,
        keepGoing,
        signal: stopSignal.signal,
        ...(onClaim === undefined ? {} : { onClaim }),
        ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
      });
      await finishEntryRun(db, { ...base, now: clock() });
    } catch (err) {
      logger.error({ err, entry: entry.id }, 'job queue entry failed; it is retried at its next run time');
      await failEntryRun(db, { ...base, now: clock(), error: message(err) });
    } finally {
      activity?.idle(lane);
    }
  }

  async function runDueEntries(): Promise<void> {
    for (let runs = 0; runs < MAX_RUNS_PER_TICK && !loop.stopping; runs++) {
      const entry = await claimNextDueEntry(db, { owner, now: clock(), leaseMs, kinds });
      if (entry === undefined) return;
      await runEntry(entry);
    }
  }

  const loop = createLoop(runDueEntries, config.schedulerTickMs, (err) => logger.error({ err }, 'job queue tick failed'));

  async function wake(): Promise<void> {
    if (loop.stopping) return;
    for (const id of woken) await wakeEntry(db, { id, now: clock() });
    await loop.tick();
  }

  return {
    owner,
    tick: () => loop.tick(),
    wake,
    start: () => loop.start(wake),
    async stop() {
      const stopped = loop.stop();
      stopSignal.abort(new Error('the job queue runner is stopping'));
      await stopped;
    },
  };
}
