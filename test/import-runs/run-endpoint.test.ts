/**
 * Import runs end to end against a real paging HTTP server and a real SQLite file: every page is
 * staged, then all pages become one import; a failure anywhere imports nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../helpers/import-fixtures.js';
import { getRun } from '../../src/import-runs/queries.js';
import { queueEndpointRun } from '../../src/import-runs/queue-endpoint-run.js';
import { runQueuedImports, type ImportRunContext } from '../../src/import-runs/run-imports.js';
import type { ImportRun } from '../../src/import-runs/model.js';
import { DEFAULT_STAGING_LIMITS } from '../../src/import-runs/page-buffer.js';
import { declareIntegration } from '../../src/integrations/service.js';
import { FetchError } from '../../src/rest-source/fetch-pages.js';
import { previewFirstPage, type PagePreview } from '../../src/rest-source/preview.js';
import { loadDryRunIntegration } from '../../src/table-writer/dry-run.js';
import type { SecretBox } from '../../src/rest-source/secrets.js';
import { loadConnection, loadEndpoint } from '../../src/rest-source/store.js';
import { type TestDatabase } from '../helpers/db.js';
import { addEndpoint, ENDPOINTS, ITEMS_INTEGRATION, itemIds, range, stagedCounts, watchingPages } from '../helpers/import-fixtures.js';
import { type PagingServer } from '../helpers/paging-server.js';
import { openRunQueue, usePagingServer } from '../helpers/run-queue.js';
import { stagedRowsTable } from '../../src/table-writer/sqlite/staged-rows.js';

let server: PagingServer;
let t: TestDatabase;
let clock: ManualClock;
let box: SecretBox;
let ctx: ImportRunContext;

const pagingServer = usePagingServer();

async function setup(options: { nameMaxLength?: number } = {}): Promise<void> {
  server = pagingServer();
  ({ t, clock, box, ctx } = await openRunQueue(server, options));
}

afterEach(async () => {
  await t.cleanup();
});

/** Queues a manual run of `code`, drains the queue and returns the run as it ended. */
async function runEndpoint(code: string, context: ImportRunContext = ctx): Promise<ImportRun> {
  const queued = await queueEndpointRun(t.db, code, 'manual', clock());
  await runQueuedImports(context);
  return (await getRun(t.db, queued.runId))!;
}

describe('a run lands every record of every page exactly once', () => {
  it('Next Link: follows @odata.nextLink to the last page', async () => {
    await setup();
    await addEndpoint(t.db, clock, 'odata', ENDPOINTS.nextLink);

    const run = await runEndpoint('odata');

    expect(run).toMatchObject({
      status: 'Completed',
      trigger: 'manual',
      pagesFetched: 10,
      recordsFetched: 95,
      insertedCount: 95,
      updatedCount: 0,
      skippedCount: 0,
      stopReason: 'noNextLink',
      warnings: [],
      errorMessage: '',
      attempts: 1,
    });
    expect(itemIds(t.db)).toEqual(range(1, 95));
  });

  it('Page Number: pages 1, 2, … until a page holds fewer records than Page Size', async () => {
    await setup();
    await addEndpoint(t.db, clock, 'numbered', ENDPOINTS.pageNumber);

    const run = await runEndpoint('numbered');

    expect(run).toMatchObject({ status: 'Completed', pagesFetched: 10, recordsFetched: 95, insertedCount: 95, stopReason: 'shortPage' });
    expect(itemIds(t.db)).toEqual(range(1, 95));
    expect(server.requests.map((r) => new URL(r.url, server.origin).searchParams.get('page'))).toEqual(range(1, 10).map(String));
  });

  it('Offset/Limit: offsets 0, 10, … with limit Page Size, until a short (here empty) page', async () => {
    await setup();
    server.reset({ records: 100, pageSize: 10 });
    await addEndpoint(t.db, clock, 'offsets', ENDPOINTS.offsetLimit);

    const run = await runEndpoint('offsets');

    expect(run).toMatchObject({ status: 'Completed', pagesFetched: 11, recordsFetched: 100, insertedCount: 100, stopReason: 'shortPage' });
    expect(itemIds(t.db)).toEqual(range(1, 100));
    const sent = server.requests.map((r) => new URL(r.url, server.origin).searchParams);
    expect(sent.map((q) => q.get('offset'))).toEqual(range(0, 10).map((i) => String(i * 10)));
    expect(new Set(sent.map((q) => q.get('limit')))).toEqual(new Set(['10']));
  });

  it('keeps each page as the run log (number, URL, record count) and clears the staged records when the run ends', async () => {
    await setup();
    await addEndpoint(t.db, clock, 'numbered', ENDPOINTS.pageNumber);

    const run = await runEndpoint('numbered');

    expect(stagedCounts(t.db, run.runId)).toEqual({ pages: 10, records: 0 });
    const pages = t.db.sqlite
      .prepare('select page_no, url, records_fetched from ifw_import_run_page where run_id = ? order by page_no')
      .all(run.runId);
    expect(pages[0]).toEqual({ page_no: 1, url: `${server.origin}/page-number?page=1`, records_fetched: 10 });
    expect(pages[9]).toEqual({ page_no: 10, url: `${server.origin}/page-number?page=10`, records_fetched: 5 });
  });
});

