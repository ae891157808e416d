/**
 * The Bulk Import Processor: drains Pending requests one at a time. Each request is claimed under a
 * lease, imported in one transaction, and finished (Completed or Failed) inside that transaction by
 * a write fenced with the lease token, so a worker that lost its lease commits nothing. Whatever goes
 * wrong with one request fails that request and the drain goes on.
 *
 * The two dialects differ only in how the import transaction is held: on SQLite synchronously on the
 * worker thread's own connection (sqlite/import-request.ts); on PostgreSQL on a pooled client inside a
 * leased transaction, the lease renewed meanwhile on another connection (postgres/import-request.ts).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { getIntegrationPlan } from '../integrations/store.js';
import { abortBoard } from '../storage/abort-board.js';
import { ImportAborted } from '../table-writer/model.js';
import { requestAbortKey } from './abort-import.js';
import { connectionOf } from '../storage/connection.js';
import { getTableWithRelations } from '../tables/store.js';
import { claimNextRequest } from './claim-request.js';
import { failRequest } from './fail-request.js';
import { heartbeatRequest } from './heartbeat-request.js';
import type { ImportFn, ImportFnPg, ImportJob, Imported } from './import-job.js';
import { importRequestOnPostgres } from './postgres/import-request.js';
import { importRequestOnSqlite } from './sqlite/import-request.js';
import type { ClaimedRequest } from './model.js';
import { reapExpiredLeases } from './reap-expired-requests.js';
import type { WorkerContext } from '../job-queue/worker-context.js';
import type { Metrics } from '../core/metrics.js';

export type { ImportFn, ImportFnPg } from './import-job.js';

export interface ProcessorContext extends WorkerContext {
  /** The importer on SQLite; tests may substitute one. */
  readonly importPayload?: ImportFn;
  /** The importer on PostgreSQL; tests may substitute one. */
  readonly importPayloadPg?: ImportFnPg;
  /** PostgreSQL: how often the lease is renewed while a request imports (default: a third of the lease). */
  readonly heartbeatMs?: number;
  /** After an aborted import, how long to wait for the cancel's status write at most (default ABORT_YIELD_MS). */
  readonly abortYieldMs?: number;
}

/** After an aborted import, how long the worker waits for the cancel's status write before it claims again. */
const ABORT_YIELD_MS = 5000;

export type RequestResult = 'completed' | 'failed' | 'lost';

export interface DrainResult {
  readonly completed: number;
  readonly failed: number;
  /** Requests whose lease was lost mid-way (cancelled, reset or taken over): nothing was committed. */
  readonly lost: number;
  /** Expired leases returned to Pending, and those failed for good. */
  readonly requeued: number;
  readonly interrupted: number;
}

/** `now`, when given, is the time of every transition of this drain; otherwise the clock is read at each. */
export async function processPendingRequests(ctx: ProcessorContext, now?: Date): Promise<DrainResult> {
  const time = (): Date => now ?? ctx.clock();
  const reaped = await reapExpiredLeases(ctx.db, { now: time(), maxAttempts: ctx.maxAttempts });
  if (reaped.requeued.length > 0) ctx.logger.warn({ requestIds: reaped.requeued }, 'expired leases: requests returned to Pending');
  if (reaped.failed.length > 0) ctx.logger.error({ requestIds: reaped.failed }, 'expired leases: requests interrupted too often, failed');

  const counts: Record<RequestResult, number> = { completed: 0, failed: 0, lost: 0 };
  for (let first = true; ; first = false) {
    if (!first && ctx.keepGoing !== undefined && !(await ctx.keepGoing())) break;
    const claimed = await claimNextRequest(ctx.db, { owner: ctx.owner, now: time(), leaseMs: ctx.leaseMs });
    if (claimed === undefined) break;
    ctx.onClaim?.(`request ${claimed.requestId}`);
    const result = await processRequest(ctx, claimed, time);
    counts[result] += 1;
    if (ctx.metrics !== undefined) countRequest(ctx.metrics, claimed, result, time());
    // Let a stop or wake message in between two requests: everything above may complete synchronously.
    await nextTurn();
  }
  return { ...counts, requeued: reaped.requeued.length, interrupted: reaped.failed.length };
}

