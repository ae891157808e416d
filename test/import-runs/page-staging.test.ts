/**
 * Batched staging: fetched pages wait in a small buffer and are staged several per commit, without
 * giving up what a run promises: pages fetched before a failure are staged (a failed run shows them),
 * a poller sees progress while a slow page is on its way, and a lost lease still stops the run.
 * The buffer alone with injected time, then whole runs against the real paging server.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ImportRun } from '../../src/import-runs/model.js';
import { createAsyncPageBuffer, createPageBuffer, flushDue, type StagingLimits } from '../../src/import-runs/page-buffer.js';
import { getRun, listRunPages } from '../../src/import-runs/queries.js';
import { queueEndpointRun } from '../../src/import-runs/queue-endpoint-run.js';
import { runQueuedImports, type ImportRunContext } from '../../src/import-runs/run-imports.js';
import { serialisePage, type SerialisedPage } from '../../src/import-runs/postgres/stage-pages.js';
import type { FetchedPage } from '../../src/rest-source/model.js';
import type { SecretBox } from '../../src/rest-source/secrets.js';
import { createConnection, createEndpoint } from '../../src/rest-source/service.js';
import { openDatabase } from '../../src/storage/database.js';
import { type TestDatabase } from '../helpers/db.js';
import { ENDPOINTS, ITEMS, itemIds, range, stagedCounts, watchingPages, type ManualClock } from '../helpers/import-fixtures.js';
import { type PagingServer } from '../helpers/paging-server.js';
import { openRunQueue, usePagingServer } from '../helpers/run-queue.js';

const limits = (over: Partial<StagingLimits> = {}): StagingLimits => ({ maxPages: 4, maxBytes: 1 << 30, maxDelayMs: 60_000, ...over });

describe('flushDue: when buffered pages are written', () => {
  const cases: [string, { pages: number; bytes: number; sinceWriteMs: number }, boolean][] = [
    ['nothing buffered, however long ago the last write', { pages: 0, bytes: 0, sinceWriteMs: 10_000 }, false],
    ['fewer pages than maxPages, little data, recent write', { pages: 3, bytes: 100, sinceWriteMs: 10 }, false],
    ['maxPages reached', { pages: 4, bytes: 100, sinceWriteMs: 10 }, true],
    ['maxBytes reached (a large page alone)', { pages: 1, bytes: 1000, sinceWriteMs: 10 }, true],
    ['the last write is maxDelayMs old (a slow API: every page at once)', { pages: 1, bytes: 100, sinceWriteMs: 50 }, true],
  ];
  it.each(cases)('%s', (_, buffered, due) => {
    expect(flushDue(buffered, limits({ maxBytes: 1000, maxDelayMs: 50 }))).toBe(due);
  });
});

describe('the page buffer', () => {
  let now: number;
  let written: number[][];
  let answer: boolean | Error;
  const write = (pages: readonly SerialisedPage[]): boolean => {
    if (answer instanceof Error) throw answer;
    written.push(pages.map((p) => p.pageNo));
    return answer;
  };
  const page = (pageNo: number, records: unknown[] = [{ id: pageNo }]) => ({ pageNo, url: `http://x/?page=${pageNo}`, records });

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    now = 0;
    written = [];
    answer = true;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes maxPages pages in one transaction, and the rest on flush', () => {
    const buffer = createPageBuffer(serialisePage, write, limits(), () => now);
    for (let n = 1; n <= 6; n++) expect(buffer.add(page(n))).toBe(true);
    expect(written).toEqual([[1, 2, 3, 4]]);
    expect(buffer.flush()).toBe(true);
    expect(written).toEqual([
      [1, 2, 3, 4],
      [5, 6],
    ]);
  });

  it('writes the records as prepared (serialised here), with their count and size', () => {
    const pages: SerialisedPage[] = [];
    const buffer = createPageBuffer(
      serialisePage,
      (p) => pages.push(...p) > 0,
      limits(),
      () => now,
    );
    buffer.add(page(1, [{ id: 1 }, { id: 2 }]));
    buffer.flush();
    expect(pages).toEqual([{ pageNo: 1, url: 'http://x/?page=1', recordCount: 2, json: '[{"id":1},{"id":2}]', bytes: 19 }]);
  });

  it('writes at once when the buffered records reach maxBytes', () => {
    const buffer = createPageBuffer(serialisePage, write, limits({ maxBytes: 20 }), () => now);
    buffer.add(page(1));
    expect(written).toEqual([]);
    buffer.add(page(2));
    expect(written).toEqual([[1, 2]]);
  });

  it('writes a page at once when the last write is maxDelayMs old: a slow API is staged page by page', () => {
    const buffer = createPageBuffer(serialisePage, write, limits({ maxDelayMs: 50 }), () => now);
    now = 200;
    buffer.add(page(1));
    now = 400;
    buffer.add(page(2));
    expect(written).toEqual([[1], [2]]);
  });

  it('writes a buffer that waited maxDelayMs on its timer, so progress is never staler than that', () => {
    const buffer = createPageBuffer(serialisePage, write, limits({ maxDelayMs: 50 }), () => now);
    now = 10;
    buffer.add(page(1));
    now = 30;
    buffer.add(page(2));
    vi.advanceTimersByTime(39);
    expect(written).toEqual([]);
    now = 50;
    vi.advanceTimersByTime(1);
    expect(written).toEqual([[1, 2]]);
    buffer.close();
  });

  it('answers false once the lease is lost, and writes nothing more', () => {
    const buffer = createPageBuffer(serialisePage, write, limits({ maxPages: 1 }), () => now);
    answer = false;
    expect(buffer.add(page(1))).toBe(false);
    answer = true;
    expect(buffer.add(page(2))).toBe(false);
    expect(buffer.flush()).toBe(false);
    expect(written).toEqual([[1]]);
  });

  it('throws the error of a write on the timer from the next add', () => {
    const buffer = createPageBuffer(serialisePage, write, limits({ maxDelayMs: 50 }), () => now);
    buffer.add(page(1));
    answer = new Error('disk I/O error');
    now = 50;
    vi.advanceTimersByTime(50);
    expect(() => buffer.add(page(2))).toThrow('disk I/O error');
    expect(() => buffer.flush()).toThrow('disk I/O error');
  });

  it('close drops the buffered pages and stops the timer', () => {
    const buffer = createPageBuffer(serialisePage, write, limits({ maxDelayMs: 50 }), () => now);
    buffer.add(page(1));
    buffer.close();
    now = 100;
    vi.advanceTimersByTime(100);
    expect(written).toEqual([]);
  });
});

describe('the async page buffer (PostgreSQL: every write a round trip)', () => {
  const page = (pageNo: number) => ({ pageNo, url: `http://x/?page=${pageNo}`, records: [{ id: pageNo }] });
  /** A write the test completes by hand, so that one can still be in flight when the next is due. */
  function manualWrites() {
    const written: number[][] = [];
    const pending: ((ok: boolean) => void)[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const write = (pages: readonly SerialisedPage[]): Promise<boolean> => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Promise<boolean>((resolve) =>
        pending.push((ok) => {
          written.push(pages.map((p) => p.pageNo));
          inFlight--;
          resolve(ok);
        }),
      );
    };
    const settleNext = async (ok = true): Promise<void> => {
      for (let i = 0; i < 20 && pending.length === 0; i++) await Promise.resolve();
      pending.shift()!(ok);
    };
    return { written, write, settleNext, maxInFlight: () => maxInFlight };
  }

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes maxPages pages at once, makes the caller wait for that write, and flushes the rest', async () => {
    const w = manualWrites();
    const buffer = createAsyncPageBuffer(serialisePage, w.write, limits({ maxPages: 2 }), () => 0);
    expect(await buffer.add(page(1))).toBe(true);
    const second = buffer.add(page(2));
    await w.settleNext();
    expect(await second).toBe(true);
    await buffer.add(page(3));
    const flushed = buffer.flush();
    await w.settleNext();
    expect(await flushed).toBe(true);
    expect(w.written).toEqual([[1, 2], [3]]);
  });

  it('a write due while the timer write is in flight waits for it: writes never overlap, pages stay in order', async () => {
    const w = manualWrites();
    let now = 0;
    const buffer = createAsyncPageBuffer(serialisePage, w.write, limits({ maxPages: 2, maxDelayMs: 50 }), () => now);
    await buffer.add(page(1));
    now = 50;
    vi.advanceTimersByTime(50); // the timer starts writing [1]
    const due = buffer.add(page(2)); // due at once (50 ms since the last write) while [1] is still in flight
    await w.settleNext();
    await w.settleNext();
    expect(await due).toBe(true);
    expect(w.written).toEqual([[1], [2]]);
    expect(w.maxInFlight()).toBe(1);
    await buffer.close();
  });

  it('a lease lost in a timer write: the next add answers false and nothing more is written', async () => {
    const w = manualWrites();
    let now = 0;
    const buffer = createAsyncPageBuffer(serialisePage, w.write, limits({ maxDelayMs: 50 }), () => now);
    await buffer.add(page(1));
    now = 50;
    vi.advanceTimersByTime(50);
    await w.settleNext(false);
    const closing = buffer.close();
    await closing;
    expect(await buffer.add(page(2))).toBe(false);
    expect(await buffer.flush()).toBe(false);
    expect(w.written).toEqual([[1]]);
  });

  it('throws the error of a timer write from the next add', async () => {
    let now = 0;
    const buffer = createAsyncPageBuffer(
      serialisePage,
      () => Promise.reject(new Error('connection terminated')),
      limits({ maxDelayMs: 50 }),
      () => now,
    );
    await buffer.add(page(1));
    now = 50;
    vi.advanceTimersByTime(50);
    await buffer.close();
    await expect(buffer.add(page(2))).rejects.toThrow('connection terminated');
    await expect(buffer.flush()).rejects.toThrow('connection terminated');
  });
});

