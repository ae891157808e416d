/**
 * The pure pagination detector (src/pagination/detect.ts) and check (src/pagination/check.ts), table
 * driven: one response in each well-known shape → the proposed settings and the evidence for them.
 */
import { describe, expect, it } from 'vitest';
import { checkPagination, confirmProposal, proposePagination, type ObservedPage } from '../../src/pagination/index.js';

const records = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i, name: `r${from + i}` }));
const page = (over: Partial<ObservedPage>): ObservedPage => ({
  url: 'https://api.example.com/v1/items',
  method: 'GET',
  requestBody: null,
  headers: {},
  body: [],
  ...over,
});

const CASES: readonly [string, ObservedPage, Record<string, unknown>, string][] = [
  [
    'GitHub: a Link header with rel="next"',
    page({
      url: 'https://api.example.com/repos/o/r/issues?per_page=3',
      headers: {
        link: '<https://api.example.com/repos/o/r/issues?per_page=3&page=2>; rel="next", <https://api.example.com/repos/o/r/issues?per_page=3&page=4>; rel="last"',
      },
      body: records(1, 3),
    }),
    { type: 'linkHeader', responseDataPath: '', pageSize: 3, allowCrossOrigin: false },
    `the response's Link header has rel="next" → Pagination Type Link Header`,
  ],
  [
    'Stripe: has_more and ids',
    page({ body: { object: 'list', data: records(1, 3), has_more: true } }),
    { type: 'cursor', cursorPath: '$.data[-1].id', cursorParam: 'starting_after', hasMorePath: 'has_more', responseDataPath: 'data' },
    '"has_more": true and records with an "id"',
  ],
  [
    'Slack: response_metadata.next_cursor',
    page({ body: { ok: true, members: records(1, 3), response_metadata: { next_cursor: 'dXNlcjpVMEc5V0ZYTlo=' } } }),
    { type: 'cursor', cursorFrom: 'body', cursorPath: 'response_metadata.next_cursor', cursorParam: 'cursor', responseDataPath: 'members' },
    'a cursor at "response_metadata.next_cursor"',
  ],
  [
    'Google: nextPageToken',
    page({ body: { files: records(1, 2), nextPageToken: 'abc' } }),
    { type: 'cursor', cursorPath: 'nextPageToken', cursorParam: 'pageToken', responseDataPath: 'files' },
    'a cursor at "nextPageToken"',
  ],
  [
    'GraphQL: pageInfo, the query in the POST body',
    page({
      method: 'POST',
      requestBody: JSON.stringify({
        query: 'query($after: String) { users(after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } }',
      }),
      body: { data: { users: { nodes: records(1, 2), pageInfo: { hasNextPage: true, endCursor: 'Y3Vy' } } } },
    }),
    {
      type: 'cursor',
      cursorPath: 'data.users.pageInfo.endCursor',
      cursorParam: 'variables.after',
      parametersIn: 'body',
      hasMorePath: 'data.users.pageInfo.hasNextPage',
      responseDataPath: 'data.users.nodes',
    },
    'GraphQL pageInfo with endCursor',
  ],
  [
    'a cursor in a response header',
    page({ headers: { 'x-next-cursor': 'c2' }, body: { items: records(1, 2) } }),
    { type: 'cursor', cursorFrom: 'header', cursorHeader: 'X-Next-Cursor', cursorParam: 'X-Cursor', parametersIn: 'header' },
    'the response header X-Next-Cursor carries a cursor',
  ],
  [
    'OData: @odata.nextLink',
    page({ body: { '@odata.context': 'x', value: records(1, 2), '@odata.nextLink': 'https://api.example.com/v1/items?$skiptoken=2' } }),
    { type: 'nextLink', nextLinkPath: '@odata.nextLink', responseDataPath: 'value' },
    'a next link at "@odata.nextLink"',
  ],
  [
    'JSON:API: links.next, relative',
    page({ body: { data: records(1, 2), links: { self: '/v1/items', next: '/v1/items?page=2' } } }),
    { type: 'nextLink', nextLinkPath: 'links.next', responseDataPath: 'data' },
    'a next link at "links.next"',
  ],
  [
    'HAL: _links.next.href',
    page({ body: { _embedded: { items: records(1, 2) }, _links: { next: { href: 'https://api.example.com/v1/items?page=2' } } } }),
    { type: 'nextLink', nextLinkPath: '_links.next.href', responseDataPath: '_embedded.items' },
    'a next link at "_links.next.href"',
  ],
  [
    'Page Number: page and per_page in the URL, a total',
    page({ url: 'https://api.example.com/v1/items?page=1&per_page=3', body: { total_count: 7, items: records(1, 3) } }),
    { type: 'pageNumber', pageParam: 'page', pageSize: 3, totalCountPath: 'total_count', responseDataPath: 'items' },
    'the page parameter page=1',
  ],
  [
    'Offset/Limit: $skip and $top in the URL',
    page({ url: 'https://api.example.com/v1/items?$skip=0&$top=3', body: { results: { items: records(1, 3) } } }),
    { type: 'offsetLimit', offsetParam: '$skip', limitParam: '$top', pageSize: 3, responseDataPath: 'results.items' },
    'the offset parameter $skip=0',
  ],
  [
    'None: one page, nothing says more',
    page({ body: { data: records(1, 4) } }),
    { type: 'none', responseDataPath: 'data', pageSize: 4 },
    'Pagination Type None',
  ],
];

