/**
 * Response actions in whole runs, against a real local API with 30 records in pages of 10 that
 * answers 404 past its last page (and 204, or 410 for a page it lost, on other routes): with `404
 * stop` the run imports every record exactly once and ends Completed; with `410 skip` a lost page is
 * skipped and the pages after it are still imported; without actions (the default) the same API
 * fails the run as before and imports nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runStatusLabel, type ImportRun } from '../../src/import-runs/model.js';
import { getRun, listRunPages } from '../../src/import-runs/queries.js';
import { queueEndpointRun } from '../../src/import-runs/queue-endpoint-run.js';
import { runQueuedImports } from '../../src/import-runs/run-imports.js';
import { FetchError } from '../../src/rest-source/http-client.js';
import { previewFirstPage } from '../../src/rest-source/preview.js';
import type { SecretBox } from '../../src/rest-source/secrets.js';
import type { EndpointInput } from '../../src/rest-source/schemas.js';
import { loadConnection, loadEndpoint } from '../../src/rest-source/store.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { addEndpoint, itemIds, range, runContext, setupItems, testBox, testClock, type ManualClock } from '../helpers/import-fixtures.js';

const TOTAL = 30;
const PAGE = 10;
const LAST_PAGE = TOTAL / PAGE;

const records = (page: number) => range((page - 1) * PAGE + 1, page * PAGE).map((id) => ({ id, name: `Record ${id}` }));

/**
 *   GET /pages?page=N        { data }   pages 1 to 3; past them 404 {"error":"no such page"}
 *   GET /no-content?page=N   { data }   pages 1 to 3; past them 204 without a body
 *   GET /holes?page=N        { data }   like /pages, but page 2 answers 410 Gone
 *   GET /linked?page=N       { data, next }   the last page links to page 4, which answers 404
 */
function startApi(): Promise<{ origin: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://api');
    const page = Number(url.searchParams.get('page') ?? 1);
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (page > LAST_PAGE) {
      if (url.pathname === '/no-content') res.writeHead(204).end();
      else json(404, { error: 'no such page' });
      return;
    }
    switch (url.pathname) {
      case '/pages':
      case '/no-content':
        return json(200, { data: records(page) });
      case '/holes':
        return page === 2 ? json(410, { error: 'this page is gone' }) : json(200, { data: records(page) });
      case '/linked':
        return json(200, { data: records(page), next: `/linked?page=${page + 1}` });
      default:
        return json(404, { error: 'no such route' });
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        requests,
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
  api.requests.length = 0;
  t = await openTestDatabase();
  clock = testClock();
  box = testBox();
  await setupItems(t.db, clock, box, api.origin);
});
afterEach(() => t.cleanup());

async function run(settings: Partial<EndpointInput>): Promise<ImportRun> {
  await addEndpoint(t.db, clock, 'items', settings);
  const queued = await queueEndpointRun(t.db, 'items', 'manual', clock());
  await runQueuedImports(runContext(t.db, clock, box));
  return (await getRun(t.db, queued.runId))!;
}

const pageLog = async (runId: string) =>
  (await listRunPages(t.db, runId, { skip: 0, limit: 100 })).map((p) => ({ pageNo: p.pageNo, records: p.recordsFetched }));

const numbered = (path: string) =>
  ({ path, paginationType: 'pageNumber', pageParameterName: 'page', pageSize: PAGE, responseDataPath: 'data' }) as const;