describe('a page that fails imports nothing of the run', () => {
  it('malformed JSON on page 4: Failed, the error names the page and its URL, no row written', async () => {
    await setup();
    await addEndpoint(t.db, clock, 'numbered', ENDPOINTS.pageNumber);
    server.setFaults([{ kind: 'malformedJson', page: 4 }]);

    const run = await runEndpoint('numbered');

    expect(run.status).toBe('Failed');
    expect(run.errorMessage).toContain('page 4');
    expect(run.errorMessage).toContain(`${server.origin}/page-number?page=4`);
    expect(run.errorMessage).toContain('not valid JSON');
    expect(run).toMatchObject({ pagesFetched: 3, recordsFetched: 30, insertedCount: 0, stopReason: null });
    expect(itemIds(t.db)).toEqual([]);
    expect(stagedCounts(t.db, run.runId)).toEqual({ pages: 3, records: 0 });
  });

  it('a 4xx answer on page 3 fails at once (no retry): the error names the page, the URL and the status', async () => {
    await setup();
    await addEndpoint(t.db, clock, 'linked', {
      path: '/next-absolute',
      paginationType: 'nextLink',
      nextLinkJsonPath: 'next',
      responseDataPath: 'data',
    });
    server.setFaults([{ kind: 'status', page: 3, status: 404, times: 1 }]);

    const run = await runEndpoint('linked');

    expect(run.status).toBe('Failed');
    expect(run.errorMessage).toContain('page 3');
    expect(run.errorMessage).toContain(`${server.origin}/next-absolute?cursor=3`);
    expect(run.errorMessage).toContain('404');
    expect(itemIds(t.db)).toEqual([]);
    expect(server.requests).toHaveLength(3);
  });

  it('an integration validation error (fail mode) fails the run with the importer message; nothing is written', async () => {
    // "Record 100" is 10 characters: record 100, on page 10, breaks the rule. Record numbers run on across pages.
    await setup({ nameMaxLength: 9 });
    server.reset({ records: 100, pageSize: 10 });
    await addEndpoint(t.db, clock, 'numbered', ENDPOINTS.pageNumber);

    const run = await runEndpoint('numbered');

    expect(run).toMatchObject({
      status: 'Failed',
      pagesFetched: 11,
      recordsFetched: 100,
      insertedCount: 0,
      stopReason: 'shortPage',
      errorMessage: 'record 100 (page 10, record 10): field "name" value "Record 100" exceeds 9 characters',
    });
    expect(itemIds(t.db)).toEqual([]);
  });
});

