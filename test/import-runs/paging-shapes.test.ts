/**
 * Link Header, Cursor and the stop conditions against real local APIs in the shapes of well-known
 * ones (test/helpers/paging-shapes.ts), through the whole service: the endpoint configured over the
 * admin API, a run on the job queue, the rows read back. Records land exactly once; a failure at any
 * page imports nothing; a loop fails naming the URL or the cursor.
 */
import { describe, expect, it } from 'vitest';
import { runAndRead, shapeService } from '../helpers/shape-runs.js';
import { range } from '../helpers/paging-server.js';

const shapes = shapeService('shapes', 'shape-token', 'shape', 100);
const { freshEndpoint } = shapes;

/** Configures the endpoint over the API, runs it, and answers the ended run and the table's ids. */
async function runShape(endpoint: Record<string, unknown>) {
  const { code, table } = await freshEndpoint('e', endpoint);
  return runAndRead(shapes.t, code, table);
}

const SHAPES: readonly [string, Record<string, unknown>, number, string][] = [
  ['GitHub: Link header, absolute links, per_page', { path: '/github/issues?per_page=5', paginationType: 'linkHeader' }, 5, 'noNextLink'],
  ['GitHub: Link header, relative links', { path: '/github-relative/issues?per_page=10', paginationType: 'linkHeader' }, 3, 'noNextLink'],
  [
    'Stripe: has_more and starting_after (the last record id)',
    {
      path: '/stripe/customers?limit=5',
      paginationType: 'cursor',
      cursorJsonPath: '$.data[-1].id',
      cursorParameterName: 'starting_after',
      hasMoreJsonPath: 'has_more',
      responseDataPath: 'data',
    },
    5,
    'hasMoreFalse',
  ],
  [
    'Slack: response_metadata.next_cursor',
    {
      path: '/slack/users.list?limit=5',
      paginationType: 'cursor',
      cursorJsonPath: 'response_metadata.next_cursor',
      cursorParameterName: 'cursor',
      responseDataPath: 'members',
    },
    5,
    'noCursor',
  ],
  [
    'GraphQL: pageInfo { hasNextPage endCursor }, the cursor a variable in the POST body',
    {
      path: '/graphql',
      method: 'POST',
      body: JSON.stringify({
        query: 'query($first: Int, $after: String) { contacts(first: $first, after: $after) { nodes { id name } } }',
        variables: { first: 5 },
      }),
      paginationType: 'cursor',
      cursorJsonPath: 'data.contacts.pageInfo.endCursor',
      cursorParameterName: 'variables.after',
      parametersIn: 'body',
      hasMoreJsonPath: 'data.contacts.pageInfo.hasNextPage',
      responseDataPath: 'data.contacts.nodes',
    },
    5,
    'hasMoreFalse',
  ],
  [
    'a cursor in a response header, sent back in a request header',
    {
      path: '/header-cursor',
      paginationType: 'cursor',
      cursorFrom: 'header',
      cursorResponseHeader: 'X-Next-Cursor',
      cursorParameterName: 'X-Cursor',
      parametersIn: 'header',
      responseDataPath: 'items',
    },
    5,
    'noCursor',
  ],
  [
    'a total-count API with Page Number: no request past the total',
    {
      path: '/total-count?per_page=5',
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      pageSize: 5,
      responseDataPath: 'items',
      totalCountJsonPath: 'total_count',
    },
    5,
    'totalReached',
  ],
];

describe('paginated APIs in well-known shapes, through the service', () => {
  it.each(SHAPES)('%s: every record lands exactly once', async (_name, endpoint, pages, stopReason) => {
    const { run, ids } = await runShape(endpoint);
    expect(run, JSON.stringify(run)).toMatchObject({ status: 'Completed', pagesFetched: pages, recordsFetched: 23, stopReason });
    expect(ids).toEqual(range(1, 23));
    expect(shapes.server.requests.length).toBe(pages);
    expect(shapes.server.requests.every((r) => r.headers.authorization === 'Bearer shape-token')).toBe(true);
  });

  it.each(SHAPES.filter(([, , pages]) => pages >= 3))('%s: a failure on page 3 imports nothing', async (_name, endpoint) => {
    shapes.server.setFaults([{ kind: 'status', page: 3, status: 400, times: 1 }]);
    const { run, ids } = await runShape(endpoint);
    expect(run).toMatchObject({ status: 'Failed' });
    expect(String(run.errorMessage)).toContain('page 3');
    expect(ids).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a Link header loop names the URL', SHAPES[0]![1], '/github/issues?per_page=5&page=2 was already requested as page 2'],
    ['a cursor loop names the cursor', SHAPES[3]![1], 'the cursor "cGFnZToy"'],
  ])('%s, and imports nothing', async (_name, endpoint, named) => {
    shapes.server.setFaults([{ kind: 'loop', page: 3, toPage: 2 }]);
    const { run, ids } = await runShape(endpoint);
    expect(run).toMatchObject({ status: 'Failed' });
    expect(String(run.errorMessage)).toMatch(/loop/);
    expect(String(run.errorMessage)).toContain(named);
    expect(ids).toEqual([]);
  });
});
