/**
 * Detect pagination against real local APIs (test/helpers/paging-shapes.server.ts and paging-shapes.ts) through
 * the whole service: an endpoint saved without pagination, `Microsoft.NAV.detectPagination`, its
 * proposal saved as it is (PATCH), a real import run: every record lands exactly once. And the check:
 * a wrong Page Size and a wrong Response Data Path are reported with the spec's remedy, nothing written.
 */
import { describe, expect, it } from 'vitest';
import { runAndRead, shapeService } from '../helpers/shape-runs.js';
import { range } from '../helpers/paging-server.js';

const shapes = shapeService('api', 'detect-token', 'detect', 300);
const { call, freshEndpoint } = shapes;

const runEndpoint = (code: string, table: string) => runAndRead(shapes.t, code, table);

/** Saves the endpoint as given (no pagination), detects, saves the proposal as it is, runs. */
async function detectAndRun(endpoint: Record<string, unknown>) {
  const { code, table } = await freshEndpoint('d', endpoint);
  const detected = await call('POST', `restApiEndpoints('${code}')/Microsoft.NAV.detectPagination`);
  expect(detected.status, JSON.stringify(detected.body)).toBe(200);
  expect(detected.body.ok, JSON.stringify(detected.body)).toBe(true);
  const requestsByDetection = shapes.server.requests.length;
  const patched = await call('PATCH', `restApiEndpoints('${code}')`, detected.body.proposal);
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  const { run, ids } = await runEndpoint(code, table);
  return { detected: detected.body, run, ids, requestsByDetection };
}

type Case = [name: string, endpoint: Record<string, unknown>, proposal: Record<string, unknown>, evidence: string];
const CASES: readonly Case[] = [
  [
    'GitHub: Link header',
    { path: '/github/issues?per_page=5' },
    { paginationType: 'linkHeader', responseDataPath: '', pageSize: 5 },
    `the response's Link header has rel="next"`,
  ],
  [
    'Stripe: has_more and starting_after',
    { path: '/stripe/customers?limit=5' },
    {
      paginationType: 'cursor',
      cursorJsonPath: '$.data[-1].id',
      cursorParameterName: 'starting_after',
      hasMoreJsonPath: 'has_more',
      responseDataPath: 'data',
    },
    '"has_more": true',
  ],
  [
    'Slack: response_metadata.next_cursor',
    { path: '/slack/users.list?limit=5' },
    {
      paginationType: 'cursor',
      cursorJsonPath: 'response_metadata.next_cursor',
      cursorParameterName: 'cursor',
      responseDataPath: 'members',
    },
    'a cursor at "response_metadata.next_cursor"',
  ],
  [
    'GraphQL: pageInfo { hasNextPage endCursor }, the cursor a variable of the POST body',
    {
      path: '/graphql',
      method: 'POST',
      body: JSON.stringify({
        query:
          'query($first: Int, $after: String) { contacts(first: $first, after: $after) { nodes { id name } pageInfo { hasNextPage endCursor } } }',
        variables: { first: 5 },
      }),
    },
    {
      paginationType: 'cursor',
      cursorJsonPath: 'data.contacts.pageInfo.endCursor',
      cursorParameterName: 'variables.after',
      parametersIn: 'body',
      hasMoreJsonPath: 'data.contacts.pageInfo.hasNextPage',
      responseDataPath: 'data.contacts.nodes',
    },
    'GraphQL pageInfo',
  ],
  [
    'a cursor in a response header',
    { path: '/header-cursor' },
    {
      paginationType: 'cursor',
      cursorFrom: 'header',
      cursorResponseHeader: 'X-Next-Cursor',
      cursorParameterName: 'X-Cursor',
      parametersIn: 'header',
      responseDataPath: 'items',
    },
    'the response header X-Next-Cursor carries a cursor',
  ],
  [
    'Next Link: a "next" property',
    { path: '/next-absolute' },
    { paginationType: 'nextLink', nextLinkJsonPath: 'next', responseDataPath: 'data' },
    'a next link at "next"',
  ],
  [
    'Next Link: OData @odata.nextLink',
    { path: '/odata/Customers' },
    { paginationType: 'nextLink', nextLinkJsonPath: '@odata.nextLink', responseDataPath: 'value' },
    'a next link at "@odata.nextLink"',
  ],
  [
    'Next Link: links.next (relative)',
    { path: '/nested' },
    { paginationType: 'nextLink', nextLinkJsonPath: 'links.next', responseDataPath: 'items' },
    'a next link at "links.next"',
  ],
  [
    'Page Number: the page parameter in the URL',
    { path: '/page-number?page=1' },
    { paginationType: 'pageNumber', pageParameterName: 'page', pageSize: 5, responseDataPath: 'data' },
    'the page parameter page=1',
  ],
  [
    'Offset/Limit: the offset and limit parameters in the URL',
    { path: '/offset-limit?offset=0&limit=5' },
    {
      paginationType: 'offsetLimit',
      offsetParameterName: 'offset',
      limitParameterName: 'limit',
      pageSize: 5,
      responseDataPath: 'results.items',
    },
    'the offset parameter offset=0',
  ],
];

