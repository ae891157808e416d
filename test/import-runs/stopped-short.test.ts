/**
 * Runs that stop short say so: against a real local API that returns 10 records per page whatever it
 * is asked for, and says how many there are, a run whose settings do not fit (Page Size 25, Max Pages
 * too low, a Response Data Path that finds nothing, a Next Link JSON Path that misses the link, type
 * None) ends Completed with warnings that name the likely fix, and "Preview first page" shows the same
 * warning before the run. A run whose settings fit has none.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runStatusLabel, type ImportRun } from '../../src/import-runs/model.js';
import { getRun } from '../../src/import-runs/queries.js';
import { queueEndpointRun } from '../../src/import-runs/queue-endpoint-run.js';
import { runQueuedImports } from '../../src/import-runs/run-imports.js';
import { declareIntegration } from '../../src/integrations/service.js';
import { previewFirstPage, type PagePreview } from '../../src/rest-source/preview.js';
import type { SecretBox } from '../../src/rest-source/secrets.js';
import type { EndpointInput } from '../../src/rest-source/schemas.js';
import { loadConnection, loadEndpoint } from '../../src/rest-source/store.js';
import { loadDryRunIntegration } from '../../src/table-writer/dry-run.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import {
  addEndpoint,
  ITEMS_INTEGRATION,
  itemIds,
  range,
  runContext,
  setupItems,
  testBox,
  testClock,
  type ManualClock,
} from '../helpers/import-fixtures.js';

const TOTAL = 35;
/** What the API really returns per page, whatever the request asks for. */
const REAL_PAGE_SIZE = 10;

const records = (from: number, count: number) => range(from, Math.min(from + count - 1, TOTAL)).map((id) => ({ id, name: `Record ${id}` }));

/**
 *   GET /numbered?page=N          { data, total }            10 per page
 *   GET /offset?offset=O&limit=L  { items, total }           at most 10 per page, whatever L
 *   GET /linked?cursor=N          { data, links: { next } }  next: the next page, null after the last
 *   GET /single                   { data, total }            the first 10 only
 */
function startApi(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://api');
    const int = (name: string, fallback: number) => Number(url.searchParams.get(name) ?? fallback);
    let body: unknown;
    switch (url.pathname) {
      case '/numbered':
        body = { data: records((int('page', 1) - 1) * REAL_PAGE_SIZE + 1, REAL_PAGE_SIZE), total: TOTAL };
        break;
      case '/offset':
        body = { items: records(int('offset', 0) + 1, Math.min(int('limit', REAL_PAGE_SIZE), REAL_PAGE_SIZE)), total: TOTAL };
        break;
      case '/linked': {
        const cursor = int('cursor', 1);
        const next = cursor * REAL_PAGE_SIZE < TOTAL ? `/linked?cursor=${cursor + 1}` : null;
        body = { data: records((cursor - 1) * REAL_PAGE_SIZE + 1, REAL_PAGE_SIZE), links: { next } };
        break;
      }
      case '/single':
        body = { data: records(1, REAL_PAGE_SIZE), total: TOTAL };
        break;
      default:
        res.writeHead(404).end();
        return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise((done) => server.close(() => done())),
      }),
    ),
  );
}

let api: Awaited<ReturnType<typeof startApi>>;
let t: TestDatabase;
let clock: ManualClock;
let box: SecretBox;

beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());
beforeEach(async () => {
  t = await openTestDatabase();
  clock = testClock();
  box = testBox();
  await setupItems(t.db, clock, box, api.origin);
});
afterEach(() => t.cleanup());

async function run(code: string, settings: Partial<EndpointInput>): Promise<{ run: ImportRun; preview: PagePreview }> {
  await addEndpoint(t.db, clock, code, settings);
  const endpoint = await loadEndpoint(t.db, code);
  const connection = await loadConnection(t.db, endpoint.connectionCode, box);
  const preview = await previewFirstPage(connection, endpoint, await loadDryRunIntegration(t.db, endpoint.integrationSortingOrder));
  const queued = await queueEndpointRun(t.db, code, 'manual', clock());
  await runQueuedImports(runContext(t.db, clock, box));
  return { run: (await getRun(t.db, queued.runId))!, preview };
}

