/**
 * The import run orchestrator: drains Queued runs one at a time on the job queue's thread. A run
 * fetches every page of its endpoint, staging the pages in the database as they arrive (several per
 * commit, see page-buffer.ts); then the staged pages are read back one by one into a single import
 * transaction whose last write (Completed or Failed) is fenced by the run's lease. A page that fails,
 * an integration error (fail mode) or a lost lease imports nothing.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AppError } from '../errors.js';
import { importRecordBatches } from '../importer/importer.js';
import type { IntegrationPlan } from '../integrations/model.js';
import { getIntegrationPlan } from '../integrations/store.js';
import { compileMapping } from '../mapping/engine.js';
import type { PathGetter } from '../mapping/paths.js';
import { maxPagesWarning } from '../pagination/steps.js';
import type { FetchSummary, RestConnection, RestEndpoint } from '../rest/model.js';
import { sqliteOf } from '../storage/database.js';
import { withScratchCommits } from '../storage/sqlite.js';
import type { TargetTable } from '../tables/model.js';
import { getTableWithRelations } from '../tables/store.js';
import { claimNextRun } from './claim-run.js';
import { completeRun } from './complete-run.js';
import { failRun } from './fail-run.js';
import { heartbeatRun } from './heartbeat-run.js';
import type { ClaimedRun } from './model.js';
import { pageRecords } from './page-records.js';
import { reapExpiredRuns } from './reap-expired-runs.js';
import { releaseRun } from './release-run.js';
import type { ImportSources } from './sources-model.js';
import type { WorkerContext } from '../queue/worker-context.js';
import { createPageBuffer, DEFAULT_STAGING_LIMITS, type StagingLimits } from './page-buffer.js';
import { discardStagedPages, stagePages } from './stage-page.js';
import { stagedPages } from './staged-pages.js';
import { clearStagedRecords } from './staged-records.js';

export interface ImportRunContext extends WorkerContext {
  readonly sources: ImportSources;
  /** Aborts the fetch of the current run (shutdown); the run is then retried after its lease expires. */
  readonly signal?: AbortSignal;
  /** How fetched pages are batched into staging commits; default DEFAULT_STAGING_LIMITS. */
  readonly staging?: StagingLimits;
}

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
    counts[await executeRun(ctx, run)] += 1;
    await nextTurn();
  }
  return { ...counts, requeued: reaped.requeued.length, interrupted: reaped.failed.length };
}