describe('import runs stage pages in batches', () => {
  let server: PagingServer;
  let t: TestDatabase;
  let clock: ManualClock;
  let box: SecretBox;
  let ctx: ImportRunContext;

  const pagingServer = usePagingServer();
  beforeEach(async () => {
    server = pagingServer();
    ({ t, clock, box, ctx } = await openRunQueue(server, { endpoints: { numbered: ENDPOINTS.pageNumber } }));
  });
  afterEach(async () => {
    await t.cleanup();
  });

  /** The context with `before(page)` called as each page is handed to staging. */
  const watching = (context: ImportRunContext, before: (page: FetchedPage) => void): ImportRunContext => watchingPages(context, { before });

  async function runEndpoint(code: string, context: ImportRunContext): Promise<ImportRun> {
    const queued = await queueEndpointRun(t.db, code, 'manual', clock());
    await runQueuedImports(context);
    return (await getRun(t.db, queued.runId))!;
  }

  const stagedRows = (): number => t.db.sqlite.prepare('select count(*) from ifw_import_run_page').pluck().get() as number;

  it('stages maxPages pages per commit, then the rest, and imports every record once', async () => {
    const stagedBefore: number[] = [];
    const run = await runEndpoint(
      'numbered',
      watching({ ...ctx, staging: limits() }, () => stagedBefore.push(stagedRows())),
    );

    expect(stagedBefore).toEqual([0, 0, 0, 0, 4, 4, 4, 4, 8, 8]);
    expect(run).toMatchObject({ status: 'Completed', pagesFetched: 10, recordsFetched: 95, insertedCount: 95 });
    expect(stagedCounts(t.db, run.runId)).toEqual({ pages: 10, records: 0 });
    expect(itemIds(t.db)).toEqual(range(1, 95));
  });

  it('a page that fails: the pages fetched before it are staged before the run is Failed, even with a buffer that would still hold them', async () => {
    server.setFaults([{ kind: 'malformedJson', page: 7 }]);

    const run = await runEndpoint('numbered', { ...ctx, staging: limits({ maxPages: 100 }) });

    expect(run).toMatchObject({ status: 'Failed', pagesFetched: 6, recordsFetched: 60, insertedCount: 0 });
    expect(run.errorMessage).toContain(`page 7 (GET ${server.origin}/page-number?page=7)`);
    expect((await listRunPages(t.db, run.runId, { skip: 0, limit: 100 })).map((p) => p.pageNo)).toEqual(range(1, 6));
    expect(stagedCounts(t.db, run.runId)).toEqual({ pages: 6, records: 0 });
    expect(itemIds(t.db)).toEqual([]);
  });

  it('a lease lost while pages wait in the buffer: the next staging write finds it, fetching stops, nothing is staged', async () => {
    const { runId } = await queueEndpointRun(t.db, 'numbered', 'manual', clock());
    const takeOver = (page: FetchedPage): void => {
      if (page.pageNo === 2) t.db.sqlite.prepare("update ifw_import_run set lease_owner = 'worker-2' where run_id = ?").run(runId);
    };

    const result = await runQueuedImports(watching({ ...ctx, staging: limits() }, takeOver));

    expect(result).toMatchObject({ lost: 1, completed: 0, failed: 0 });
    expect(await getRun(t.db, runId)).toMatchObject({ status: 'Running', pagesFetched: 0 });
    expect(stagedRows()).toBe(0);
    expect(server.requests.length).toBeLessThan(10);
    expect(itemIds(t.db)).toEqual([]);
  });

  it('a poller sees the pages fetched so far while the next page is slow (default limits)', async () => {
    // Page 4 hangs for the request timeout (400 ms) once, then the retry answers it.
    await createConnection(t.db, { code: 'slow', baseUrl: server.origin, timeoutMs: 400, maxRetries: 1, initialDelayMs: 0 }, clock, box);
    await createEndpoint(t.db, { code: 'slow', connectionCode: 'slow', integrationSortingOrder: ITEMS, ...ENDPOINTS.pageNumber }, clock);
    server.setFaults([{ kind: 'hang', page: 4, times: 1 }]);
    const queued = await queueEndpointRun(t.db, 'slow', 'manual', clock());
    const poller = openDatabase({ kind: 'sqlite', file: t.file });
    const page4Requests = (): number => server.requests.filter((r) => r.url.endsWith('page=4')).length;
    const seen: { pagesFetched: number; pages: number; page4Requests: number }[] = [];
    try {
      const draining = runQueuedImports(ctx);
      for (let polls = 0; polls < 300; polls++) {
        const run = (await getRun(poller, queued.runId))!;
        if (run.status === 'Completed' || run.status === 'Failed') break;
        seen.push({
          pagesFetched: run.pagesFetched,
          pages: (await listRunPages(poller, queued.runId, { skip: 0, limit: 100 })).length,
          page4Requests: page4Requests(),
        });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await draining;
    } finally {
      await poller.close();
    }

    // While page 4 was still hanging (requested once), pages 1-3 were staged and counted.
    expect(seen).toContainEqual({ pagesFetched: 3, pages: 3, page4Requests: 1 });
    expect(await getRun(t.db, queued.runId)).toMatchObject({ status: 'Completed', pagesFetched: 10, insertedCount: 95 });
  });
});