describe('where the records are: the preview finds them as the run does', () => {
  /** The preview of a saved endpoint, as its route makes it. */
  async function preview(code: string): Promise<PagePreview> {
    const endpoint = await loadEndpoint(t.db, code);
    const connection = await loadConnection(t.db, endpoint.connectionCode, box);
    return previewFirstPage(connection, endpoint, await loadDryRunIntegration(t.db, endpoint.integrationSortingOrder));
  }
  const records = (from: number, to: number) => range(from, to).map((id) => ({ id, name: `Record ${id}` }));
  const odata = { path: '/odata/Customers', paginationType: 'nextLink', nextLinkJsonPath: '@odata.nextLink' } as const;

  it('Response Data Path blank, the records under "value": the integration\'s records path finds them for both', async () => {
    await setup();
    await declareIntegration(t.db, { ...ITEMS_INTEGRATION, recordsPath: 'value' }, clock);
    await addEndpoint(t.db, clock, 'odata', { ...odata, responseDataPath: '' });

    const shown = await preview('odata');
    const run = await runEndpoint('odata');

    expect(shown).toMatchObject({
      recordsFoundBy: `the integration's records path "value" (Response Data Path is blank)`,
      recordCount: 10,
    });
    expect(shown.records).toEqual(records(1, 5));
    expect(shown.rows).toEqual(records(1, 5).map((row, i) => ({ recordNo: i + 1, row })));
    expect(run).toMatchObject({ status: 'Completed', pagesFetched: 10, recordsFetched: 95, insertedCount: 95 });
    expect(t.db.sqlite.prepare('select id, name from item order by id limit 5').all()).toEqual(records(1, 5));
  });

  it('both blank and the root not an array: the preview fails page 1 with the words the run fails with', async () => {
    await setup();
    await addEndpoint(t.db, clock, 'odata', odata);

    const shown = await preview('odata').catch((err: unknown) => err);
    const run = await runEndpoint('odata');

    expect(run).toMatchObject({ status: 'Failed', pagesFetched: 1, recordsFetched: 0, insertedCount: 0 });
    expect(run.errorMessage).toBe(
      `page 1 (GET ${server.origin}/odata/Customers): the integration's records path and the endpoint's Response Data Path are both blank, ` +
        'so the response root must be the record array, but it is an object with properties "@odata.context", "value", "@odata.nextLink"; ' +
        'set either of them to the path of the records',
    );
    expect(shown).toBeInstanceOf(FetchError);
    expect((shown as FetchError).message).toBe(run.errorMessage);
    expect(itemIds(t.db)).toEqual([]);
  });

  it("Page Number with Response Data Path blank counts the records where the integration's records path finds them", async () => {
    await setup();
    await declareIntegration(t.db, { ...ITEMS_INTEGRATION, recordsPath: 'data' }, clock);
    await addEndpoint(t.db, clock, 'numbered', { ...ENDPOINTS.pageNumber, responseDataPath: '' });

    expect(await preview('numbered')).toMatchObject({ recordCount: 10, next: { kind: 'next' } });
    const run = await runEndpoint('numbered');

    expect(run).toMatchObject({ status: 'Completed', pagesFetched: 10, recordsFetched: 95, stopReason: 'shortPage', warnings: [] });
    expect(itemIds(t.db)).toEqual(range(1, 95));
  });

  it('Page Number with Response Data Path blank and a root array: every page (spec 4.4: blank when the root is the array)', async () => {
    await setup();
    await addEndpoint(t.db, clock, 'root', { ...ENDPOINTS.pageNumber, path: '/root-array', responseDataPath: '' });

    const run = await runEndpoint('root');

    expect(run).toMatchObject({ status: 'Completed', pagesFetched: 10, recordsFetched: 95, stopReason: 'shortPage' });
    expect(itemIds(t.db)).toEqual(range(1, 95));
  });
});

describe('Max Pages', () => {
  it('stops at Max Pages, imports what was fetched and warns that records may be missing', async () => {
    await setup();
    await addEndpoint(t.db, clock, 'numbered', { ...ENDPOINTS.pageNumber, maxPages: 3 });

    const run = await runEndpoint('numbered');

    expect(run).toMatchObject({ status: 'Completed', pagesFetched: 3, recordsFetched: 30, insertedCount: 30, stopReason: 'maxPages' });
    expect(run.warnings).toHaveLength(1);
    expect(run.warnings[0]).toMatch(/^Max Pages reached \(3\)/);
    expect(itemIds(t.db)).toEqual(range(1, 30));
  });
});

describe('memory stays flat: pages are staged in the database as they arrive', () => {
  it('a 1 000-page run stages 1 000 page rows while fetching (at most one buffer behind) and clears their records at the end', async () => {
    await setup();
    server.reset({ records: 1000, pageSize: 1 });
    await addEndpoint(t.db, clock, 'thousand', { ...ENDPOINTS.nextLink, maxPages: 1000 });
    // Look into the staging table while the fetch goes on: before page n is staged, pages 1 … n-1 are,
    // but for those still in the staging buffer (fewer than maxPages).
    const stagedBefore: number[] = [];
    const watching = watchingPages(ctx, {
      before: (page) => {
        if (page.pageNo % 250 !== 0) return;
        const runId = t.db.sqlite.prepare("select run_id from ifw_import_run where status = 'Running'").pluck().get() as string;
        const table = stagedRowsTable(t.db.sqlite, runId);
        // One record a page: the records staged are the pages staged.
        stagedBefore.push(t.db.sqlite.prepare(`select count(*) from ${table}`).pluck().get() as number);
      },
    });

    const run = await runEndpoint('thousand', watching);

    expect(run).toMatchObject({
      status: 'Completed',
      pagesFetched: 1000,
      recordsFetched: 1000,
      insertedCount: 1000,
      stopReason: 'noNextLink',
    });
    const { maxPages } = DEFAULT_STAGING_LIMITS;
    expect(stagedBefore).toHaveLength(4);
    stagedBefore.forEach((staged, i) => {
      const handedOver = (i + 1) * 250 - 1;
      expect(staged).toBeGreaterThan(handedOver - maxPages);
      expect(staged).toBeLessThanOrEqual(handedOver);
    });
    expect(stagedCounts(t.db, run.runId)).toEqual({ pages: 1000, records: 0 });
    expect(itemIds(t.db)).toEqual(range(1, 1000));
  }, 60_000);
});
