/**
 * The import run contract: the same behaviour of REST import runs (claim, stage, import, fail, lease,
 * reaper) against a real SQLite file and a fresh PostgreSQL database, each run against the
 * real local paging server. What is checked is what a run promises — every record once, nothing on
 * failure or a lost lease, progress visible to others while fetching — not how either dialect does it.
 * `ifw run-endpoint` as a process, on both, is in run-endpoint-command.slow.test.ts.
 */
import os from 'node:os';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/core/clock.js';
import { parseDatabaseUrl } from '../../src/core/config.js';
import { claimNextRun } from '../../src/import-runs/claim-run.js';
import type { ImportRun } from '../../src/import-runs/model.js';
import { DEFAULT_STAGING_LIMITS } from '../../src/import-runs/page-buffer.js';
import { getRun, listRunPages } from '../../src/import-runs/queries.js';
import { queueEndpointRun } from '../../src/import-runs/queue-endpoint-run.js';
import { queueRun } from '../../src/import-runs/queue-run.js';
import { reapExpiredRuns } from '../../src/import-runs/reap-expired-runs.js';
import { runQueuedImports, type ImportRunContext } from '../../src/import-runs/run-imports.js';
import { endpointEntryId, syncEndpointSchedule } from '../../src/rest-source/schedule.js';
import { openRunStore } from '../../src/import-runs/open-run-store.js';
import type { RunEnd } from '../../src/import-runs/run-store.js';
import type { ImportOutcome } from '../../src/table-writer/model.js';
import { updateIntegration } from '../../src/integrations/service.js';
import { getIntegrationPlan } from '../../src/integrations/store.js';
import { getTableWithRelations } from '../../src/tables/store.js';
import { compileMapping } from '../../src/mapping/engine.js';
import type { FetchedPage } from '../../src/rest-source/model.js';
import type { SecretBox } from '../../src/rest-source/secrets.js';
import { createConnection, createEndpoint } from '../../src/rest-source/service.js';
import { migrate, openDatabase, type Database } from '../../src/storage/database.js';
import { BACKENDS, holdAdvisoryLock, POSTGRES_ADMIN_URL, type FreshDatabase } from '../helpers/databases.js';
import {
  addEndpoint,
  ENDPOINTS,
  ITEMS,
  range,
  runContext,
  setupItems,
  silentLogger,
  START,
  testBox,
  testClock,
  watchingPages,
  type ManualClock,
} from '../helpers/import-fixtures.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';
import { until } from '../helpers/until.js';
import { movableClock } from '../helpers/clock.js';

const LEASE_MS = 300_000;
const iso = (ms = 0): string => new Date(Date.parse(START) + ms).toISOString();

/** Two connections at most on PostgreSQL: the run holds one for its staging, the other serves everything else. */
const openUrl = (url: string, poolSize = 2): Database => openDatabase(parseDatabaseUrl(url, os.tmpdir(), poolSize));

let server: PagingServer;

beforeAll(async () => {
  server = await startPagingServer();
});
afterAll(async () => {
  await server.close();
});

