/**
 * The job queue runner: claims due entries and runs them, on a timer and when woken. It runs on the
 * thread that owns its database connection, and that connection must be its own: the importer holds
 * synchronous transactions on it that must not interleave with anyone else's.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { threadId } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { AppError } from '../core/errors.js';
import { queueEndpointRun } from '../import-runs/queue-endpoint-run.js';
import { runQueuedImports } from '../import-runs/run-imports.js';
import { defaultImportSources, type ImportSources } from '../import-runs/sources.js';
import { createSecretBox, type SecretBox } from '../rest-source/secrets.js';
import type { Database } from '../storage/database.js';
import { claimNextDueEntry } from './claim-entry.js';
import { holdsEntry } from './entries.js';
import { failEntryRun } from './fail-entry.js';
import { finishEntryRun } from './finish-entry.js';
import { heartbeatEntry } from './heartbeat-entry.js';
import { BULK_IMPORT_PROCESSOR_ENTRY, IMPORT_RUN_PROCESSOR_ENTRY, parseJobKind, type ClaimedEntry, type JobKind } from './model.js';
import { processPendingRequests, type ImportFn } from '../bulk-import/processor.js';
import { runRetentionCleanup } from '../bulk-import/retention.js';
import { wakeEntry } from './wake-entry.js';

export interface QueueRunnerOptions {
  readonly db: Database;
  /** secretKey / dataDir open the stored secrets of REST connections (only needed without importSources). */
  readonly config: Pick<Config, 'leaseSeconds' | 'maxAttempts' | 'retentionDays' | 'schedulerTickMs'> &
    Partial<Pick<Config, 'secretKey' | 'dataDir'>>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Lease token of this runner; defaults to host:pid:thread:random. */
  readonly owner?: string;
  readonly importPayload?: ImportFn;
  /** Endpoints, connections and the page fetch of import runs; default: the real ones. */
  readonly importSources?: ImportSources;
  /** The job kinds this runner runs (its lane); all kinds when omitted. */
  readonly kinds?: readonly JobKind[];
}

export interface QueueRunner {
  readonly owner: string;
  /** Runs every due entry. Ticks never overlap: asked for during one, a tick runs right after it (once, however often asked). */
  tick(): Promise<void>;
  /** Makes the Bulk Import Processor and the Import Run Processor due now if their entries are Ready, then ticks. */
  wake(): Promise<void>;
  /** Wakes once (work left from before a restart runs at once), then ticks every schedulerTickMs. */
  start(): void;
  /** Stops the timer, lets the current request finish (no further claims) and waits for the tick. */
  stop(): Promise<void>;
}

/** Guards a tick against an entry that keeps being due (a clock that does not move). */
const MAX_RUNS_PER_TICK = 100;

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function endpointCodeOf(entry: ClaimedEntry): string {
  const parameters: unknown = JSON.parse(entry.parameters);
  const code = typeof parameters === 'object' && parameters !== null ? (parameters as { endpointCode?: unknown }).endpointCode : undefined;
  if (typeof code !== 'string' || code === '') throw new Error(`job queue entry "${entry.id}" has no endpointCode in its parameters`);
  return code;
}