interface Loaded {
  readonly endpoint: RestEndpoint;
  readonly connection: RestConnection;
  readonly plan: IntegrationPlan;
  readonly tables: ReadonlyMap<string, TargetTable>;
  /** The integration's records path, compiled. */
  readonly getRecords: PathGetter;
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
  const plan = await getIntegrationPlan(ctx.db.kysely, run.integrationSortingOrder);
  if (plan === undefined) return `integration ${run.integrationSortingOrder} no longer exists`;
  const tables = await getTableWithRelations(ctx.db.kysely, plan.integration.targetTable);
  try {
    // The importer would refuse a broken integration too, but only after every page was fetched.
    const { records } = compileMapping(plan, tables);
    return { endpoint, connection, plan, tables, getRecords: records };
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

/** How fetching ended: every page staged, or why the run goes no further. */
type Fetched = { readonly summary: FetchSummary } | { readonly failed: string } | { readonly lost: string };

const LEASE_LOST_WHILE_FETCHING = { lost: 'lease lost while fetching (taken over after expiry); stopped' } as const;

/**
 * Fetches every page, staging each (its records by the integration's records path) as it arrives.
 * Pages are buffered for a few milliseconds and staged several per commit; whatever ends the fetch,
 * the pages fetched before it are staged first (a failed run shows them), unless the lease was lost.
 */
async function fetchAndStage(ctx: ImportRunContext, run: ClaimedRun, loaded: Loaded): Promise<Fetched> {
  const { db, owner, leaseMs } = ctx;
  const { runId } = run;
  const { recordsPath } = loaded.plan.integration;
  const buffer = createPageBuffer((pages) => stagePages(db, { runId, owner, now: ctx.clock(), leaseMs, pages }), ctx.staging ?? DEFAULT_STAGING_LIMITS);
  let stopped: { readonly failed: string } | { readonly lost: string } | undefined;
  try {
    const summary = await ctx.sources.fetchPages(
      loaded.connection,
      loaded.endpoint,
      (page) => {
        const records = pageRecords(page, recordsPath, loaded.getRecords);
        if (typeof records === 'string') stopped = { failed: records };
        else if (!buffer.add({ pageNo: page.pageNo, url: page.url, records })) stopped = LEASE_LOST_WHILE_FETCHING;
        if (stopped !== undefined) throw new Error(`import run ${runId} stopped fetching`);
      },
      ctx.signal === undefined ? {} : { signal: ctx.signal },
    );
    return buffer.flush() ? { summary } : LEASE_LOST_WHILE_FETCHING;
  } catch (err) {
    if (stopped !== undefined && 'lost' in stopped) return stopped;
    if (ctx.signal?.aborted === true) {
      buffer.close();
      await releaseRun(db, { runId, owner });
      return { lost: 'stopping: the run goes back to Queued and starts again from page 1' };
    }
    const why = stopped?.failed ?? ctx.sources.describeFetchError(err);
    if (why === undefined) throw err;
    return buffer.flush() ? { failed: why } : LEASE_LOST_WHILE_FETCHING;
  } finally {
    buffer.close();
  }
}

/** Runs one claimed run to its end: Completed, Failed, or lost (the lease went to someone else, or this worker stops). */
export async function executeRun(ctx: ImportRunContext, run: ClaimedRun): Promise<RunResult> {
  const { db, owner, leaseMs } = ctx;
  const { runId } = run;
  const log = ctx.logger.child({ runId, endpointCode: run.endpointCode, attempt: run.attempts });
  const startedMs = Date.parse(run.startedAt);
  const durationMs = (at: Date): number => Math.max(0, at.getTime() - startedMs);
  const fail = (errorMessage: string): RunResult => {
    const now = ctx.clock();
    if (!failRun(db, { runId, owner, now, durationMs: durationMs(now), errorMessage })) return 'lost';
    log.warn({ errorMessage }, 'import run failed');
    return 'failed';
  };

  try {
    await discardStagedPages(db, { runId, owner });
    const loaded = await load(ctx, run);
    if (typeof loaded === 'string') return fail(loaded);
    const fetched = await withScratchCommits(sqliteOf(db), async (): Promise<Fetched> => {
      const ended = await fetchAndStage(ctx, run, loaded);
      // The lease is renewed for the import. Like staging, a renewal need not survive a crash: the
      // worker that renewed it would not survive it either.
      if ('summary' in ended && !(await heartbeatRun(db, { runId, owner, now: ctx.clock(), leaseMs }))) {
        return { lost: 'lease lost before the import started; skipped' };
      }
      return ended;
    });
    if ('failed' in fetched) return fail(fetched.failed);
    if ('lost' in fetched) {
      clearStagedRecords(sqliteOf(db), runId);
      log.warn(fetched.lost);
      return 'lost';
    }
    const { summary } = fetched;

    const warnings = runWarnings(summary, loaded.endpoint);
    const { stopReason, stopDetail } = summary;
    const started = Date.now();
    // One transaction for all pages; its last write (Completed or Failed) is fenced by the lease.
    const { committed, outcome } = importRecordBatches(sqliteOf(db), { plan: loaded.plan, tables: loaded.tables, batches: stagedPages(sqliteOf(db), runId) }, (result) => {
      const now = ctx.clock();
      const ended = { runId, owner, now, durationMs: durationMs(now), stopReason, stopDetail, warnings, errorMessage: result.errorMessage };
      return result.ok ? completeRun(db, { ...ended, inserted: result.inserted, updated: result.updated, skipped: result.skipped }) : failRun(db, ended);
    });
    if (!committed) {
      clearStagedRecords(sqliteOf(db), runId);
      log.warn('lease lost while importing; the import was rolled back');
      return 'lost';
    }
    const details = { pages: summary.pagesFetched, stopReason, stopDetail, warnings, importMs: Date.now() - started };
    if (outcome.ok) log.info({ ...details, written: outcome.recordCount, skipped: outcome.skipped }, 'import run completed');
    else log.info({ ...details, errors: outcome.errorCount, errorMessage: outcome.errorMessage }, 'import run failed');
    return outcome.ok ? 'completed' : 'failed';
  } catch (err) {
    log.error({ err }, 'internal error while running an import');
    try {
      return fail(`internal error while running the import: ${message(err)}`);
    } catch (failErr) {
      // The database itself is failing: leave the run to its lease, the reaper retries it.
      log.error({ err: failErr }, 'could not mark the run Failed; its lease will expire and it is retried');
      return 'lost';
    }
  }
}