async function processRequest(ctx: ProcessorContext, claimed: ClaimedRequest, time: () => Date): Promise<RequestResult> {
  const { db, owner } = ctx;
  const { requestId } = claimed;
  const log = ctx.logger.child({ requestId, integrationSortingOrder: claimed.integrationSortingOrder, attempt: claimed.attempts });
  const fail = async (errorMessage: string): Promise<RequestResult> => {
    if (!(await failRequest(connectionOf(db), { requestId, owner, now: time(), errorMessage }))) return 'lost';
    log.warn({ errorMessage }, 'bulk import request failed');
    return 'failed';
  };
  try {
    const plan = await getIntegrationPlan(db, claimed.integrationSortingOrder);
    // Acceptance was decided at submit: a request already accepted is processed even if the
    // integration stopped accepting bulk requests since. Only a deleted integration fails it.
    if (plan === undefined) return await fail(`integration ${claimed.integrationSortingOrder} no longer exists`);
    const tables = await getTableWithRelations(db, plan.integration.targetTable);
    if (!tables.has(plan.integration.targetTable)) {
      return await fail(
        `target table "${plan.integration.targetTable}" of integration ${claimed.integrationSortingOrder} no longer exists`,
      );
    }
    // Loading took long (a busy database): renew the lease before the import, or give up if it is gone.
    // Usually it took milliseconds, and the import's fenced finish is the check that matters.
    const leaseLeft = Date.parse(claimed.leaseExpiresAt) - time().getTime();
    if (leaseLeft < ctx.leaseMs / 2 && !(await heartbeatRequest(db, { requestId, owner, now: time(), leaseMs: ctx.leaseMs }))) {
      log.warn('lease lost before the import started (cancelled, reset or taken over); skipped');
      return 'lost';
    }

    const started = Date.now();
    const job: ImportJob = {
      requestId,
      owner,
      leaseMs: ctx.leaseMs,
      startedAt: claimed.startedAt,
      input: { plan, tables, payload: claimed.payload },
      payloadChunks: claimed.payloadChunks,
      payloadLength: claimed.payloadLength,
      time,
      log,
    };
    const imported = await importInTransaction(ctx, job);
    if (!imported.committed) {
      log.warn('lease lost while importing (cancelled, reset or taken over); the import was rolled back');
      return 'lost';
    }
    const { outcome } = imported;
    const ms = Date.now() - started;
    if (outcome.ok) ctx.metrics?.recordsWritten.inc({ source: 'bulk' }, outcome.recordCount);
    if (outcome.ok) log.info({ records: outcome.recordCount, skipped: outcome.skipped, ms }, 'bulk import request completed');
    else log.info({ errors: outcome.errorCount, ms, errorMessage: outcome.errorMessage }, 'bulk import request failed');
    return outcome.ok ? 'completed' : 'failed';
  } catch (err) {
    if (err instanceof ImportAborted) {
      // Cancelled or reset by an administrator: rolled back; let its status write have the lock first.
      await abortBoard(db)?.waitLowered(requestAbortKey(requestId), ctx.abortYieldMs ?? ABORT_YIELD_MS);
      log.warn('the import was aborted (cancelled or reset by an administrator) and rolled back');
      return 'lost';
    }
    log.error({ err }, 'internal error while processing a bulk import request');
    try {
      return await fail(`internal error while processing: ${err instanceof Error ? err.message : String(err)}`);
    } catch (failErr) {
      // The database itself is failing: leave the request to its lease, the reaper retries it.
      log.error({ err: failErr }, 'could not mark the request Failed; its lease will expire and it is retried');
      return 'lost';
    }
  }
}

/** The request's end in the metrics: counters and two observations, nothing else on the hot path. */
function countRequest(metrics: Metrics, claimed: ClaimedRequest, result: RequestResult, now: Date): void {
  if (result === 'lost') return;
  const integration = String(claimed.integrationSortingOrder);
  const ended = now.getTime();
  metrics.processingSeconds.observe({ integration }, (ended - Date.parse(claimed.startedAt)) / 1000);
  if (result === 'failed') {
    metrics.requestsFailed.inc({ integration });
    return;
  }
  metrics.requestsCompleted.inc({ integration });
  metrics.submitToCompletedSeconds.observe({ integration }, (ended - Date.parse(claimed.submittedAt)) / 1000);
}

function importInTransaction(ctx: ProcessorContext, job: ImportJob): Imported | Promise<Imported> {
  const { db } = ctx;
  if (db.dialect === 'sqlite') return importRequestOnSqlite(db, job, ctx.importPayload);
  return importRequestOnPostgres(db, job, { importer: ctx.importPayloadPg, heartbeatMs: ctx.heartbeatMs });
}
