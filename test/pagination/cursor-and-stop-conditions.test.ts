import { describe, expect, it } from 'vitest';
import {
  compileRecordsGetter,
  createPaginator,
  paginationProblems,
  type NextStep,
  type PageRequest,
  type PaginationSettings,
  type ResponseHeaders,
} from '../../src/pagination/index.js';

const cursor = (over: Record<string, unknown> = {}): PaginationSettings => ({
  type: 'cursor',
  cursorFrom: 'body',
  cursorPath: 'next_cursor',
  cursorHeader: null,
  cursorParam: 'cursor',
  parametersIn: 'query',
  cursorInitial: null,
  maxPages: 100,
  pageSize: null,
  responseDataPath: 'data',
  ...over,
});

interface Answer {
  readonly body: unknown;
  readonly headers?: ResponseHeaders;
}

/** Runs a paginator against `api` (a function of the request); every request and the last step. */
function drive(settings: PaginationSettings, api: (request: PageRequest, call: number) => Answer, body: string | null = null) {
  const paginator = createPaginator(settings, 'https://api.test/items', undefined, body);
  const records = compileRecordsGetter(settings.responseDataPath);
  const requests: PageRequest[] = [];
  let request = paginator.first;
  for (let call = 1; call <= 1000; call++) {
    requests.push(request);
    const answer = api(request, call);
    const step: NextStep = paginator.next(request, { body: answer.body, records: records(answer.body), headers: answer.headers ?? {} });
    if (step.kind !== 'next') return { requests, last: step };
    request = step.request;
  }
  throw new Error('did not stop');
}

const CURSORS = ['', 'c2', 'c3'];
/** Page n (1..3) of a cursor API, found by the cursor the request carries wherever it is. */
const pageOf = (token: string | null | undefined): number => (token === null || token === undefined ? 1 : CURSORS.indexOf(token) + 1);