export function createQueueRunner(options: QueueRunnerOptions): QueueRunner {
  const { db, config, clock } = options;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${threadId}:${randomUUID().slice(0, 8)}`;
  const logger = options.logger.child({ component: 'job-queue' });
  const leaseMs = config.leaseSeconds * 1000;
  let stopping = false;
  let started = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  // Aborts the page fetch of an import run in progress when the runner stops.
  const stopSignal = new AbortController();
  let box: SecretBox | undefined;
  const secretBox = (): SecretBox => {
    if (config.secretKey === undefined && config.dataDir === undefined)
      throw new Error('stored secrets cannot be opened: the job queue runner was given neither IFW_SECRET_KEY nor a data directory');
    return (box ??= createSecretBox({ secretKey: config.secretKey, dataDir: config.dataDir ?? '' }));
  };
  const importSources = options.importSources ?? defaultImportSources(secretBox);

  // Between two requests (or runs): stop when asked to, or when the entry was put On Hold (its lease
  // cleared). The lease is renewed once half of it has passed; until then reading it is enough (no commit).
  function keepGoingFor(entry: ClaimedEntry): () => Promise<boolean> {
    let renewedAt = clock().getTime();
    return async () => {
      if (stopping) return false;
      const now = clock();
      if (now.getTime() - renewedAt < leaseMs / 2) return holdsEntry(db, { id: entry.id, owner });
      renewedAt = now.getTime();
      return heartbeatEntry(db, { id: entry.id, owner, now, leaseMs });
    };
  }

  async function drainImportRuns(entry: ClaimedEntry): Promise<void> {
    const ctx = {
      db,
      clock,
      logger,
      owner,
      leaseMs,
      maxAttempts: config.maxAttempts,
      sources: importSources,
      keepGoing: keepGoingFor(entry),
      signal: stopSignal.signal,
    };
    await runQueuedImports(ctx);
  }

  /** A scheduled endpoint's turn: queue its run unless one is still in progress. */
  async function queueScheduledRun(endpointCode: string): Promise<void> {
    try {
      const run = await queueEndpointRun(db, endpointCode, 'schedule', clock());
      logger.info({ endpointCode, runId: run.runId }, 'scheduled import run queued');
    } catch (err) {
      if (!(err instanceof AppError && err.status === 409)) throw err;
      logger.info({ endpointCode }, 'scheduled import run skipped: a run of this endpoint is still Queued or Running');
    }
  }

  async function runJob(entry: ClaimedEntry): Promise<void> {
    const kind = parseJobKind(entry.kind);
    if (kind === undefined) throw new Error(`unknown job kind "${entry.kind}"`);
    switch (kind) {
      case 'bulkImportProcessor': {
        const keepGoing = keepGoingFor(entry);
        await processPendingRequests({
          db,
          clock,
          logger,
          owner,
          leaseMs,
          maxAttempts: config.maxAttempts,
          keepGoing,
          importPayload: options.importPayload,
        });
        return;
      }
      case 'importRunProcessor': {
        await drainImportRuns(entry);
        return;
      }
      case 'endpointImport': {
        await queueScheduledRun(endpointCodeOf(entry));
        await drainImportRuns(entry);
        return;
      }
      case 'retentionCleanup': {
        const deleted = await runRetentionCleanup(db, { now: clock(), retentionDays: config.retentionDays });
        if (deleted > 0) logger.info({ deleted, retentionDays: config.retentionDays }, 'retention cleanup deleted ended requests');
        return;
      }
      default: {
        const unknown: never = kind;
        throw new Error(`unhandled job kind ${String(unknown)}`);
      }
    }
  }

  async function runEntry(entry: ClaimedEntry): Promise<void> {
    const base = { id: entry.id, owner, recurrenceSeconds: entry.recurrenceSeconds };
    try {
      await runJob(entry);
      await finishEntryRun(db, { ...base, now: clock() });
    } catch (err) {
      logger.error({ err, entry: entry.id }, 'job queue entry failed; it is retried at its next run time');
      await failEntryRun(db, { ...base, now: clock(), error: message(err) });
    }
  }

  async function runDueEntries(): Promise<void> {
    for (let runs = 0; runs < MAX_RUNS_PER_TICK && !stopping; runs++) {
      const entry = await claimNextDueEntry(db, { owner, now: clock(), leaseMs, kinds: options.kinds });
      if (entry === undefined) return;
      await runEntry(entry);
    }
  }

  function tick(): Promise<void> {
    if (stopping) return current ?? Promise.resolve();
    if (current === undefined) {
      current = runDueEntries().finally(() => {
        current = undefined;
      });
      return current;
    }
    queued ??= current
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        return stopping ? undefined : tick();
      });
    return queued;
  }

  async function wake(): Promise<void> {
    if (stopping) return;
    await wakeEntry(db, { id: BULK_IMPORT_PROCESSOR_ENTRY, now: clock() });
    await wakeEntry(db, { id: IMPORT_RUN_PROCESSOR_ENTRY, now: clock() });
    await tick();
  }

  const logFailure = (err: unknown) => logger.error({ err }, 'job queue tick failed');

  function schedule(): void {
    if (stopping) return;
    timer = setTimeout(() => {
      timer = undefined;
      void tick().catch(logFailure).finally(schedule);
    }, config.schedulerTickMs);
  }

  return {
    owner,
    tick,
    wake,
    start() {
      if (started || stopping) return;
      started = true;
      void wake().catch(logFailure).finally(schedule);
    },
    async stop() {
      stopping = true;
      stopSignal.abort(new Error('the job queue runner is stopping'));
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await Promise.allSettled([current, queued]);
    },
  };
}
