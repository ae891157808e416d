/**
 * Import run housekeeping on both databases: an administrator's cancel of a Queued or Running run (its
 * import writes nothing), the per-record errors a run keeps with the page and place of each record, and
 * retention of ended runs with a moved clock (never a Queued or Running one).
 */
import os from 'node:os';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../../src/core/config.js';
import { AppError } from '../../src/core/errors.js';
import { cancelRun, runAbortKey } from '../../src/import-runs/cancel-run.js';
import { claimNextRun } from '../../src/import-runs/claim-run.js';
import { getRun } from '../../src/import-runs/queries.js';
import { queueEndpointRun } from '../../src/import-runs/queue-endpoint-run.js';
import { runRunRetention } from '../../src/import-runs/retention.js';
import { listRunErrors } from '../../src/import-runs/run-errors.js';
import { executeRun, runQueuedImports, type ImportRunContext } from '../../src/import-runs/run-imports.js';
import type { JobContext } from '../../src/job-queue/jobs.js';
import { jobKinds } from '../../src/main/jobs.js';
import { abortBoard, claimOf } from '../../src/storage/abort-board.js';
import { migrate, openDatabase, type Database } from '../../src/storage/database.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { addEndpoint, ENDPOINTS, runContext, setupItems, testBox, testClock, type ManualClock } from '../helpers/import-fixtures.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';

const LEASE_MS = 300_000;
const DAY_MS = 86_400_000;
const openUrl = (url: string): Database => openDatabase(parseDatabaseUrl(url, os.tmpdir(), 3));

let server: PagingServer;
beforeAll(async () => {
  server = await startPagingServer();
});
afterAll(async () => {
  await server.close();
});