const numbered = { path: '/numbered', paginationType: 'pageNumber', pageParameterName: 'page', responseDataPath: 'data' } as const;
const offset = {
  path: '/offset',
  paginationType: 'offsetLimit',
  offsetParameterName: 'offset',
  limitParameterName: 'limit',
  responseDataPath: 'items',
} as const;

describe('a Page Size that differs from the API real page size', () => {
  const warning =
    'Only the first page is imported: page 1 has 10 records, fewer than Page Size 25, but the response says there are 35 records ("total": 35). ' +
    "Page Size differs from the API's real page size: match Page Size (set it to 10, the records the API returned on page 1)";

  it.each([
    ['Page Number', numbered],
    ['Offset/Limit', offset],
  ])(
    '%s, Page Size 25 against 10 per page: imports 10 and ends Completed with warnings; the preview warned first',
    async (_type, settings) => {
      const { run: ended, preview } = await run('short', { ...settings, pageSize: 25 });

      expect(ended).toMatchObject({
        status: 'Completed',
        pagesFetched: 1,
        insertedCount: 10,
        stopReason: 'shortPage',
        warnings: [warning],
      });
      expect(ended.stopDetail).toBe(
        'page 1 has 10 records, fewer than Page Size 25, but the response says there are 35 records ("total": 35): more pages follow',
      );
      expect(runStatusLabel(ended)).toBe('Completed with warnings');
      expect(itemIds(t.db)).toEqual(range(1, 10));
      expect(preview.warnings).toEqual([`Pagination would stop after page 1. ${warning}.`]);
      expect(preview.next).toMatchObject({ kind: 'stop', reason: 'shortPage' });
    },
  );

  it('Page Size 10, as the API: every record, Completed without warnings', async () => {
    const { run: ended, preview } = await run('fits', { ...numbered, pageSize: 10 });

    expect(ended).toMatchObject({ status: 'Completed', pagesFetched: 4, insertedCount: TOTAL, stopReason: 'shortPage', warnings: [] });
    expect(runStatusLabel(ended)).toBe('Completed');
    expect(preview.warnings).toEqual([]);
  });
});