describe('Cursor pagination', () => {
  it.each<[string, Record<string, unknown>, (r: PageRequest) => string | null | undefined, (page: number) => Answer]>([
    [
      'Slack: response_metadata.next_cursor, sent as ?cursor=',
      { cursorPath: 'response_metadata.next_cursor' },
      (r) => new URL(r.url).searchParams.get('cursor'),
      (page) => ({ body: { data: [{ page }], response_metadata: { next_cursor: page < 3 ? CURSORS[page] : '' } } }),
    ],
    [
      'a cursor in a response header, sent in a request header',
      { cursorFrom: 'header', cursorPath: null, cursorHeader: 'X-Next-Cursor', cursorParam: 'X-Cursor', parametersIn: 'header' },
      (r) => r.headers?.['X-Cursor'],
      (page) => ({ body: { data: [{ page }] }, headers: page < 3 ? { 'x-next-cursor': CURSORS[page]! } : {} }),
    ],
    [
      'GraphQL: pageInfo.endCursor sent as a variable in the POST body',
      {
        cursorPath: 'data.items.pageInfo.endCursor',
        cursorParam: 'variables.after',
        parametersIn: 'body',
        responseDataPath: 'data.items.nodes',
      },
      (r) => (r.body === undefined ? null : ((JSON.parse(r.body) as { variables: { after?: string } }).variables.after ?? null)),
      (page) => ({ body: { data: { items: { nodes: [{ page }], pageInfo: { endCursor: page < 3 ? CURSORS[page] : null } } } } }),
    ],
    [
      'a numeric cursor',
      { cursorPath: 'next' },
      (r) => new URL(r.url).searchParams.get('cursor'),
      (page) => ({ body: { data: [{ page }], next: page < 3 ? page * 100 : null } }),
    ],
  ])('%s', (_name, over, sent, answer) => {
    const numeric = _name.includes('numeric');
    const { requests, last } = drive(
      cursor(over),
      (r) => answer(numeric ? Number(sent(r) ?? 0) / 100 + 1 : pageOf(sent(r))),
      over.parametersIn === 'body' ? '{"query":"{ items }","variables":{"first":2}}' : null,
    );
    expect(requests.map((r) => r.pageNo)).toEqual([1, 2, 3]);
    expect(requests[0]!.cursor).toBeUndefined();
    expect(last).toMatchObject({ kind: 'stop', reason: 'noCursor' });
    if (over.parametersIn === 'body') {
      expect(requests.map((r): unknown => (r.body === undefined ? undefined : JSON.parse(r.body)))).toEqual([
        undefined,
        { query: '{ items }', variables: { first: 2, after: 'c2' } },
        { query: '{ items }', variables: { first: 2, after: 'c3' } },
      ]);
    }
  });

  it('Stripe: the last record id as starting_after, and has_more', () => {
    const all = ['cus_1', 'cus_2', 'cus_3', 'cus_4', 'cus_5'];
    const { requests, last } = drive(
      cursor({ cursorPath: '$.data[-1].id', cursorParam: 'starting_after', hasMorePath: 'has_more' }),
      (r) => {
        const after = new URL(r.url).searchParams.get('starting_after');
        const from = after === null ? 0 : all.indexOf(after) + 1;
        return { body: { object: 'list', data: all.slice(from, from + 2).map((id) => ({ id })), has_more: from + 2 < all.length } };
      },
    );
    expect(requests.map((r) => new URL(r.url).searchParams.get('starting_after'))).toEqual([null, 'cus_2', 'cus_4']);
    expect(last).toMatchObject({ kind: 'stop', reason: 'hasMoreFalse', detail: 'page 3 says no more pages follow ("has_more" is false)' });
  });

  it('sends Initial Cursor on the first request', () => {
    const { requests } = drive(cursor({ cursorInitial: 'start' }), () => ({ body: { data: [] } }));
    expect(requests[0]).toMatchObject({ url: 'https://api.test/items?cursor=start', cursor: 'start' });
  });

  it('fails on a cursor seen twice, naming it', () => {
    const { requests, last } = drive(cursor(), (_r, call) => ({
      body: { data: [1], next_cursor: call === 1 ? 'a' : call === 2 ? 'b' : 'a' },
    }));
    expect(requests).toHaveLength(3);
    expect(last).toEqual({ kind: 'fail', error: 'the cursor "a" for page 4 was already sent for page 2: the API\'s cursors loop' });
  });

  it('fails on a cursor seen twice in a POST body too', () => {
    const { last } = drive(
      cursor({ cursorParam: 'variables.after', parametersIn: 'body' }),
      () => ({ body: { data: [1], next_cursor: 'same' } }),
      '{}',
    );
    expect(last).toMatchObject({ kind: 'fail', error: expect.stringContaining('the cursor "same"') as string });
  });

  it('stops at Max Pages with the warning', () => {
    const { requests, last } = drive(cursor({ maxPages: 2 }), (_r, call) => ({ body: { data: [1], next_cursor: `c${call}` } }));
    expect(requests).toHaveLength(2);
    expect(last).toMatchObject({ kind: 'stop', reason: 'maxPages', warning: expect.stringContaining('Max Pages reached (2)') as string });
  });

  it.each([
    [
      'a path that finds nothing on page 1, naming what the page has',
      { body: { data: [], other: 1 } },
      'stop',
      'page 1 has no cursor at "next_cursor" (the response has properties "data", "other")',
    ],
    ['a cursor that is an object', { body: { data: [], next_cursor: { a: 1 } } }, 'fail', 'points to an object, not to a cursor'],
    ['a cursor path that finds several values', { body: { data: [], cursors: ['a', 'b'] } }, 'fail', 'finds 2 values'],
  ])('%s', (name, { body }, kind, message) => {
    const settings = name.includes('several') ? cursor({ cursorPath: '$.cursors[*]' }) : cursor();
    const step = createPaginator(settings, 'https://api.test/items').next(
      { pageNo: 1, url: 'https://api.test/items' },
      { body, records: [] },
    );
    expect(step.kind).toBe(kind);
    expect(step.kind === 'fail' ? step.error : step.kind === 'stop' ? step.detail : '').toContain(message);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['no Cursor JSON Path with the cursor from the body', { cursorPath: null }, 'Cursor JSON Path is required'],
    [
      'no header name with the cursor from a header',
      { cursorFrom: 'header', cursorHeader: null },
      'Cursor Response Header must be a header name',
    ],
    ['a header name with a space', { cursorFrom: 'header', cursorHeader: 'X Next' }, 'Cursor Response Header must be a header name'],
    [
      'a body path with an empty name',
      { parametersIn: 'body', cursorParam: 'variables..after' },
      'Cursor Parameter Name must be a header name when',
    ],
    ['an unknown place', { parametersIn: 'cookie' }, 'Send Parameters In must be one of query, header, body'],
    ['an invalid Has More JSON Path', { hasMorePath: '$[' }, 'Has More JSON Path'],
  ])('refuses %s', (_name, over, problem) => {
    expect(paginationProblems(cursor(over)).join('; ')).toContain(problem);
  });

  it('refuses parameters in a body that is not a JSON object', () => {
    expect(() => createPaginator(cursor({ parametersIn: 'body' }), 'https://api.test/items', undefined, '[1]')).toThrow(
      'not a JSON object',
    );
  });
});

// ---------------------------------------------------------------------------------------------