describe('detect pagination, save the proposal, run', () => {
  it.each(CASES)('%s: the proposal imports every record', async (_name, endpoint, proposal, evidence) => {
    const { detected, run, ids, requestsByDetection } = await detectAndRun(endpoint);
    expect(detected.proposal, JSON.stringify(detected)).toMatchObject(proposal);
    expect(detected.evidence.join('\n')).toContain(evidence);
    expect(detected.pages.length).toBeLessThanOrEqual(3);
    expect(requestsByDetection).toBeLessThanOrEqual(4);
    expect(run, JSON.stringify(run)).toMatchObject({ status: 'Completed', recordsFetched: 23, warnings: [] });
    expect(ids).toEqual(range(1, 23));
    expect(shapes.server.requests.every((r) => r.headers.authorization === 'Bearer detect-token')).toBe(true);
  });

  it('None: one page holding every record is proposed as None', async () => {
    shapes.server.reset({ records: 4, pageSize: 10 });
    const { detected, run, ids } = await detectAndRun({ path: '/root-array' });
    expect(detected.proposal).toEqual({ paginationType: 'none', pageSize: 4, responseDataPath: '' });
    expect(detected.problems).toEqual([]);
    expect(run).toMatchObject({ status: 'Completed', recordsFetched: 4, stopReason: 'singlePage' });
    expect(ids).toEqual(range(1, 4));
  });
});

