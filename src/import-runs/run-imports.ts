/**
 * The import run orchestrator: drains Queued runs one at a time on the job queue's thread. A run
 * fetches every page of its endpoint, staging the records on the connection as they arrive (several
 * pages per commit, see page-buffer.ts); then all staged records go into a single import transaction
 * whose last write (Completed or Failed) is fenced by the run's lease. A page that fails,
 * an integration error (fail mode) or a lost lease imports nothing. The same on SQLite and PostgreSQL:
 * what differs (the connection, how staging and the import transaction are held) is in run-store.ts.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Metrics } from '../core/metrics.js';
import type { Logger } from 'pino';
import { AppError } from '../core/errors.js';
import { abortBoard } from '../storage/abort-board.js';
import { ImportAborted } from '../table-writer/model.js';
import { runAbortKey } from './cancel-run.js';
import type { IntegrationPlan } from '../integrations/model.js';
import { getIntegrationPlan } from '../integrations/store.js';
import { compileMapping, type CompiledMapping } from '../mapping/engine.js';
import { maxPagesWarning } from '../pagination/steps.js';
import type { FetchSummary, RestConnection, RestEndpoint } from '../rest-source/model.js';
import type { TargetTable } from '../tables/model.js';
import { getTableWithRelations } from '../tables/store.js';
import { claimNextRun } from './claim-run.js';
import { heartbeatRun } from './heartbeat-run.js';
import type { ClaimedRun } from './model.js';
import { RecordOrigins } from '../rest-source/record-origins.js';
import { cursorTracker, type CursorTracker } from './cursor-tracker.js';
import { reapExpiredRuns } from './reap-expired-runs.js';
import { releaseRun } from './release-run.js';
import type { ImportSources } from './sources-model.js';
import type { WorkerContext } from '../job-queue/worker-context.js';
import { DEFAULT_STAGING_LIMITS, type StagingLimits } from './page-buffer.js';
import { failRunWithoutStore, openRunStore } from './open-run-store.js';
import type { RunEnd, RunStore } from './run-store.js';

export interface ImportRunContext extends WorkerContext {
  readonly sources: ImportSources;
  /** Aborts the fetch of the current run (shutdown); the run is then retried after its lease expires. */
  readonly signal?: AbortSignal;
  /** How fetched pages are batched into staging commits; default DEFAULT_STAGING_LIMITS. */
  readonly staging?: StagingLimits;
  /** How often the lease is renewed during PostgreSQL's import transaction; default a third of the lease. */
  readonly heartbeatMs?: number;
  /** After an aborted import, how long to wait for the cancel's status write at most (default ABORT_YIELD_MS). */
  readonly abortYieldMs?: number;
}

/** After an aborted import, how long the worker waits for the cancel's status write before it claims again. */
const ABORT_YIELD_MS = 5000;

export type RunResult = 'completed' | 'failed' | 'lost';

