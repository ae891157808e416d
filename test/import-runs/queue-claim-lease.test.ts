/**
 * Import run transitions (queue, claim, stage, complete, fail, reap, release), endpoint schedules as
 * job queue entries, and the runner's two new job kinds, with a manual clock and no sleeping.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { claimNextRun } from '../../src/import-runs/claim-run.js';
import { completeRun } from '../../src/import-runs/complete-run.js';
import { failRun } from '../../src/import-runs/fail-run.js';
import { getRun } from '../../src/import-runs/queries.js';
import { queueEndpointRun } from '../../src/import-runs/queue-endpoint-run.js';
import { findActiveRun, queueRun } from '../../src/import-runs/queue-run.js';
import { reapExpiredRuns } from '../../src/import-runs/reap-expired-runs.js';
import { runQueuedImports, type ImportRunContext } from '../../src/import-runs/run-imports.js';
import { endpointEntryId, syncEndpointSchedule } from '../../src/rest-source/schedule.js';
import { getEntry, listEntries } from '../../src/job-queue/entries.js';
import { holdEntry } from '../../src/job-queue/hold-entry.js';
import { IMPORT_RUN_PROCESSOR_ENTRY } from '../../src/import-runs/jobs.js';
import { jobKinds } from '../../src/main/jobs.js';
import { createQueueRunner, type QueueRunner } from '../../src/job-queue/runner.js';
import { deleteEndpoint, updateEndpoint } from '../../src/rest-source/service.js';
import { stagedRowsTable } from '../../src/table-writer/sqlite/staged-rows.js';
import { type TestDatabase } from '../helpers/db.js';
import {
  addEndpoint,
  ENDPOINTS,
  itemIds,
  range,
  silentLogger,
  stagedCounts,
  stageItemsPage,
  START,
  watchingPages,
  type ManualClock,
} from '../helpers/import-fixtures.js';
import { type PagingServer } from '../helpers/paging-server.js';
import { openRunQueue, usePagingServer } from '../helpers/run-queue.js';

const LEASE_MS = 300_000;
const iso = (ms = 0) => new Date(Date.parse(START) + ms).toISOString();

let server: PagingServer;
let t: TestDatabase;
let clock: ManualClock;
let ctx: ImportRunContext;

const pagingServer = usePagingServer();
beforeEach(async () => {
  server = pagingServer();
  ({ t, clock, ctx } = await openRunQueue(server, { records: 25, pageSize: 10, endpoints: { numbered: ENDPOINTS.pageNumber } }));
});
afterEach(async () => {
  await t.cleanup();
});

const runRow = (runId: string) =>
  t.db.sqlite.prepare('select * from ifw_import_run where run_id = ?').get(runId) as Record<string, unknown>;
const queue = (endpointCode = 'numbered', now = clock()) =>
  queueRun(t.db, { endpointCode, integrationSortingOrder: 20, trigger: 'manual', now });
const page = (pageNo: number, records: unknown[] = [{ id: pageNo, name: `p${pageNo}` }]) => ({
  pageNo,
  url: `http://x/p?page=${pageNo}`,
  records,
});

describe('queueRun', () => {
  it('queues a run with a GUID id, the endpoint, its integration and the trigger', async () => {
    const run = await queue();
    expect(run).toMatchObject({
      endpointCode: 'numbered',
      integrationSortingOrder: 20,
      trigger: 'manual',
      status: 'Queued',
      queuedAt: START,
      pagesFetched: 0,
      warnings: [],
      errorMessage: '',
    });
    expect(run.runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('refuses a second run with 409 conflict while the first is Queued or Running: a run in progress is not started twice', async () => {
    const first = await queue();
    const refused = await queue().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ status: 409, code: 'conflict' });
    expect((refused as AppError).message).toContain(first.runId);
    expect((refused as AppError).message).toContain('a run still in progress is not started twice');

    await claimNextRun(t.db, { owner: 'w1', now: clock(), leaseMs: LEASE_MS });
    await expect(queue()).rejects.toMatchObject({ status: 409 });
  });

  it('queues again once the earlier run ended, and other endpoints independently', async () => {
    await addEndpoint(t.db, clock, 'offsets', ENDPOINTS.offsetLimit);
    await queue();
    await expect(queue('offsets')).resolves.toMatchObject({ status: 'Queued' });
    await runQueuedImports(ctx);
    await expect(queue()).resolves.toMatchObject({ status: 'Queued' });
  });

  it('answers 404 for an unknown endpoint (queueEndpointRun)', async () => {
    await expect(queueEndpointRun(t.db, 'nope', 'manual', clock())).rejects.toMatchObject({ status: 404 });
  });
});

describe('claimNextRun', () => {
  it('takes the oldest Queued run under a lease and counts the attempt', async () => {
    await addEndpoint(t.db, clock, 'offsets', ENDPOINTS.offsetLimit);
    const older = await queue('numbered', new Date(iso(0)));
    await queue('offsets', new Date(iso(1)));

    const claimed = await claimNextRun(t.db, { owner: 'w1', now: clock(), leaseMs: LEASE_MS });

    expect(claimed).toEqual({
      runId: older.runId,
      endpointCode: 'numbered',
      integrationSortingOrder: 20,
      attempts: 1,
      leaseOwner: 'w1',
      leaseExpiresAt: iso(LEASE_MS),
      startedAt: START,
    });
    expect(runRow(older.runId)).toMatchObject({ status: 'Running', lease_owner: 'w1', started_at: START });
  });

  it('lets exactly one of two racing claims win', async () => {
    await queue();
    const claims = await Promise.all([
      claimNextRun(t.db, { owner: 'w1', now: clock(), leaseMs: LEASE_MS }),
      claimNextRun(t.db, { owner: 'w2', now: clock(), leaseMs: LEASE_MS }),
    ]);
    expect(claims.filter((c) => c !== undefined)).toHaveLength(1);
  });

  it('claims only the named run when given one', async () => {
    await addEndpoint(t.db, clock, 'offsets', ENDPOINTS.offsetLimit);
    await queue('numbered', new Date(iso(0)));
    const newer = await queue('offsets', new Date(iso(1)));
    const claimed = await claimNextRun(t.db, { owner: 'cli', now: clock(), leaseMs: LEASE_MS, runId: newer.runId });
    expect(claimed?.runId).toBe(newer.runId);
  });
});

describe('staging and finishing, fenced by the lease', () => {
  it('staging stores the records mapped, counts pages and records, and renews the lease', async () => {
    const { runId } = await queue();
    await claimNextRun(t.db, { owner: 'w1', now: clock(), leaseMs: LEASE_MS });

    expect(
      await stageItemsPage(t.db, {
        runId,
        owner: 'w1',
        now: new Date(iso(5000)),
        leaseMs: LEASE_MS,
        page: page(1, [{ id: 1, name: 'one' }, { id: 2 }]),
      }),
    ).toBe(true);

    expect(runRow(runId)).toMatchObject({ pages_fetched: 1, records_fetched: 2, lease_expires_at: iso(5000 + LEASE_MS) });
    expect(t.db.sqlite.prepare('select page_no, url, records_fetched, records from ifw_import_run_page').all()).toEqual([
      { page_no: 1, url: 'http://x/p?page=1', records_fetched: 2, records: null },
    ]);
    // The records wait, mapped, in the staging connection's own TEMP table, outside the database file;
    // a record that broke a rule (no name) waits as its JSON, to be mapped again for the exact message.
    expect(t.db.sqlite.prepare(`select record_no, raw, c0, c1 from ${stagedRowsTable(t.db.sqlite, runId)}`).all()).toEqual([
      { record_no: 1, raw: null, c0: 1, c1: 'one' },
      { record_no: 2, raw: '{"id":2}', c0: null, c1: null },
    ]);
  });

  it('staging by a worker that lost the lease changes nothing in the database', async () => {
    const { runId } = await queue();
    await claimNextRun(t.db, { owner: 'w1', now: clock(), leaseMs: LEASE_MS });

    expect(await stageItemsPage(t.db, { runId, owner: 'w2', now: clock(), leaseMs: LEASE_MS, page: page(1) })).toBe(false);

    expect(runRow(runId)).toMatchObject({ pages_fetched: 0, lease_owner: 'w1' });
    // The records went to the connection's TEMP table as the page arrived; the run that finds its lease
    // lost drops them (see the contract tests: no staged records are left after any ending).
    expect(stagedCounts(t.db, runId)).toEqual({ pages: 0, records: 1 });
  });

  it('completeRun sets counts, stop reason, warnings and duration, and clears the staged records', async () => {
    const { runId } = await queue();
    await claimNextRun(t.db, { owner: 'w1', now: clock(), leaseMs: LEASE_MS });
    await stageItemsPage(t.db, { runId, owner: 'w1', now: clock(), leaseMs: LEASE_MS, page: page(1) });
    const args = {
      runId,
      now: new Date(iso(1500)),
      durationMs: 1500,
      inserted: 1,
      updated: 0,
      skipped: 0,
      stopReason: 'maxPages',
      stopDetail: 'stopped',
      warnings: ['w'],
      errorMessage: '',
    } as const;

    expect(completeRun(t.db, { ...args, owner: 'w2' })).toBe(false);
    expect(completeRun(t.db, { ...args, owner: 'w1' })).toBe(true);

    expect(await getRun(t.db, runId)).toMatchObject({
      status: 'Completed',
      endedAt: iso(1500),
      durationMs: 1500,
      insertedCount: 1,
      stopReason: 'maxPages',
      stopDetail: 'stopped',
      warnings: ['w'],
    });
    expect(runRow(runId)).toMatchObject({ lease_owner: null, lease_expires_at: null });
    expect(stagedCounts(t.db, runId)).toEqual({ pages: 1, records: 0 });
  });

  it('failRun sets the error and clears the staged records; a lost lease changes nothing', async () => {
    const { runId } = await queue();
    await claimNextRun(t.db, { owner: 'w1', now: clock(), leaseMs: LEASE_MS });
    await stageItemsPage(t.db, { runId, owner: 'w1', now: clock(), leaseMs: LEASE_MS, page: page(1) });

    expect(failRun(t.db, { runId, owner: 'w2', now: clock(), durationMs: 1, errorMessage: 'x' })).toBe(false);
    expect(failRun(t.db, { runId, owner: 'w1', now: clock(), durationMs: 7, errorMessage: 'page 2 (GET u): boom' })).toBe(true);

    expect(await getRun(t.db, runId)).toMatchObject({
      status: 'Failed',
      errorMessage: 'page 2 (GET u): boom',
      durationMs: 7,
      insertedCount: 0,
    });
    expect(stagedCounts(t.db, runId)).toEqual({ pages: 1, records: 0 });
  });
});

describe('expired leases', () => {
  it('reapExpiredRuns puts an expired Running run back to Queued, and fails it after maxAttempts', async () => {
    const { runId } = await queue();
    await claimNextRun(t.db, { owner: 'w1', now: clock(), leaseMs: LEASE_MS });

    expect(await reapExpiredRuns(t.db, { now: new Date(iso(LEASE_MS - 1)), maxAttempts: 2 })).toEqual({ requeued: [], failed: [] });
    expect(await reapExpiredRuns(t.db, { now: new Date(iso(LEASE_MS + 1)), maxAttempts: 2 })).toEqual({ requeued: [runId], failed: [] });
    expect(runRow(runId)).toMatchObject({ status: 'Queued', attempts: 1, lease_owner: null });

    await claimNextRun(t.db, { owner: 'w2', now: new Date(iso(LEASE_MS + 2)), leaseMs: LEASE_MS });
    await stageItemsPage(t.db, { runId, owner: 'w2', now: new Date(iso(LEASE_MS + 2)), leaseMs: LEASE_MS, page: page(1) });
    expect(await reapExpiredRuns(t.db, { now: new Date(iso(3 * LEASE_MS)), maxAttempts: 2 })).toEqual({ requeued: [], failed: [runId] });
    expect(await getRun(t.db, runId)).toMatchObject({ status: 'Failed', attempts: 2 });
    expect((await getRun(t.db, runId))!.errorMessage).toContain('interrupted 2 times');
    expect(stagedCounts(t.db, runId)).toEqual({ pages: 1, records: 0 });
  });

  it('a run taken over after an interrupted attempt fetches again from page 1 and imports each record once', async () => {
    const { runId } = await queue();
    await claimNextRun(t.db, { owner: 'dead-worker', now: clock(), leaseMs: LEASE_MS });
    await stageItemsPage(t.db, {
      runId,
      owner: 'dead-worker',
      now: clock(),
      leaseMs: LEASE_MS,
      page: page(1, [{ id: 999, name: 'stale' }]),
    });
    clock.advance(LEASE_MS + 1);

    const result = await runQueuedImports(ctx);

    expect(result).toMatchObject({ requeued: 1, completed: 1 });
    expect(await getRun(t.db, runId)).toMatchObject({
      status: 'Completed',
      attempts: 2,
      pagesFetched: 3,
      recordsFetched: 25,
      insertedCount: 25,
    });
    expect(itemIds(t.db)).toEqual(range(1, 25));
  });

  it('a worker that stops mid-fetch puts its run back to Queued; the next drain runs it', async () => {
    const stop = new AbortController();
    const { runId } = await queue();
    const stopping: ImportRunContext = {
      ...watchingPages(ctx, {
        after: (page) => {
          if (page.pageNo === 2) stop.abort(new Error('shutting down'));
        },
      }),
      signal: stop.signal,
    };

    expect(await runQueuedImports(stopping)).toMatchObject({ lost: 1, completed: 0 });
    expect(runRow(runId)).toMatchObject({ status: 'Queued', attempts: 0, lease_owner: null });
    expect(itemIds(t.db)).toEqual([]);

    expect(await runQueuedImports(ctx)).toMatchObject({ completed: 1 });
    expect(await getRun(t.db, runId)).toMatchObject({ status: 'Completed', attempts: 1, pagesFetched: 3 });
    expect(itemIds(t.db)).toEqual(range(1, 25));
  });
});

describe('endpoint schedules are job queue entries', () => {
  const entry = (code: string) =>
    t.db.kysely.selectFrom('ifw_job_queue_entry').selectAll().where('id', '=', endpointEntryId(code)).executeTakeFirst();

  it('creates the entry endpoint:<code>: kind endpointImport, Ready, every scheduleSeconds, first run after one interval', async () => {
    await syncEndpointSchedule(t.db, 'numbered', 300, clock());
    expect(await entry('numbered')).toMatchObject({
      kind: 'endpointImport',
      description: 'Import from REST API endpoint numbered',
      status: 'Ready',
      recurrence_seconds: 300,
      next_run_at: iso(300_000),
      parameters: '{"endpointCode":"numbered"}',
    });
    expect((await listEntries(t.db)).map((e) => e.id)).toContain('endpoint:numbered');
  });

  it('keeps On Hold when the interval changes, never postpones a planned run, and deletes the entry without a schedule', async () => {
    await syncEndpointSchedule(t.db, 'numbered', 300, clock());
    await holdEntry(t.db, { id: endpointEntryId('numbered'), now: clock() });

    await syncEndpointSchedule(t.db, 'numbered', 600, new Date(iso(10_000)));
    expect(await entry('numbered')).toMatchObject({ status: 'On Hold', recurrence_seconds: 600, next_run_at: iso(300_000) });
    await syncEndpointSchedule(t.db, 'numbered', 120, new Date(iso(10_000)));
    expect(await entry('numbered')).toMatchObject({ status: 'On Hold', recurrence_seconds: 120, next_run_at: iso(130_000) });

    await syncEndpointSchedule(t.db, 'numbered', null, clock());
    expect(await entry('numbered')).toBeUndefined();
  });

  it('follows the endpoint: saving it with a schedule creates the entry, deleting the endpoint removes it', async () => {
    await updateEndpoint(t.db, 'numbered', { scheduleSeconds: 3600 }, clock);
    expect(await entry('numbered')).toMatchObject({ recurrence_seconds: 3600, status: 'Ready' });
    await deleteEndpoint(t.db, 'numbered', clock, findActiveRun);
    expect(await entry('numbered')).toBeUndefined();
  });
});

describe('the job queue runs import runs', () => {
  const config = { leaseSeconds: 300, maxAttempts: 3, retentionDays: 30, schedulerTickMs: 1000 };
  let runner: QueueRunner;

  beforeEach(async () => {
    // The migrations scheduled the seeded entries at the real time of the test run; align them with the clock.
    await t.db.kysely.updateTable('ifw_job_queue_entry').set({ next_run_at: START }).execute();
    runner = createQueueRunner({
      db: t.db,
      config,
      clock,
      logger: silentLogger,
      owner: 'runner-1',
      jobs: jobKinds(config, { importSources: ctx.sources }),
    });
  });
  afterEach(async () => {
    await runner.stop();
  });

  const runsOf = (code: string) =>
    t.db.kysely.selectFrom('ifw_import_run').selectAll().where('endpoint_code', '=', code).orderBy('queued_at').execute();

  it('the seeded Import Run Processor entry drains Queued runs when woken', async () => {
    expect(await getEntry(t.db, IMPORT_RUN_PROCESSOR_ENTRY)).toMatchObject({
      description: 'VENDOR IF Import Run Processor',
      kind: 'importRunProcessor',
      status: 'Ready',
      recurrenceSeconds: 60,
    });
    await runner.tick();
    const { runId } = await queue();

    await runner.wake();

    expect(await getRun(t.db, runId)).toMatchObject({ status: 'Completed', insertedCount: 25 });
  });

  it('a wake leaves runs Queued while the Import Run Processor is On Hold', async () => {
    await runner.tick();
    await holdEntry(t.db, { id: IMPORT_RUN_PROCESSOR_ENTRY, now: clock() });
    const { runId } = await queue();

    await runner.wake();

    expect(await getRun(t.db, runId)).toMatchObject({ status: 'Queued' });
  });

  it('a scheduled endpoint entry queues a run with trigger schedule when due, and runs it', async () => {
    await syncEndpointSchedule(t.db, 'numbered', 120, clock());
    await runner.tick();
    expect(await runsOf('numbered')).toEqual([]);

    clock.advance(120_000);
    await runner.tick();

    const runs = await runsOf('numbered');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger: 'schedule', status: 'Completed', inserted_count: 25 });
    expect(await getEntry(t.db, endpointEntryId('numbered'))).toMatchObject({ status: 'Ready', lastError: '', nextRunAt: iso(240_000) });
    expect(itemIds(t.db)).toEqual(range(1, 25));
  });

  it('skips the scheduled run while one of the endpoint is still Running, and logs no error', async () => {
    await syncEndpointSchedule(t.db, 'numbered', 120, clock());
    const { runId } = await queue();
    await claimNextRun(t.db, { owner: 'other-worker', now: clock(), leaseMs: LEASE_MS });
    clock.advance(120_000);

    await runner.tick();

    expect((await runsOf('numbered')).map((r) => r.run_id)).toEqual([runId]);
    expect(await getEntry(t.db, endpointEntryId('numbered'))).toMatchObject({ status: 'Ready', lastError: '' });
  });

  it('runs nothing for a scheduled entry put On Hold', async () => {
    await syncEndpointSchedule(t.db, 'numbered', 120, clock());
    await holdEntry(t.db, { id: endpointEntryId('numbered'), now: clock() });
    clock.advance(600_000);

    await runner.tick();

    expect(await runsOf('numbered')).toEqual([]);
  });

  it('puts a scheduled entry whose endpoint is gone in Error with the reason', async () => {
    await syncEndpointSchedule(t.db, 'ghost', 120, clock());
    clock.advance(120_000);

    await runner.tick();

    expect(await getEntry(t.db, endpointEntryId('ghost'))).toMatchObject({
      status: 'Error',
      lastError: "No REST API endpoint with code 'ghost'.",
    });
  });
});