const pageNumber = (over: Record<string, unknown> = {}): PaginationSettings => ({
  type: 'pageNumber',
  pageParam: 'page',
  pageSize: 2,
  maxPages: 100,
  responseDataPath: 'items',
  ...over,
});
const nextLink = (over: Record<string, unknown> = {}): PaginationSettings => ({
  type: 'nextLink',
  nextLinkPath: 'next',
  maxPages: 100,
  pageSize: null,
  responseDataPath: 'items',
  ...over,
});

/** Pages of 2 of `total` records by ?page= (or body/header), with a total, a has-more flag and a next link that never ends. */
const pagedApi =
  (total: number, pageFrom: (r: PageRequest) => number) =>
  (r: PageRequest): Answer => {
    const page = pageFrom(r);
    const items = Array.from({ length: Math.max(0, Math.min(2, total - (page - 1) * 2)) }, (_, i) => ({ id: (page - 1) * 2 + i + 1 }));
    return { body: { items, meta: { total, hasNext: page * 2 < total }, next: `https://api.test/items?page=${page + 1}` } };
  };
const pageInQuery = (r: PageRequest): number => Number(new URL(r.url).searchParams.get('page') ?? '1');

describe('stop conditions', () => {
  it.each<[string, PaginationSettings, number, string, string]>([
    [
      'Has More false ends a Next Link run that never runs out of links',
      nextLink({ hasMorePath: 'meta.hasNext' }),
      3,
      'hasMoreFalse',
      '"meta.hasNext" is false',
    ],
    [
      'Total Count reached ends a Next Link run',
      nextLink({ totalCountPath: 'meta.total' }),
      3,
      'totalReached',
      'the records fetched (6) reach the total of 6',
    ],
    ['an empty page ends a Next Link run', nextLink({ stopOnEmptyPage: true }), 4, 'emptyPage', 'page 4 has no records'],
    [
      'Total Count saves Page Number the request for an empty page',
      pageNumber({ totalCountPath: 'meta.total' }),
      3,
      'totalReached',
      'reach the total of 6',
    ],
    ['without a stop condition Page Number asks for one page more', pageNumber(), 4, 'shortPage', 'page 4 has 0 records'],
  ])('%s', (_name, settings, pages, reason, detail) => {
    const { requests, last } = drive(settings, pagedApi(6, pageInQuery));
    expect(requests).toHaveLength(pages);
    expect(last).toMatchObject({ kind: 'stop', reason, detail: expect.stringContaining(detail) as string });
  });

  it.each([
    [
      'Has More JSON Path finding nothing',
      { hasMorePath: 'meta.more' },
      'Has More JSON Path "meta.more" finds nothing on page 1; it must name one true or false value',
    ],
    ['Has More JSON Path finding a string', { hasMorePath: 'meta.flag' }, 'points to a string'],
    [
      'Total Count JSON Path finding a string',
      { totalCountPath: 'meta.flag' },
      'Total Count JSON Path "meta.flag" points to a string on page 1; it must name one whole number',
    ],
  ])('fails on %s', (_name, over, error) => {
    const step = createPaginator(nextLink(over), 'https://api.test/items').next(
      { pageNo: 1, url: 'https://api.test/items' },
      { body: { items: [1], meta: { flag: 'yes' } }, records: [1] },
    );
    expect(step).toMatchObject({ kind: 'fail', error: expect.stringContaining(error) as string });
  });
});

describe('Page Number and Offset/Limit outside the query', () => {
  it('Page Number sends the page number as a number in the JSON body', () => {
    const settings = pageNumber({ pageParam: 'paging.page', parametersIn: 'body' });
    const { requests } = drive(
      settings,
      pagedApi(5, (r) => (JSON.parse(r.body!) as { paging: { page: number } }).paging.page),
      '{"filter":"all"}',
    );
    expect(requests.map((r) => [r.url, r.body])).toEqual([
      ['https://api.test/items', '{"filter":"all","paging":{"page":1}}'],
      ['https://api.test/items', '{"filter":"all","paging":{"page":2}}'],
      ['https://api.test/items', '{"filter":"all","paging":{"page":3}}'],
    ]);
  });

  it('Offset/Limit sends both in request headers', () => {
    const settings = {
      type: 'offsetLimit',
      offsetParam: 'X-Offset',
      limitParam: 'X-Limit',
      parametersIn: 'header',
      pageSize: 2,
      maxPages: 100,
      responseDataPath: 'items',
    } as PaginationSettings;
    const { requests } = drive(
      settings,
      pagedApi(3, (r) => Number(r.headers!['X-Offset']) / 2 + 1),
    );
    expect(requests.map((r) => r.headers)).toEqual([
      { 'X-Offset': '0', 'X-Limit': '2' },
      { 'X-Offset': '2', 'X-Limit': '2' },
    ]);
    expect(requests.every((r) => r.url === 'https://api.test/items')).toBe(true);
  });
});