describe('proposePagination', () => {
  it.each(CASES)('%s', (_name, observed, settings, evidence) => {
    const proposal = proposePagination(observed);
    expect(proposal.settings).toMatchObject(settings);
    expect(proposal.evidence.join('\n')).toContain(evidence);
  });

  it('a "next" that is no URL is read as a cursor, not a link', () => {
    expect(proposePagination(page({ body: { data: records(1, 2), next_cursor: 'abc' } })).settings.type).toBe('cursor');
  });

  it('a GraphQL API detected without its query body says where the cursor must go', () => {
    const proposal = proposePagination(
      page({ body: { data: { c: { nodes: records(1, 1), pageInfo: { hasNextPage: true, endCursor: 'x' } } } } }),
    );
    expect(proposal.notes.join('\n')).toContain('set Method POST and Body to the query');
  });

  it('a response that says more follow but names no way there proposes None and says so', () => {
    const proposal = proposePagination(page({ body: { total: 50, data: records(1, 10) } }));
    expect(proposal.settings.type).toBe('none');
    expect(proposal.notes.join('\n')).toContain('choose Page Number or Offset/Limit');
  });

  it('confirmProposal lowers Page Size to what the API really returned', () => {
    const proposal = proposePagination(
      page({ url: 'https://api.example.com/v1/items?offset=0&limit=100', body: { data: records(1, 50) } }),
    );
    const confirmed = confirmProposal(proposal, records(1, 50), [{ pageNo: 2, url: 'u2', records: records(51, 50) }], null);
    expect(confirmed.settings.pageSize).toBe(50);
    expect(confirmed.evidence).toContain('page 2 (u2) has 50 records, none of them the first record of page 1');
  });
});

describe('checkPagination', () => {
  const offsetLimit = {
    type: 'offsetLimit',
    offsetParam: 'offset',
    limitParam: 'limit',
    maxPages: 100,
    pageSize: 100,
    responseDataPath: 'data',
  } as const;
  const proposal = confirmProposal(
    proposePagination(page({ url: 'https://api.example.com/v1/items?offset=0&limit=100', body: { data: records(1, 50) } })),
    records(1, 50),
    [{ pageNo: 2, url: 'u2', records: records(51, 50) }],
    null,
  );

  it('Page Size 100 but the API returned 50 records', () => {
    const problems = checkPagination({
      configured: offsetLimit,
      configuredDataPath: 'data',
      proposal,
      firstBody: { data: records(1, 50) },
      pages: [{ pageNo: 1, counted: 50, step: { kind: 'stop', detail: 'page 1 has 50 records, fewer than Page Size 100: the last page' } }],
    });
    expect(problems).toEqual([
      {
        symptom: 'Only the first page is imported',
        message: 'Page Size 100 but the API returned 50 records: only the first page would be imported',
        remedy: 'Match Page Size: set it to 50, the records the API returns per page',
      },
    ]);
  });

  it('a short page 1 and nothing after it is no problem: the API has only these records', () => {
    const single = confirmProposal(
      proposePagination(page({ url: 'https://api.example.com/v1/items?page=1', body: { data: records(1, 5) } })),
      records(1, 5),
      [{ pageNo: 2, url: 'u2', records: [] }],
      null,
    );
    const problems = checkPagination({
      configured: { type: 'pageNumber', pageParam: 'page', maxPages: 100, pageSize: 100, responseDataPath: 'data' },
      configuredDataPath: 'data',
      proposal: single,
      firstBody: { data: records(1, 5) },
      pages: [{ pageNo: 1, counted: 5, step: { kind: 'stop', detail: 'page 1 has 5 records, fewer than Page Size 100: the last page' } }],
    });
    expect(problems).toEqual([]);
  });

  it('a Response Data Path that finds no array', () => {
    const problems = checkPagination({
      configured: { ...offsetLimit, responseDataPath: 'items' },
      configuredDataPath: 'items',
      proposal,
      firstBody: { data: records(1, 50) },
      pages: [{ pageNo: 1, counted: null, step: { kind: 'stop', detail: 'not countable' } }],
    });
    expect(problems[0]).toMatchObject({
      symptom: 'Only the first page is imported',
      remedy: 'Fix the path: set Response Data Path to "data"',
    });
  });
});