describe.each(BACKENDS)('import run housekeeping on $name', (backend) => {
  describe.skipIf(backend.skip)(`${backend.name}`, () => {
    let fresh: FreshDatabase;
    let db: Database;
    let clock: ManualClock;
    let ctx: ImportRunContext;

    async function open(nameMaxLength?: number): Promise<void> {
      db = openUrl(fresh.url);
      await migrate(db);
      await setupItems(db, clock, testBox(), server.origin, nameMaxLength === undefined ? {} : { nameMaxLength });
      await addEndpoint(db, clock, 'numbered', ENDPOINTS.pageNumber);
      ctx = runContext(db, clock, testBox());
    }
    beforeEach(async () => {
      server.reset({ records: 25, pageSize: 10 });
      fresh = await backend.fresh();
      clock = testClock();
    });
    afterEach(async () => {
      await db?.close();
      await fresh?.cleanup();
    });

    const itemCount = async (): Promise<number> =>
      Number((await sql<{ n: number }>`select count(*) as n from item`.execute(db.kysely)).rows[0]?.n);
    const conflictOf = async (p: Promise<unknown>): Promise<string> => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      return `${(err as AppError).status} ${(err as AppError).code}`;
    };

    it('cancels a Queued run: Cancelled, never claimed, and a second cancel is refused with 409', async () => {
      await open();
      const queued = await queueEndpointRun(db, 'numbered', 'manual', clock());
      const cancelled = await cancelRun(db, queued.runId, clock);
      expect(cancelled).toMatchObject({
        status: 'Cancelled',
        endedAt: clock().toISOString(),
        errorMessage: 'Cancelled by an administrator.',
      });

      const drained = await runQueuedImports(ctx);
      expect(drained.completed + drained.failed + drained.lost).toBe(0);
      expect(await itemCount()).toBe(0);
      expect(await conflictOf(cancelRun(db, queued.runId, clock))).toBe('409 invalidStatusTransition');
      expect(await conflictOf(cancelRun(db, '0190a000-0000-7000-8000-000000000000', clock))).toBe('404 notFound');
    });

    it('cancels a Running run: the worker that holds it stops, and nothing of it is written', async () => {
      await open();
      const queued = await queueEndpointRun(db, 'numbered', 'manual', clock());
      const claimed = await claimNextRun(db, { owner: ctx.owner, now: clock(), leaseMs: LEASE_MS });
      expect(claimed?.runId).toBe(queued.runId);
      expect((await cancelRun(db, queued.runId, clock)).status).toBe('Cancelled');

      expect(await executeRun(ctx, claimed!)).toBe('lost');
      expect((await getRun(db, queued.runId))?.status).toBe('Cancelled');
      expect(await itemCount()).toBe(0);
    });

    it('refuses to cancel a Completed run (409) and leaves it as it was', async () => {
      await open();
      const queued = await queueEndpointRun(db, 'numbered', 'manual', clock());
      await runQueuedImports(ctx);
      expect((await getRun(db, queued.runId))?.status).toBe('Completed');
      expect(await conflictOf(cancelRun(db, queued.runId, clock))).toBe('409 invalidStatusTransition');
      expect((await getRun(db, queued.runId))?.status).toBe('Completed');
      expect(await itemCount()).toBe(25);
    });

    it('a cancel sent while the run imports its pages rolls the import back: the run ends Cancelled and writes nothing', async () => {
      await open();
      const queued = await queueEndpointRun(db, 'numbered', 'manual', clock());
      const other = openUrl(fresh.url);
      let cancel: Promise<unknown> | undefined;
      // The cancel is sent from another connection once the last page is fetched, while the run goes on to its import.
      const sources = {
        ...ctx.sources,
        fetchPages: async (...args: Parameters<ImportRunContext['sources']['fetchPages']>) => {
          const summary = await ctx.sources.fetchPages(...args);
          // On SQLite the cancel waits for the lock the import holds, after asking the import to stop.
          cancel = cancelRun(other, queued.runId, clock);
          if (backend.name === 'postgres') await cancel;
          return summary;
        },
      };
      try {
        const drained = await runQueuedImports({ ...ctx, sources });
        expect(await cancel).toMatchObject({ status: 'Cancelled' });
        expect(drained).toMatchObject({ completed: 0, failed: 0, lost: 1 });
      } finally {
        await other.close();
      }
      expect((await getRun(db, queued.runId))?.status).toBe('Cancelled');
      expect(await itemCount()).toBe(0);
    });

    if (backend.name === 'sqlite')
      it('SQLite: a run whose abort flag is raised stops inside its import transaction and rolls it back', async () => {
        await open();
        const queued = await queueEndpointRun(db, 'numbered', 'manual', clock());
        const claimed = (await claimNextRun(db, { owner: ctx.owner, now: clock(), leaseMs: LEASE_MS }))!;
        const board = abortBoard(db)!;
        expect(board, 'a SQLite file has a board beside it').toBeDefined();
        board.raise(runAbortKey(claimed.runId), claimOf(claimed.leaseOwner, claimed.startedAt));
        // Nobody lowers the flag here (a cancel would, once its status is written): the worker waits for that not at all.
        expect(await executeRun({ ...ctx, abortYieldMs: 0 }, claimed)).toBe('lost');
        board.lower(runAbortKey(claimed.runId));
        expect(await itemCount()).toBe(0);
        // Nobody wrote a status meanwhile: the run is still the worker's claim, which the cancel then ends.
        expect((await getRun(db, queued.runId))?.status).toBe('Running');
        expect((await cancelRun(db, queued.runId, clock)).status).toBe('Cancelled');
      });

    it('keeps the per-record errors of a run with the page and place each record came from', async () => {
      // "Record 1" … "Record 9" fit in 8 characters; from record 10 on, the name is too long.
      await open(8);
      const queued = await queueEndpointRun(db, 'numbered', 'manual', clock());
      await runQueuedImports(ctx);
      const run = await getRun(db, queued.runId);
      expect(run?.status).toBe('Failed');

      const errors = await listRunErrors(db, queued.runId, { skip: 0, limit: 100 });
      expect(errors).toHaveLength(16);
      expect(errors[0]).toMatchObject({ seq: 1, recordNo: 10, pageNo: 1, recordOnPage: 10, field: 'name' });
      expect(errors[1]).toMatchObject({ seq: 2, recordNo: 11, pageNo: 2, recordOnPage: 1, field: 'name' });
      expect(errors[15]).toMatchObject({ recordNo: 25, pageNo: 3, recordOnPage: 5 });
      expect(errors[1]!.message).toContain('record 11 (page 2, record 1)');
      expect(await listRunErrors(db, queued.runId, { skip: 15, limit: 10 })).toHaveLength(1);
    });

    it('retention deletes ended runs with their pages and errors after the configured days, never a Queued or Running one', async () => {
      await open(8);
      const failed = await queueEndpointRun(db, 'numbered', 'manual', clock());
      await runQueuedImports(ctx);
      await addEndpoint(db, clock, 'second', ENDPOINTS.pageNumber);
      await addEndpoint(db, clock, 'third', ENDPOINTS.pageNumber);
      const running = await queueEndpointRun(db, 'second', 'manual', clock());
      await claimNextRun(db, { owner: 'w9', now: clock(), leaseMs: LEASE_MS });
      const queued = await queueEndpointRun(db, 'third', 'manual', clock());
      const endedAt = Date.parse((await getRun(db, failed.runId))!.endedAt!);
      const count = async (table: 'ifw_import_run_page' | 'ifw_import_run_error'): Promise<number> =>
        Number(
          (
            await db.kysely
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('run_id', '=', failed.runId)
              .executeTakeFirst()
          )?.n,
        );
      expect(await count('ifw_import_run_page')).toBe(3);
      expect(await count('ifw_import_run_error')).toBe(16);

      // 29 days and 23 hours after it ended: kept.
      expect(await runRunRetention(db, { now: new Date(endedAt + 30 * DAY_MS - 3_600_000), retentionDays: 30 })).toBe(0);
      expect(await getRun(db, failed.runId)).toBeDefined();
      // A year later: the ended run goes, with its pages and errors; the Queued and Running ones stay.
      expect(await runRunRetention(db, { now: new Date(endedAt + 365 * DAY_MS), retentionDays: 30, batchSize: 1 })).toBe(1);
      expect(await getRun(db, failed.runId)).toBeUndefined();
      expect(await count('ifw_import_run_page')).toBe(0);
      expect(await count('ifw_import_run_error')).toBe(0);
      expect((await getRun(db, running.runId))?.status).toBe('Running');
      expect((await getRun(db, queued.runId))?.status).toBe('Queued');
    });

    it('the retention cleanup entry deletes ended runs after IFW_RUN_RETENTION_DAYS, by the clock it is given', async () => {
      await open();
      const ended = await queueEndpointRun(db, 'numbered', 'manual', clock());
      await runQueuedImports(ctx);
      const endedAt = Date.parse((await getRun(db, ended.runId))!.endedAt!);
      const retention = jobKinds({ retentionDays: 30, runRetentionDays: 7 }).find((k) => k.kind === 'retentionCleanup')!;
      const runAt = async (ms: number): Promise<void> => {
        const moved = () => new Date(ms);
        await retention.run({ ...ctx, clock: moved } as unknown as JobContext);
      };
      await runAt(endedAt + 6 * DAY_MS);
      expect(await getRun(db, ended.runId), 'six days after it ended').toBeDefined();
      await runAt(endedAt + 7 * DAY_MS + 1);
      expect(await getRun(db, ended.runId), 'seven days after it ended').toBeUndefined();
    });
  });
});