describe('other ways of stopping short', () => {
  it('Max Pages reached: Completed with the Max Pages warning', async () => {
    const { run: ended } = await run('capped', { ...numbered, pageSize: 10, maxPages: 2 });

    expect(ended).toMatchObject({ status: 'Completed', pagesFetched: 2, insertedCount: 20, stopReason: 'maxPages' });
    expect(ended.warnings).toEqual(['Max Pages reached (2): the API has more pages; raise Max Pages or Page Size']);
    expect(runStatusLabel(ended)).toBe('Completed with warnings');
  });

  it('records not countable (Response Data Path finds nothing): Completed with warnings naming the fix', async () => {
    await declareIntegration(t.db, { ...ITEMS_INTEGRATION, recordsPath: 'data' }, clock);
    const { run: ended, preview } = await run('uncounted', { ...numbered, pageSize: 10, responseDataPath: 'rows' });

    const why =
      'Response Data Path "rows" finds nothing in the response (the response has properties "data", "total"): ' +
      'records cannot be counted, so fetching stopped after page 1; fix Response Data Path (the path to the record array)';
    expect(ended).toMatchObject({ status: 'Completed', insertedCount: 10, stopReason: 'recordsNotCountable', warnings: [why] });
    expect(runStatusLabel(ended)).toBe('Completed with warnings');
    expect(preview.warnings).toEqual([`Pagination would stop after page 1. ${why}.`]);
    // Not described as counting the records it cannot count.
    expect(preview.recordsFoundBy).not.toContain('counts them');
  });

  it('a Next Link JSON Path that misses the link the response has: Completed with warnings naming the path to set', async () => {
    const { run: ended, preview } = await run('linked', {
      path: '/linked',
      paginationType: 'nextLink',
      nextLinkJsonPath: 'next',
      responseDataPath: 'data',
    });

    const warning =
      'Only the first page is imported: Next Link JSON Path "next" finds nothing, but the response has a next link at "links.next". ' +
      'Fix the path (set Next Link JSON Path to "links.next")';
    expect(ended).toMatchObject({ status: 'Completed', insertedCount: 10, stopReason: 'noNextLink', warnings: [warning] });
    expect(ended.stopDetail).not.toContain('the last page');
    expect(preview.warnings).toEqual([`Pagination would stop after page 1. ${warning}.`]);
  });

  it('the right Next Link JSON Path follows every page, without warnings', async () => {
    const { run: ended, preview } = await run('linked-ok', {
      path: '/linked',
      paginationType: 'nextLink',
      nextLinkJsonPath: 'links.next',
      responseDataPath: 'data',
    });
    expect(ended).toMatchObject({ status: 'Completed', pagesFetched: 4, insertedCount: TOTAL, warnings: [] });
    expect(ended.stopDetail).toBe('page 4 has no next link at "links.next": the last page');
    expect(preview.warnings).toEqual([]);
  });

  it('a Next Link JSON Path that finds nothing on page 1: page 1 is not called the last page, and the preview warns', async () => {
    const { run: ended, preview } = await run('unlinked', {
      path: '/single',
      paginationType: 'nextLink',
      nextLinkJsonPath: 'paging.next',
      responseDataPath: 'data',
    });

    // Nothing in the response says there is a next page: the run cannot tell, and does not claim either.
    expect(ended).toMatchObject({ status: 'Completed', insertedCount: 10, warnings: [] });
    expect(ended.stopDetail).not.toContain('the last page');
    expect(preview.next.kind === 'stop' && preview.next.detail).not.toContain('the last page');
    expect(preview.warnings).toEqual([
      'Pagination would stop after page 1: Next Link JSON Path "paging.next" finds nothing in the response (the response has properties "data", "total"). ' +
        'If the API has more pages, the path is wrong: fix the path.',
    ]);
  });

  it('Pagination Type None while the response says there are more: Completed with warnings, set the type', async () => {
    const { run: ended } = await run('none', { path: '/single', paginationType: 'none', responseDataPath: 'data' });

    expect(ended).toMatchObject({ status: 'Completed', insertedCount: 10, stopReason: 'singlePage' });
    expect(ended.warnings).toEqual([
      'Only the first page is imported: Pagination Type is None, but the response says there are 35 records ("total": 35). Set the Pagination Type',
    ]);
  });
});

describe('a source path that matches no record', () => {
  it('the preview names the path and lists the keys the records do have', async () => {
    await declareIntegration(
      t.db,
      {
        ...ITEMS_INTEGRATION,
        fields: [
          { fieldNo: 1, title: 'Id', sourcePath: 'id' },
          { fieldNo: 2, title: 'Name', sourcePath: 'nmae' },
        ],
      },
      clock,
    );
    await addEndpoint(t.db, clock, 'typo', { ...numbered, pageSize: 10 });
    const endpoint = await loadEndpoint(t.db, 'typo');
    const preview = await previewFirstPage(
      await loadConnection(t.db, endpoint.connectionCode, box),
      endpoint,
      await loadDryRunIntegration(t.db, endpoint.integrationSortingOrder),
    );
    expect(preview.warnings).toEqual(['Source path "nmae" (field "name") matches nothing in the 10 records; they have id, name.']);
    // name is required: the run would fail, and the preview says so with the run's words.
    expect(preview.outcome).toMatchObject({ ok: false, errorCount: 10 });
    expect(preview.outcome?.errors[0]?.message).toBe('record 1 (page 1, record 1): field "name" is required');
  });
});