export interface RunDrainResult {
  readonly completed: number;
  readonly failed: number;
  /** Runs whose lease was lost mid-way: nothing was committed. */
  readonly lost: number;
  /** Expired leases returned to Queued, and those failed for good. */
  readonly requeued: number;
  readonly interrupted: number;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export async function runQueuedImports(ctx: ImportRunContext): Promise<RunDrainResult> {
  const reaped = await reapExpiredRuns(ctx.db, { now: ctx.clock(), maxAttempts: ctx.maxAttempts });
  if (reaped.requeued.length > 0) ctx.logger.warn({ runIds: reaped.requeued }, 'expired leases: import runs returned to Queued');
  if (reaped.failed.length > 0) ctx.logger.error({ runIds: reaped.failed }, 'expired leases: import runs interrupted too often, failed');

  const counts: Record<RunResult, number> = { completed: 0, failed: 0, lost: 0 };
  for (let first = true; ; first = false) {
    if (ctx.signal?.aborted === true) break;
    if (!first && ctx.keepGoing !== undefined && !(await ctx.keepGoing())) break;
    const run = await claimNextRun(ctx.db, { owner: ctx.owner, now: ctx.clock(), leaseMs: ctx.leaseMs });
    if (run === undefined) break;
    ctx.onClaim?.(`import run ${run.runId} (${run.endpointCode})`);
    const result = await executeRun(ctx, run);
    counts[result] += 1;
    if (result !== 'lost') ctx.metrics?.importRuns.inc({ outcome: result });
    await nextTurn();
  }
  return { ...counts, requeued: reaped.requeued.length, interrupted: reaped.failed.length };
}

interface Loaded {
  readonly endpoint: RestEndpoint;
  readonly connection: RestConnection;
  readonly plan: IntegrationPlan;
  readonly tables: ReadonlyMap<string, TargetTable>;
  /** The integration compiled against the tables (staging maps records with it). */
  readonly mapping: CompiledMapping;
}

/** Everything a run needs before its first request, or the sentence that fails it. */
async function load(ctx: ImportRunContext, run: ClaimedRun): Promise<Loaded | string> {
  let endpoint: RestEndpoint;
  let connection: RestConnection;
  try {
    endpoint = await ctx.sources.loadEndpoint(ctx.db, run.endpointCode);
    connection = await ctx.sources.loadConnection(ctx.db, endpoint.connectionCode);
  } catch (err) {
    if (err instanceof AppError) return `cannot start the run: ${err.message}`;
    throw err;
  }
  const plan = await getIntegrationPlan(ctx.db, run.integrationSortingOrder);
  if (plan === undefined) return `integration ${run.integrationSortingOrder} no longer exists`;
  const tables = await getTableWithRelations(ctx.db, plan.integration.targetTable);
  try {
    // The importer would refuse a broken integration too, but only after every page was fetched.
    return { endpoint, connection, plan, tables, mapping: compileMapping(plan, tables) };
  } catch (err) {
    if (err instanceof AppError) return err.message;
    throw err;
  }
}

/** The fetch's warnings, with the Max Pages one guaranteed when that is why it stopped. */
function runWarnings(summary: FetchSummary, endpoint: RestEndpoint): string[] {
  const warnings = [...summary.warnings];
  if (summary.stopReason === 'maxPages' && !warnings.some((w) => w.startsWith('Max Pages reached'))) {
    warnings.push(maxPagesWarning(endpoint.pagination.maxPages));
  }
  return warnings;
}

/** How fetching ended: every page staged (and where each record came from), or why the run goes no further. */
type Fetched =
  | { readonly summary: FetchSummary; readonly origins: RecordOrigins; readonly cursor: CursorTracker }
  | { readonly failed: string }
  | { readonly lost: string };

const LEASE_LOST_WHILE_FETCHING = { lost: 'lease lost while fetching (taken over after expiry); stopped' } as const;

/**
 * Fetches every page, staging each as it arrives (its records found by the integration's records path
 * or the endpoint's Response Data Path: rest-source/page-records.ts). Pages are buffered for a few
 * milliseconds and staged several per commit; whatever ends the fetch, the pages fetched before it,
 * and the page that ended it, are staged first (a failed run shows them), unless the lease was lost.
 */
async function fetchAndStage(ctx: ImportRunContext, run: ClaimedRun, loaded: Loaded, store: RunStore): Promise<Fetched> {
  const { db, owner } = ctx;
  const { runId } = run;
  const { recordsPath } = loaded.plan.integration;
  const { method } = loaded.endpoint;
  const buffer = store.pageBuffer(ctx.staging ?? DEFAULT_STAGING_LIMITS, loaded.mapping);
  const origins = new RecordOrigins();
  const cursor = cursorTracker(loaded.endpoint.incremental, loaded.endpoint.cursorAtLoad ?? null);
  let stopped: { readonly failed: string } | { readonly lost: string } | undefined;
  const stop = (why: NonNullable<typeof stopped>): never => {
    stopped = why;
    throw new Error(`import run ${runId} stopped fetching`);
  };
  try {
    const summary = await ctx.sources.fetchPages(
      loaded.connection,
      loaded.endpoint,
      (page) => {
        // A page whose records are not found is staged empty, so that the failed run's log shows it.
        const records = page.records ?? [];
        origins.add(page.pageNo, records.length);
        const badCursor = cursor.add(page.pageNo, records);
        const staged = (added: boolean): void => {
          if (!added) stop(LEASE_LOST_WHILE_FETCHING);
          if (page.records === null) stop({ failed: `page ${page.pageNo} (${method} ${page.url}): ${page.whyNoRecords ?? 'no records'}` });
          if (badCursor !== null) stop({ failed: badCursor });
        };
        // SQLite's buffer answers at once: its pages are handed over without a promise per page.
        const added = buffer.add({ pageNo: page.pageNo, url: page.url, records });
        return typeof added === 'boolean' ? staged(added) : added.then(staged);
      },
      {
        recordsPath,
        ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
        ...(ctx.metrics === undefined ? {} : { onRetry: retriesOf(ctx.metrics) }),
      },
    );
    return (await buffer.flush()) ? { summary, origins, cursor } : LEASE_LOST_WHILE_FETCHING;
  } catch (err) {
    if (stopped !== undefined && 'lost' in stopped) return stopped;
    if (ctx.signal?.aborted === true) {
      await buffer.close();
      await releaseRun(db, { runId, owner });
      return { lost: 'stopping: the run goes back to Queued and starts again from page 1' };
    }
    const why = stopped?.failed ?? ctx.sources.describeFetchError(err);
    if (why === undefined) throw err;
    return (await buffer.flush()) ? { failed: why } : LEASE_LOST_WHILE_FETCHING;
  } finally {
    await buffer.close();
  }
}

const retriesOf =
  (metrics: Metrics) =>
  (status: string): void =>
    metrics.remoteRetries.inc({ status });

/** Runs one claimed run to its end: Completed, Failed, or lost (the lease went to someone else, or this worker stops). */
export async function executeRun(ctx: ImportRunContext, run: ClaimedRun): Promise<RunResult> {
  const { runId } = run;
  const log = ctx.logger.child({ runId, endpointCode: run.endpointCode, attempt: run.attempts });
  let store: RunStore;
  try {
    const heartbeat = ctx.heartbeatMs === undefined ? {} : { heartbeatMs: ctx.heartbeatMs };
    store = await openRunStore(ctx.db, {
      runId,
      owner: ctx.owner,
      leaseMs: ctx.leaseMs,
      startedAt: run.startedAt,
      clock: ctx.clock,
      log,
      ...heartbeat,
    });
  } catch (err) {
    log.error({ err }, 'could not start the run');
    try {
      const now = ctx.clock();
      const ended = { runId, owner: ctx.owner, now, durationMs: 0, errorMessage: `cannot start the run: ${message(err)}` };
      return (await failRunWithoutStore(ctx.db, ended)) ? 'failed' : 'lost';
    } catch {
      // No connection at all (PostgreSQL unreachable): leave the run to its lease, the reaper retries it.
      return 'lost';
    }
  }
  try {
    return await runOn(ctx, run, store, log);
  } finally {
    await store.close();
  }
}

async function runOn(ctx: ImportRunContext, run: ClaimedRun, store: RunStore, log: Logger): Promise<RunResult> {
  const { db, owner, leaseMs } = ctx;
  const { runId } = run;
  const startedMs = Date.parse(run.startedAt);
  const durationMs = (at: Date): number => Math.max(0, at.getTime() - startedMs);
  const fail = async (errorMessage: string): Promise<RunResult> => {
    const now = ctx.clock();
    if (!(await store.fail({ runId, owner, now, durationMs: durationMs(now), errorMessage }))) return 'lost';
    log.warn({ errorMessage }, 'import run failed');
    return 'failed';
  };

  try {
    await store.discardStaged();
    const loaded = await load(ctx, run);
    if (typeof loaded === 'string') return await fail(loaded);
    const fetched = await store.scratch(async (): Promise<Fetched> => {
      const ended = await fetchAndStage(ctx, run, loaded, store);
      // The lease is renewed for the import. Like staging, a renewal need not survive a crash: the
      // worker that renewed it would not survive it either.
      if ('summary' in ended && !(await heartbeatRun(db, { runId, owner, now: ctx.clock(), leaseMs }))) {
        return { lost: 'lease lost before the import started; skipped' };
      }
      return ended;
    });
    if ('failed' in fetched) return await fail(fetched.failed);
    if ('lost' in fetched) {
      await store.clearStaged();
      log.warn(fetched.lost);
      return 'lost';
    }
    const { summary, origins, cursor } = fetched;

    const warnings = runWarnings(summary, loaded.endpoint);
    const { stopReason, stopDetail } = summary;
    const started = Date.now();
    // One transaction for all pages; its last write (Completed or Failed) is fenced by the lease.
    // Record errors say where each record came from: `record 12 (page 3, record 2): …`.
    const { committed, outcome: imported } = await store.importStaged({ plan: loaded.plan, tables: loaded.tables }, (outcome): RunEnd => {
      const result = origins.locatedOutcome(outcome);
      const now = ctx.clock();
      const errors = result.errors.map((e) => {
        const origin = e.recordNo === null ? undefined : origins.locate(e.recordNo);
        return { ...e, pageNo: origin?.pageNo ?? null, recordOnPage: origin?.position ?? null };
      });
      const ended = {
        runId,
        owner,
        now,
        durationMs: durationMs(now),
        stopReason,
        stopDetail,
        warnings,
        errors,
        errorMessage: result.errorMessage,
      };
      return result.ok
        ? {
            complete: {
              ...ended,
              inserted: result.inserted,
              updated: result.updated,
              skipped: result.skipped,
              bookmark: cursor.move(run.endpointCode, run.startedAt),
            },
          }
        : { fail: ended };
    });
    if (!committed) {
      await store.clearStaged();
      log.warn('lease lost while importing; the import was rolled back');
      return 'lost';
    }
    const outcome = origins.locatedOutcome(imported);
    ctx.metrics?.pagesFetched.inc(summary.pagesFetched);
    if (outcome.ok) ctx.metrics?.recordsWritten.inc({ source: 'rest' }, outcome.recordCount);
    const details = { pages: summary.pagesFetched, stopReason, stopDetail, warnings, importMs: Date.now() - started };
    if (outcome.ok) log.info({ ...details, written: outcome.recordCount, skipped: outcome.skipped }, 'import run completed');
    else log.info({ ...details, errors: outcome.errorCount, errorMessage: outcome.errorMessage }, 'import run failed');
    return outcome.ok ? 'completed' : 'failed';
  } catch (err) {
    if (err instanceof ImportAborted) {
      // Cancelled by an administrator: rolled back; let the cancel's status write have the lock first.
      await abortBoard(db)?.waitLowered(runAbortKey(runId), ctx.abortYieldMs ?? ABORT_YIELD_MS);
      await store.clearStaged().catch(() => undefined);
      log.warn('the import was aborted (the run was cancelled by an administrator) and rolled back');
      return 'lost';
    }
    log.error({ err }, 'internal error while running an import');
    try {
      return await fail(`internal error while running the import: ${message(err)}`);
    } catch (failErr) {
      // The database itself is failing: leave the run to its lease, the reaper retries it.
      log.error({ err: failErr }, 'could not mark the run Failed; its lease will expire and it is retried');
      return 'lost';
    }
  }
}