describe('an API that answers 404 past its last page', () => {
  it('with the default (no response actions) the run fails on page 4 and imports nothing, as before', async () => {
    const ended = await run(numbered('/pages'));

    expect(ended).toMatchObject({ status: 'Failed', pagesFetched: 3, insertedCount: 0 });
    expect(ended.errorMessage).toBe(
      `page 4 (GET ${api.origin}/pages?page=4): the service answered 404 Not Found: check the base URL and the endpoint path: {"error":"no such page"}`,
    );
    expect(itemIds(t.db)).toEqual([]);
  });

  it('with "404 stop" every record lands exactly once and the run ends Completed, saying why it stopped', async () => {
    const ended = await run({ ...numbered('/pages'), responseActions: [{ status: 404, action: 'stop' }] });

    expect(ended).toMatchObject({
      status: 'Completed',
      pagesFetched: 4,
      recordsFetched: TOTAL,
      insertedCount: TOTAL,
      stopReason: 'responseAction',
      stopDetail:
        "page 4 answered 404 Not Found, which the endpoint's response actions say means no more records: the last page was page 3",
      warnings: [],
    });
    expect(runStatusLabel(ended)).toBe('Completed');
    expect(itemIds(t.db)).toEqual(range(1, TOTAL));
    expect(await pageLog(ended.runId)).toEqual([
      { pageNo: 1, records: 10 },
      { pageNo: 2, records: 10 },
      { pageNo: 3, records: 10 },
      { pageNo: 4, records: 0 },
    ]);
    expect(api.requests).toEqual(['/pages?page=1', '/pages?page=2', '/pages?page=3', '/pages?page=4']);
  });

  it('"404 stop" ends a Next Link run whose last link leads to a 404', async () => {
    const ended = await run({
      path: '/linked',
      paginationType: 'nextLink',
      nextLinkJsonPath: 'next',
      responseDataPath: 'data',
      responseActions: [{ status: 404, action: 'stop' }],
    });

    expect(ended).toMatchObject({ status: 'Completed', pagesFetched: 4, insertedCount: TOTAL, stopReason: 'responseAction' });
    expect(itemIds(t.db)).toEqual(range(1, TOTAL));
  });

  it('"204 stop" ends the run on an answer without a body, which otherwise fails it', async () => {
    const failed = await run(numbered('/no-content'));
    expect(failed).toMatchObject({ status: 'Failed', insertedCount: 0 });
    expect(failed.errorMessage).toContain('page 4');
    expect(failed.errorMessage).toContain('the service answered 204 with an empty body, not JSON');

    await t.db.deleteFrom('ifw_rest_endpoint').execute();
    const ended = await run({ ...numbered('/no-content'), responseActions: [{ status: 204, action: 'stop' }] });
    expect(ended).toMatchObject({ status: 'Completed', pagesFetched: 4, insertedCount: TOTAL, stopReason: 'responseAction' });
    expect(itemIds(t.db)).toEqual(range(1, TOTAL));
  });

  it('a stop on page 1 completes without records', async () => {
    const ended = await run({ ...numbered('/missing'), responseActions: [{ status: 404, action: 'stop' }] });

    expect(ended).toMatchObject({ status: 'Completed', pagesFetched: 1, insertedCount: 0, stopReason: 'responseAction' });
    expect(ended.stopDetail).toBe(
      "page 1 answered 404 Not Found, which the endpoint's response actions say means no more records: there are no records",
    );
  });
});

describe('a page that is gone (410) in the middle', () => {
  it('with "410 skip" the page is skipped, the pages after it imported, and the run warns that its records are missing', async () => {
    const ended = await run({
      ...numbered('/holes'),
      responseActions: [
        { status: 410, action: 'skip' },
        { status: 404, action: 'stop' },
      ],
    });

    expect(ended).toMatchObject({
      status: 'Completed',
      pagesFetched: 4,
      recordsFetched: 20,
      insertedCount: 20,
      stopReason: 'responseAction',
      warnings: ["1 page was skipped by the endpoint's response actions (410 Gone); whatever records they held are not imported"],
    });
    expect(runStatusLabel(ended)).toBe('Completed with warnings');
    expect(itemIds(t.db)).toEqual([...range(1, 10), ...range(21, 30)]);
    expect(await pageLog(ended.runId)).toEqual([
      { pageNo: 1, records: 10 },
      { pageNo: 2, records: 0 },
      { pageNo: 3, records: 10 },
      { pageNo: 4, records: 0 },
    ]);
  });

  it('without it the run fails on page 2 and imports nothing', async () => {
    const ended = await run({ ...numbered('/holes'), responseActions: [{ status: 404, action: 'stop' }] });

    expect(ended).toMatchObject({ status: 'Failed', insertedCount: 0 });
    expect(ended.errorMessage).toContain('page 2 (GET');
    expect(ended.errorMessage).toContain('410 Gone');
    expect(itemIds(t.db)).toEqual([]);
  });
});

describe('Preview first page', () => {
  it('says what a run would do when page 1 answers a status with an action', async () => {
    await addEndpoint(t.db, clock, 'items', { ...numbered('/missing'), responseActions: [{ status: 404, action: 'stop' }] });
    const endpoint = await loadEndpoint(t.db, 'items');
    const connection = await loadConnection(t.db, endpoint.connectionCode, box);

    const error = await previewFirstPage(connection, endpoint, undefined).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).message).toBe(
      `page 1 (GET ${api.origin}/missing?page=1): the service answered 404 Not Found, which the endpoint's response actions say means no more records: a run would complete without records`,
    );
  });
});