describe.each(BACKENDS)('import runs on $name', (backend) => {
  describe.skipIf(backend.skip)(`${backend.name}`, () => {
    let fresh: FreshDatabase;
    let db: Database;
    let clock: ManualClock;
    let box: SecretBox;
    let ctx: ImportRunContext;
    beforeEach(async () => {
      server.reset({ records: 25, pageSize: 10 });
      fresh = await backend.fresh();
      db = openUrl(fresh.url);
      await migrate(db);
      clock = testClock();
      box = testBox();
      await setupItems(db, clock, box, server.origin);
      await addEndpoint(db, clock, 'numbered', ENDPOINTS.pageNumber);
      ctx = runContext(db, clock, box);
    });
    afterEach(async () => {
      await db?.close();
      await fresh?.cleanup();
    });

    const itemIds = async (on: Database = db): Promise<number[]> =>
      (await sql<{ id: number }>`select id from item order by id`.execute(on.kysely)).rows.map((r) => Number(r.id));
    const pageRows = async (runId: string): Promise<number> =>
      Number(
        (await sql<{ n: number }>`select count(*) as n from ifw_import_run_page where run_id = ${runId}`.execute(db.kysely)).rows[0]?.n,
      );
    const runRow = async (runId: string) =>
      db.kysely.selectFrom('ifw_import_run').selectAll().where('run_id', '=', runId).executeTakeFirstOrThrow();
    const steal = async (runId: string): Promise<void> => {
      await db.kysely.updateTable('ifw_import_run').set({ lease_owner: 'worker-2' }).where('run_id', '=', runId).execute();
    };

    /**
     * Staged records left anywhere: SQLite's in the one connection (a staging table per run); PostgreSQL's in the TEMP table of any
     * pooled session (the run gives its client back to the pool), so every idle client is asked.
     */
    async function stagedRecordsLeft(): Promise<number> {
      if (db.dialect === 'sqlite') {
        // The in-memory database attached for staging (staged-rows.ts), and the TEMP tables.
        const schemas = (db.sqlite.prepare('select name from pragma_database_list').pluck().all() as string[]).filter((s) => s !== 'main');
        let left = 0;
        for (const schema of schemas) {
          const tables = db.sqlite
            .prepare(`select name from ${schema}.sqlite_master where type = 'table' and name like 'ifw_staged_%'`)
            .pluck()
            .all() as string[];
          for (const table of tables) left += db.sqlite.prepare(`select count(*) from ${schema}."${table}"`).pluck().get() as number;
        }
        return left;
      }
      const { pool } = db;
      expect(pool.totalCount - pool.idleCount, 'every client is back in the pool').toBe(0);
      const clients = await Promise.all(Array.from({ length: pool.idleCount }, () => pool.connect()));
      try {
        let left = 0;
        for (const client of clients) {
          const { rows } = await client.query<{ t: string | null }>("select to_regclass('pg_temp.ifw_staged_records')::text as t");
          if (rows[0]?.t != null)
            left += Number((await client.query<{ n: string }>('select count(*) as n from pg_temp.ifw_staged_records')).rows[0]?.n);
        }
        return left;
      } finally {
        for (const client of clients) client.release();
      }
    }

    /** The context with `before(page)` awaited as each page is handed to staging. */
    const watching = (context: ImportRunContext, before: (page: FetchedPage) => void | Promise<void>): ImportRunContext =>
      watchingPages(context, { before });

    async function runEndpoint(code: string, context: ImportRunContext = ctx): Promise<ImportRun> {
      const queued = await queueEndpointRun(db, code, 'manual', clock());
      await runQueuedImports(context);
      return (await getRun(db, queued.runId))!;
    }

    it('claims each Queued run exactly once across 4 concurrent claimers', async () => {
      const runIds: string[] = [];
      for (let n = 1; n <= 20; n++) {
        await addEndpoint(db, clock, `e${n}`, ENDPOINTS.pageNumber);
        runIds.push((await queueRun(db, { endpointCode: `e${n}`, integrationSortingOrder: ITEMS, trigger: 'manual', now: clock() })).runId);
      }
      // Four claimers with a database handle each (on PostgreSQL: four pools, truly concurrent statements).
      const handles = db.dialect === 'postgres' ? Array.from({ length: 4 }, () => openUrl(fresh.url)) : [db, db, db, db];
      try {
        const claimer = async (on: Database, owner: string): Promise<string[]> => {
          const claimed: string[] = [];
          for (;;) {
            const run = await claimNextRun(on, { owner, now: clock(), leaseMs: LEASE_MS });
            if (run === undefined) return claimed;
            expect(run.leaseOwner).toBe(owner);
            claimed.push(run.runId);
          }
        };
        const claimed = await Promise.all(handles.map((on, i) => claimer(on, `w${i + 1}`)));

        expect(claimed.flat().sort()).toEqual([...runIds].sort());
        for (const [i, ids] of claimed.entries()) {
          for (const runId of ids) expect(await runRow(runId)).toMatchObject({ status: 'Running', attempts: 1, lease_owner: `w${i + 1}` });
        }
      } finally {
        if (db.dialect === 'postgres') await Promise.all(handles.map((h) => h.close()));
      }
    });

    it('queues one run per endpoint when several callers queue at once; the others get 409', async () => {
      const handles = db.dialect === 'postgres' ? Array.from({ length: 4 }, () => openUrl(fresh.url)) : [db, db, db, db];
      try {
        const results = await Promise.allSettled(handles.map((on) => queueEndpointRun(on, 'numbered', 'manual', clock())));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 409, code: 'conflict' });
      } finally {
        if (db.dialect === 'postgres') await Promise.all(handles.map((h) => h.close()));
      }
    });

    it("an endpoint's schedule is its job queue entry: re-saving never postpones the planned run, and no schedule removes it", async () => {
      const entry = () =>
        db.kysely.selectFrom('ifw_job_queue_entry').selectAll().where('id', '=', endpointEntryId('numbered')).executeTakeFirst();
      await syncEndpointSchedule(db, 'numbered', 300, clock());
      expect(await entry()).toMatchObject({
        kind: 'endpointImport',
        status: 'Ready',
        recurrence_seconds: 300,
        next_run_at: iso(300_000),
        parameters: '{"endpointCode":"numbered"}',
      });
      await syncEndpointSchedule(db, 'numbered', 600, new Date(iso(10_000)));
      expect(await entry()).toMatchObject({ recurrence_seconds: 600, next_run_at: iso(300_000) });
      await syncEndpointSchedule(db, 'numbered', 120, new Date(iso(10_000)));
      expect(await entry()).toMatchObject({ recurrence_seconds: 120, next_run_at: iso(130_000) });
      await syncEndpointSchedule(db, 'numbered', null, clock());
      expect(await entry()).toBeUndefined();
    });

    it('a whole run lands every record once in the target table, and gives its connection back', async () => {
      const run = await runEndpoint('numbered');

      expect(run).toMatchObject({
        status: 'Completed',
        pagesFetched: 3,
        recordsFetched: 25,
        insertedCount: 25,
        stopReason: 'shortPage',
        errorMessage: '',
        attempts: 1,
      });
      expect(await itemIds()).toEqual(range(1, 25));
      expect((await listRunPages(db, run.runId, { skip: 0, limit: 10 })).map((p) => [p.pageNo, p.recordsFetched])).toEqual([
        [1, 10],
        [2, 10],
        [3, 5],
      ]);
      expect(await runRow(run.runId)).toMatchObject({ lease_owner: null, lease_expires_at: null });
      expect(await stagedRecordsLeft()).toBe(0);
    });

    it('a page that fails imports nothing, and the run names the page, its URL and why', async () => {
      server.setFaults([{ kind: 'status', page: 3, status: 400, times: 1 }]);

      const run = await runEndpoint('numbered');

      expect(run).toMatchObject({ status: 'Failed', pagesFetched: 2, recordsFetched: 20, insertedCount: 0 });
      expect(run.errorMessage).toContain(`page 3 (GET ${server.origin}/page-number?page=3)`);
      expect(run.errorMessage).toContain('400');
      expect(await pageRows(run.runId)).toBe(2);
      expect(await itemIds()).toEqual([]);
      expect(await stagedRecordsLeft()).toBe(0);
    });

    it('records the target table refuses fail the run (fail mode) and it imports nothing', async () => {
      expect(await runEndpoint('numbered')).toMatchObject({ status: 'Completed', insertedCount: 25 });
      await sql`delete from item where id > 20`.execute(db.kysely);

      // Insert mode: ids 1-20 are there already, so the second run breaks the primary key on page 1.
      const again = await runEndpoint('numbered');

      expect(again).toMatchObject({ status: 'Failed', insertedCount: 0, pagesFetched: 3, recordsFetched: 25 });
      expect(again.errorMessage).toContain('record 1');
      expect(await itemIds()).toEqual(range(1, 20));
      expect(await stagedRecordsLeft()).toBe(0);
    });

    it('a failed run counts and logs the page whose next link failed it', async () => {
      await addEndpoint(db, clock, 'linked', ENDPOINTS.nextLink);
      server.setFaults([{ kind: 'loop', page: 3, toPage: 2 }]);
      const looped = await runEndpoint('linked');
      expect(looped).toMatchObject({ status: 'Failed', pagesFetched: 3, recordsFetched: 25, insertedCount: 0 });
      expect(looped.errorMessage).toMatch(/^page 3 \(GET .*\$skiptoken=3\): the next page's URL .* was already requested as page 2/);
      expect((await listRunPages(db, looped.runId, { skip: 0, limit: 10 })).map((p) => p.pageNo)).toEqual([1, 2, 3]);

      server.reset();
      server.setFaults([{ kind: 'crossOriginLink', page: 1, origin: 'https://elsewhere.example' }]);
      const refused = await runEndpoint('linked');
      expect(refused).toMatchObject({ status: 'Failed', pagesFetched: 1, recordsFetched: 10 });
      expect(refused.errorMessage).toMatch(/^page 1 \(GET .*\): the next link https:\/\/elsewhere\.example\/.* points to another origin/);
      expect(await pageRows(refused.runId)).toBe(1);
      expect(await itemIds()).toEqual([]);
      expect(await stagedRecordsLeft()).toBe(0);
    });

    it('a record error says where the record came from: its number in the run, its page and its place on the page', async () => {
      // Insert mode: id 12, the second record of page 2, is taken.
      await sql`insert into item (id, name) values (12, 'taken')`.execute(db.kysely);
      const failed = await runEndpoint('numbered');
      expect(failed).toMatchObject({
        status: 'Failed',
        recordsFetched: 25,
        insertedCount: 0,
        errorMessage: 'record 12 (page 2, record 2): field "id" value 12 already exists in table "item"',
      });

      await updateIntegration(db, ITEMS, { onRecordError: 'skip' }, clock);
      const skipped = await runEndpoint('numbered');
      expect(skipped).toMatchObject({
        status: 'Completed',
        recordsFetched: 25,
        insertedCount: 24,
        skippedCount: 1,
        errorMessage: '1 record skipped: record 12 (page 2, record 2): field "id" value 12 already exists in table "item"',
      });
    });

    it('a lease lost while fetching: fetching stops, nothing is committed', async () => {
      const { runId } = await queueEndpointRun(db, 'numbered', 'manual', clock());

      const result = await runQueuedImports(
        watching({ ...ctx, staging: { maxPages: 1, maxBytes: 1 << 30, maxDelayMs: 60_000 } }, async (page) => {
          if (page.pageNo === 2) await steal(runId);
        }),
      );

      expect(result).toMatchObject({ lost: 1, completed: 0, failed: 0 });
      expect(await runRow(runId)).toMatchObject({ status: 'Running', lease_owner: 'worker-2', pages_fetched: 1 });
      expect(await pageRows(runId)).toBe(1);
      expect(await itemIds()).toEqual([]);
      expect(await stagedRecordsLeft()).toBe(0);
    });

    it('a lease lost after the last page: the import does not start, nothing is committed', async () => {
      const { runId } = await queueEndpointRun(db, 'numbered', 'manual', clock());
      const stealing: ImportRunContext = {
        ...ctx,
        sources: {
          ...ctx.sources,
          fetchPages: async (connection, endpoint, onPage, options) => {
            const summary = await ctx.sources.fetchPages(connection, endpoint, onPage, options);
            await steal(runId);
            return summary;
          },
        },
      };

      expect(await runQueuedImports(stealing)).toMatchObject({ lost: 1, completed: 0 });
      expect(await runRow(runId)).toMatchObject({ status: 'Running', lease_owner: 'worker-2' });
      expect(await itemIds()).toEqual([]);
      expect(await stagedRecordsLeft()).toBe(0);
    });

    it('a lease lost by the time the import ends: the import transaction rolls back, the staged pages stay readable', async () => {
      const { runId } = await queueEndpointRun(db, 'numbered', 'manual', clock());
      await claimNextRun(db, { owner: 'w1', now: clock(), leaseMs: LEASE_MS });
      const plan = (await getIntegrationPlan(db.kysely, ITEMS))!;
      const target = { plan, tables: await getTableWithRelations(db.kysely, plan.integration.targetTable) };
      const store = await openRunStore(db, { runId, owner: 'w1', leaseMs: LEASE_MS, clock, log: silentLogger });
      try {
        await store.discardStaged();
        const buffer = store.pageBuffer(DEFAULT_STAGING_LIMITS, compileMapping(target.plan, target.tables));
        expect(
          await buffer.add({
            pageNo: 1,
            url: 'http://x/?page=1',
            records: [
              { id: 1, name: 'a' },
              { id: 2, name: 'b' },
            ],
          }),
        ).toBe(true);
        expect(await buffer.add({ pageNo: 2, url: 'http://x/?page=2', records: [{ id: 3, name: 'c' }] })).toBe(true);
        expect(await buffer.flush()).toBe(true);
        await buffer.close();
        const end = (outcome: ImportOutcome): RunEnd => ({
          complete: {
            runId,
            owner: 'w1',
            now: clock(),
            durationMs: 1,
            inserted: outcome.inserted,
            updated: 0,
            skipped: 0,
            stopReason: 'shortPage',
            stopDetail: '',
            warnings: [],
            errorMessage: '',
          },
        });

        await steal(runId);
        const lost = await store.importStaged(target, end);
        expect(lost).toMatchObject({ committed: false, outcome: { ok: true, inserted: 3 } });
        expect(await itemIds()).toEqual([]);
        expect(await runRow(runId)).toMatchObject({ status: 'Running', lease_owner: 'worker-2' });

        await db.kysely.updateTable('ifw_import_run').set({ lease_owner: 'w1' }).where('run_id', '=', runId).execute();
        expect(await store.importStaged(target, end)).toMatchObject({ committed: true, outcome: { ok: true, inserted: 3 } });
        expect(await itemIds()).toEqual([1, 2, 3]);
        expect(await runRow(runId)).toMatchObject({ status: 'Completed', inserted_count: 3, lease_owner: null });
      } finally {
        await store.close();
      }
      expect(await stagedRecordsLeft()).toBe(0);
    });

    it('a worker that stops mid-fetch puts its run back to Queued with nothing imported; the next drain runs it', async () => {
      const stop = new AbortController();
      const { runId } = await queueEndpointRun(db, 'numbered', 'manual', clock());
      const stopping = watching({ ...ctx, signal: stop.signal }, (page) => {
        if (page.pageNo === 2) stop.abort(new Error('shutting down'));
      });

      expect(await runQueuedImports(stopping)).toMatchObject({ lost: 1, completed: 0 });
      expect(await runRow(runId)).toMatchObject({ status: 'Queued', attempts: 0, lease_owner: null });
      expect(await itemIds()).toEqual([]);
      expect(await stagedRecordsLeft()).toBe(0);

      expect(await runQueuedImports(ctx)).toMatchObject({ completed: 1 });
      expect(await getRun(db, runId)).toMatchObject({ status: 'Completed', attempts: 1, pagesFetched: 3, insertedCount: 25 });
      expect(await itemIds()).toEqual(range(1, 25));
    });

    it('the reaper requeues an expired run (then it runs from page 1, each record once) and fails it after maxAttempts', async () => {
      const { runId } = await queueEndpointRun(db, 'numbered', 'manual', clock());
      await claimNextRun(db, { owner: 'dead-worker', now: clock(), leaseMs: LEASE_MS });

      expect(await reapExpiredRuns(db, { now: new Date(iso(LEASE_MS - 1)), maxAttempts: 3 })).toEqual({ requeued: [], failed: [] });
      clock.advance(LEASE_MS + 1);
      expect(await runQueuedImports(ctx)).toMatchObject({ requeued: 1, completed: 1 });
      expect(await getRun(db, runId)).toMatchObject({ status: 'Completed', attempts: 2, pagesFetched: 3, insertedCount: 25 });
      expect(await itemIds()).toEqual(range(1, 25));

      await addEndpoint(db, clock, 'other', ENDPOINTS.offsetLimit);
      const other = await queueEndpointRun(db, 'other', 'manual', clock());
      await claimNextRun(db, { owner: 'dead-1', now: clock(), leaseMs: LEASE_MS });
      expect(await reapExpiredRuns(db, { now: new Date(clock().getTime() + LEASE_MS + 1), maxAttempts: 1 })).toEqual({
        requeued: [],
        failed: [other.runId],
      });
      const failed = (await getRun(db, other.runId))!;
      expect(failed).toMatchObject({ status: 'Failed', attempts: 1 });
      expect(failed.errorMessage).toContain('interrupted 1 times');
    });

    it('1 000 pages: staged while fetching (at most one buffer behind), every record imported once, nothing left staged', async () => {
      server.reset({ records: 1000, pageSize: 1 });
      await addEndpoint(db, clock, 'thousand', { ...ENDPOINTS.nextLink, maxPages: 1000 });
      const stagedBefore: number[] = [];
      let runId = '';
      const run = await runEndpoint(
        'thousand',
        watching(ctx, async (page) => {
          if (page.pageNo === 1)
            runId = (
              await db.kysely
                .selectFrom('ifw_import_run')
                .select('run_id')
                .where('endpoint_code', '=', 'thousand')
                .executeTakeFirstOrThrow()
            ).run_id;
          if (page.pageNo % 250 === 0) stagedBefore.push(await pageRows(runId));
        }),
      );

      expect(run).toMatchObject({
        status: 'Completed',
        pagesFetched: 1000,
        recordsFetched: 1000,
        insertedCount: 1000,
        stopReason: 'noNextLink',
      });
      expect(stagedBefore).toHaveLength(4);
      stagedBefore.forEach((staged, i) => {
        const handedOver = (i + 1) * 250 - 1;
        expect(staged).toBeGreaterThan(handedOver - DEFAULT_STAGING_LIMITS.maxPages);
        expect(staged).toBeLessThanOrEqual(handedOver);
      });
      expect(await pageRows(run.runId)).toBe(1000);
      expect(await itemIds()).toEqual(range(1, 1000));
      expect(await stagedRecordsLeft()).toBe(0);
    }, 60_000);

    it('another connection sees the pages fetched so far while the next page hangs', async () => {
      // Page 3 hangs for the request timeout (400 ms) once, then the retry answers it.
      await createConnection(db, { code: 'slow', baseUrl: server.origin, timeoutMs: 400, maxRetries: 1, initialDelayMs: 0 }, clock, box);
      await createEndpoint(db, { code: 'slow', connectionCode: 'slow', integrationSortingOrder: ITEMS, ...ENDPOINTS.pageNumber }, clock);
      server.setFaults([{ kind: 'hang', page: 3, times: 1 }]);
      const queued = await queueEndpointRun(db, 'slow', 'manual', clock());
      const poller = openUrl(fresh.url);
      const page3Requests = (): number => server.requests.filter((r) => r.url.endsWith('page=3')).length;
      const seen: { pagesFetched: number; pages: number; page3Requests: number }[] = [];
      try {
        const draining = runQueuedImports(ctx);
        for (let polls = 0; polls < 300; polls++) {
          const run = (await getRun(poller, queued.runId))!;
          if (run.status === 'Completed' || run.status === 'Failed') break;
          seen.push({
            pagesFetched: run.pagesFetched,
            pages: (await listRunPages(poller, queued.runId, { skip: 0, limit: 100 })).length,
            page3Requests: page3Requests(),
          });
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await draining;
      } finally {
        await poller.close();
      }

      expect(seen).toContainEqual({ pagesFetched: 2, pages: 2, page3Requests: 1 });
      expect(await getRun(db, queued.runId)).toMatchObject({ status: 'Completed', pagesFetched: 3, insertedCount: 25 });
    });
  });
});