describe('check the saved settings against the API', () => {
  async function check(endpoint: Record<string, unknown>) {
    const { code, table } = await freshEndpoint('c', endpoint);
    const checked = await call('POST', `restApiEndpoints('${code}')/Microsoft.NAV.detectPagination`);
    expect(checked.status).toBe(200);
    const rows = await call('GET', `targetTables('${table}')/rows`);
    expect(rows.body.value).toEqual([]);
    return checked.body as { problems: { symptom: string; message: string; remedy: string }[] };
  }

  it('a Page Size above what the API returns: only the first page would be imported; match Page Size', async () => {
    const body = await check({
      path: '/page-number',
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      pageSize: 10,
      responseDataPath: 'data',
    });
    expect(body.problems).toContainEqual({
      symptom: 'Only the first page is imported',
      message: 'Page Size 10 but the API returned 5 records: only the first page would be imported',
      remedy: 'Match Page Size: set it to 5, the records the API returns per page',
    });
  });

  it('a Response Data Path that finds no array: fix the path', async () => {
    const body = await check({
      path: '/page-number',
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      pageSize: 5,
      responseDataPath: 'items',
    });
    expect(body.problems).toContainEqual({
      symptom: 'Only the first page is imported',
      message:
        'Response Data Path "items" finds no array in the response (the response has properties "data"): records cannot be counted, so only the first page would be imported',
      remedy: 'Fix the path: set Response Data Path to "data"',
    });
  });

  it('Pagination Type None on a paged API: set the type', async () => {
    const body = await check({ path: '/next-absolute', responseDataPath: 'data' });
    expect(body.problems).toMatchObject([
      { symptom: 'Only the first page is imported', remedy: 'Set the type: Next Link, with the proposed settings' },
    ]);
  });

  it('a next link that repeats: pagination runs to Max Pages; fix the path', async () => {
    shapes.server.setFaults([{ kind: 'loop', page: 2, toPage: 1 }]);
    const body = await check({ path: '/next-absolute', paginationType: 'nextLink', nextLinkJsonPath: 'next', responseDataPath: 'data' });
    expect(body.problems).toMatchObject([{ symptom: 'Pagination runs to Max Pages' }]);
    expect(body.problems[0]!.message).toContain('already requested as page 2');
  });

  it('Max Pages below the pages the API has: raise Max Pages', async () => {
    const body = await check({
      path: '/total-count?per_page=5',
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      pageSize: 5,
      maxPages: 2,
      responseDataPath: 'items',
    });
    expect(body.problems).toContainEqual(
      expect.objectContaining({ symptom: 'Max Pages reached with records missing', remedy: 'Raise Max Pages or Page Size' }),
    );
  });

  it('a Next Link JSON Path that misses the next link: fix the path, naming the one the response has', async () => {
    const body = await check({ path: '/nested', paginationType: 'nextLink', nextLinkJsonPath: 'next', responseDataPath: 'items' });
    expect(body.problems).toEqual([
      {
        symptom: 'Only the first page is imported',
        message:
          'Next Link JSON Path "next" finds nothing, but the response has a next link at "links.next": only the first page would be imported',
        remedy: 'Fix the path: set Next Link JSON Path to "links.next"',
      },
    ]);
  });

  it('a Page Size below what the API returns: pagination runs to Max Pages; match Page Size', async () => {
    const body = await check({
      path: '/page-number',
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      pageSize: 2,
      responseDataPath: 'data',
    });
    expect(body.problems[0]).toEqual({
      symptom: 'Pagination runs to Max Pages',
      message: 'Page Size 2 but the API returned 5 records on page 1: pages would be requested past the real ones, up to Max Pages',
      remedy: 'Match Page Size: set it to 5, the records the API returns per page',
    });
  });

  it('settings that fit the API: no problems', async () => {
    const body = await check({
      path: '/odata/Customers',
      paginationType: 'nextLink',
      nextLinkJsonPath: '@odata.nextLink',
      responseDataPath: 'value',
      pageSize: 5,
    });
    expect(body.problems).toEqual([]);
  });

  it('an unsaved endpoint is detected and checked the same way; secrets are not shown', async () => {
    const res = await call('POST', 'restApiEndpoints/Microsoft.NAV.detectPagination', {
      connectionCode: 'api',
      path: '/next-absolute?access_token=abc-secret',
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      pageSize: 50,
      responseDataPath: 'data',
    });
    expect(res.status).toBe(200);
    expect(res.body.proposal).toMatchObject({ paginationType: 'nextLink', nextLinkJsonPath: 'next' });
    expect(JSON.stringify(res.body)).not.toContain('abc-secret');
    expect(JSON.stringify(res.body)).not.toContain('detect-token');
  });

  it('a later page that fails is evidence; a page 1 that fails answers ok:false as preview does', async () => {
    shapes.server.setFaults([{ kind: 'status', page: 2, status: 500, times: 5 }]);
    const later = await call('POST', 'restApiEndpoints/Microsoft.NAV.detectPagination', { connectionCode: 'api', path: '/next-absolute' });
    expect(later.body).toMatchObject({ ok: true, proposal: { paginationType: 'nextLink' } });
    expect((later.body.evidence as string[]).join('\n')).toMatch(/following the proposal failed: page 2 .*500/);
    shapes.server.setFaults([{ kind: 'status', page: 1, status: 404, times: 5 }]);
    const first = await call('POST', 'restApiEndpoints/Microsoft.NAV.detectPagination', { connectionCode: 'api', path: '/next-absolute' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ ok: false, error: { pageNo: 1, status: 404 } });
  });

  it('an unsaved endpoint that is not valid is a 400, as on save', async () => {
    const res = await call('POST', 'restApiEndpoints/Microsoft.NAV.detectPagination', {
      connectionCode: 'api',
      path: '/x',
      paginationType: 'pageNumber',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBeTypeOf('string');
  });
});