const postgres = BACKENDS.find((b) => b.name === 'postgres')!;

describe.skipIf(postgres.skip)('import runs on postgres only', () => {
  let fresh: FreshDatabase;
  beforeEach(async () => {
    server.reset({ records: 25, pageSize: 10 });
    fresh = await postgres.fresh();
  });
  afterEach(async () => {
    await fresh?.cleanup();
  });

  it('a pool of one connection fails the run at once, saying why, instead of waiting forever for a second one', async () => {
    // The run holds a connection of its own for its whole length and renews its lease through another.
    const single = openUrl(fresh.url, 1);
    try {
      await migrate(single);
      const clock = testClock();
      const box = testBox();
      await setupItems(single, clock, box, server.origin);
      await addEndpoint(single, clock, 'numbered', ENDPOINTS.pageNumber);
      const queued = await queueEndpointRun(single, 'numbered', 'manual', clock());

      expect(await runQueuedImports(runContext(single, clock, box))).toMatchObject({ failed: 1 });

      const run = (await getRun(single, queued.runId))!;
      expect(run).toMatchObject({ status: 'Failed', pagesFetched: 0, insertedCount: 0 });
      expect(run.errorMessage).toBe(
        'cannot start the run: an import run on PostgreSQL needs a pool of at least 2 connections (IFW_DATABASE_POOL_SIZE)',
      );
      expect(server.requests).toEqual([]);
    } finally {
      await single.close();
    }
  });

  describe('an import transaction longer than the lease', () => {
    // A statement-level trigger makes the final import's INSERT run `wait` (a statement of PostgreSQL's).
    const slowInsert = (wait: string) => `
      create function ifw_test_slow_insert() returns trigger language plpgsql as $$ begin perform ${wait}; return null; end $$;
      create trigger ifw_test_slow_insert after insert on item for each statement execute function ifw_test_slow_insert();`;
    const LEASE = 500;

    async function slowRun(
      wait: string,
      clock: Clock = systemClock,
    ): Promise<{ db: Database; other: Database; ctx: ImportRunContext; runId: string }> {
      const db = openUrl(fresh.url);
      const other = openUrl(fresh.url);
      const box = testBox();
      await setupItems(db, clock, box, server.origin);
      await addEndpoint(db, clock, 'numbered', ENDPOINTS.pageNumber);
      await sql.raw(slowInsert(wait)).execute(db.kysely);
      const ctx: ImportRunContext = { ...runContext(db, clock, box), leaseMs: LEASE, heartbeatMs: 100 };
      const { runId } = await queueEndpointRun(db, 'numbered', 'manual', clock());
      return { db, other, ctx, runId };
    }

    it('keeps its lease: another worker reaping expired leases all along does not take the run over', async () => {
      // The INSERT waits for a lock the test holds while the clock of the run moves on by four leases, half
      // a lease at a time. Another worker reaps expired leases at each step, before and after the next
      // heartbeat has renewed the lease (heartbeats come every 100 ms of real time).
      const lock = await holdAdvisoryLock(fresh.url);
      const clock = movableClock();
      const { db, other, ctx, runId } = await slowRun(lock.waitSql, clock);
      const requeued: string[] = [];
      const reap = async () => requeued.push(...(await reapExpiredRuns(other, { now: clock(), maxAttempts: 3 })).requeued);
      const leaseExpiresAt = async () =>
        Date.parse(
          (await other.kysely.selectFrom('ifw_import_run').select('lease_expires_at').where('run_id', '=', runId).executeTakeFirstOrThrow())
            .lease_expires_at ?? '',
        );
      const importing = runQueuedImports(ctx);
      try {
        await until(() => lock.waited(), { what: 'the import waiting in its INSERT' });
        const started = clock().getTime();
        for (let step = 1; step <= 8; step++) {
          clock.advance(LEASE / 2);
          const now = clock().getTime();
          await reap();
          await until(async () => (await leaseExpiresAt()) >= now + LEASE, { what: `the lease renewed after step ${step}` });
          await reap();
        }
        expect(clock().getTime() - started).toBeGreaterThan(2 * LEASE);
        expect(await lock.waited(), 'the import still inside its transaction').toBe(true);
        await lock.release();
        expect(await importing).toMatchObject({ completed: 1, lost: 0 });
        expect(await getRun(db, runId)).toMatchObject({ status: 'Completed', attempts: 1, insertedCount: 25 });
        expect(requeued).toEqual([]);
      } finally {
        await lock.release();
        await importing.catch(() => undefined);
        await db.close();
        await other.close();
      }
    });

    it('a lease lost meanwhile cancels the import at once: nothing is committed, the run goes on with its new owner', async () => {
      // The INSERT waits for a lock another session holds until the end of the test.
      const lock = await holdAdvisoryLock(fresh.url);
      const { db, other, ctx, runId } = await slowRun(lock.waitSql);
      // Once the import waits in its INSERT, another worker takes the run over.
      const thief = (async () => {
        await until(() => lock.waited(), { what: 'the import waiting in its INSERT' });
        await sql`update ifw_import_run set lease_owner = 'worker-2' where run_id = ${runId}`.execute(other.kysely);
      })();
      // Should the cancellation not come, the lock is let go after 10 s: the INSERT then commits and the test fails.
      const fallback = setTimeout(() => void lock.release(), 10_000);
      try {
        expect(await runQueuedImports(ctx)).toMatchObject({ completed: 0, lost: 1 });
        await thief;
        // It came back with the lock still held: the lost lease cancelled the waiting INSERT.
        expect(await getRun(db, runId)).toMatchObject({ status: 'Running', insertedCount: 0 });
        expect((await sql<{ n: number }>`select count(*)::integer as n from item`.execute(db.kysely)).rows[0]!.n).toBe(0);
      } finally {
        clearTimeout(fallback);
        await lock.release();
        await db.close();
        await other.close();
      }
    });
  });

  it("the server ends the run's connection mid-fetch: the process carries on, nothing is imported, a later drain runs it", async () => {
    const db = openUrl(fresh.url);
    try {
      await migrate(db);
      const clock = testClock();
      const box = testBox();
      await setupItems(db, clock, box, server.origin);
      await addEndpoint(db, clock, 'numbered', ENDPOINTS.pageNumber);
      const ctx = runContext(db, clock, box);
      const { runId } = await queueEndpointRun(db, 'numbered', 'manual', clock());
      const database = new URL(fresh.url).pathname.slice(1);
      const admin = openUrl(POSTGRES_ADMIN_URL);
      const killing = watchingPages(ctx, {
        before: async (page) => {
          if (page.pageNo !== 2) return;
          await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${database}`.execute(admin.kysely);
          // The pool learns of its idle connections' end asynchronously; until it has, the next claim could
          // be handed one of them. What is under test is the run's own connection ending mid-fetch.
          if (db.dialect === 'postgres')
            await until(() => db.pool.idleCount === 0, { what: 'the pool to drop its ended idle connections' });
        },
      });
      try {
        expect(await runQueuedImports(killing)).toMatchObject({ completed: 0 });
      } finally {
        await admin.close();
      }
      const items = async (): Promise<number> =>
        Number((await sql<{ n: number }>`select count(*) as n from item`.execute(db.kysely)).rows[0]?.n);
      expect(await items()).toBe(0);

      // Whatever the run's state (Failed, or Running until its lease expires), nothing was committed; once
      // its lease has expired the next drain runs it from page 1.
      const state = (await getRun(db, runId))!;
      if (state.status === 'Running') {
        clock.advance(LEASE_MS + 1);
        expect(await runQueuedImports(ctx)).toMatchObject({ requeued: 1, completed: 1 });
        expect(await items()).toBe(25);
      } else {
        expect(state.status).toBe('Failed');
      }
    } finally {
      await db.close();
    }
  });
});
