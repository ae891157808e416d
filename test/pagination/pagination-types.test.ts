import { describe, expect, it } from 'vitest';
import {
  compileRecordsGetter,
  createPaginator,
  explainNoRecords,
  extractRecords,
  paginationProblems,
  type NextStep,
  type PaginationSettings,
} from '../../src/pagination/index.js';

// ---------------------------------------------------------------------------------------------
// Settings builders and a driver that runs a paginator against a fake API (a function of the URL).

const common = { maxPages: 100, pageSize: null, responseDataPath: '' };
const none = (over: Partial<PaginationSettings> = {}): PaginationSettings => ({ ...common, type: 'none', ...over }) as PaginationSettings;
const nextLink = (nextLinkPath: string, over: Record<string, unknown> = {}): PaginationSettings => ({
  ...common,
  type: 'nextLink',
  nextLinkPath,
  allowCrossOrigin: false,
  ...over,
});
const pageNumber = (over: Record<string, unknown> = {}): PaginationSettings => ({
  ...common,
  type: 'pageNumber',
  pageParam: 'page',
  pageSize: 10,
  responseDataPath: 'data',
  ...over,
});
const offsetLimit = (over: Record<string, unknown> = {}): PaginationSettings => ({
  ...common,
  type: 'offsetLimit',
  offsetParam: 'offset',
  limitParam: 'limit',
  pageSize: 10,
  responseDataPath: 'results.items',
  ...over,
});

type Api = (url: URL, callNo: number) => unknown;

interface Driven {
  readonly urls: string[];
  readonly last: NextStep;
  readonly warnings: string[];
}

function drive(settings: PaginationSettings, firstUrl: string, api: Api, guard = 10_000): Driven {
  const paginator = createPaginator(settings, firstUrl);
  const getRecords = compileRecordsGetter(settings.responseDataPath);
  const urls: string[] = [];
  const warnings = new Set<string>();
  let request = paginator.first;
  for (let call = 1; call <= guard; call++) {
    urls.push(request.url);
    const body = api(new URL(request.url), call);
    const step = paginator.next(request, { body, records: getRecords(body) });
    if (step.kind !== 'fail' && step.warning !== undefined) warnings.add(step.warning);
    if (step.kind !== 'next') return { urls, last: step, warnings: [...warnings] };
    expect(step.request.pageNo).toBe(request.pageNo + 1);
    request = step.request;
  }
  throw new Error('the paginator did not stop');
}

const ids = (from: number, count: number): { id: number }[] => Array.from({ length: Math.max(0, count) }, (_, i) => ({ id: from + i }));

/** A page-addressed API with `total` records and a real page size of `size`; `shape` wraps a page's records. */
function byPage(total: number, size: number, shape: (records: unknown[]) => unknown, pageOf: (url: URL) => number): Api {
  return (url) => {
    const page = pageOf(url);
    return shape(ids((page - 1) * size + 1, Math.min(size, total - (page - 1) * size)));
  };
}

/** A next-link API: page P (cursor) links to `link(P + 1)` while records remain. */
function linked(
  total: number,
  size: number,
  build: (records: unknown[], next: string | null, page: number) => unknown,
  link: (page: number) => string,
): Api {
  const pages = Math.max(1, Math.ceil(total / size));
  return (url) => {
    const page = Number(url.searchParams.get('cursor') ?? url.searchParams.get('$skiptoken') ?? 1);
    return build(ids((page - 1) * size + 1, Math.min(size, total - (page - 1) * size)), page < pages ? link(page + 1) : null, page);
  };
}

const BASE = 'https://api.example.com/v1/items';
const MAX_PAGES_WARNING = (n: number): string => `Max Pages reached (${n}): the API has more pages; raise Max Pages or Page Size`;

// ---------------------------------------------------------------------------------------------

describe('Pagination Type None', () => {
  it('makes exactly one request and ignores a next link in the response', () => {
    const { urls, last } = drive(none(), BASE, () => ({ data: ids(1, 10), next: `${BASE}?cursor=2` }));
    expect(urls).toEqual([BASE]);
    expect(last).toMatchObject({ kind: 'stop', reason: 'singlePage' });
  });
});

describe('Next Link', () => {
  const cases: { name: string; settings: PaginationSettings; first?: string; api: Api; urls: string[] }[] = [
    {
      name: 'follows absolute links in a flat property until it is null',
      settings: nextLink('next'),
      api: linked(
        25,
        10,
        (data, next) => ({ data, next }),
        (p) => `${BASE}?cursor=${p}`,
      ),
      urls: [BASE, `${BASE}?cursor=2`, `${BASE}?cursor=3`],
    },
    {
      name: 'reads @odata.nextLink as an exact top-level property (records under value)',
      settings: nextLink('@odata.nextLink', { responseDataPath: 'value' }),
      api: linked(
        25,
        10,
        (value, next) => ({ '@odata.context': 'x', value, ...(next === null ? {} : { '@odata.nextLink': next }) }),
        (p) => `${BASE}?$skiptoken=${p}`,
      ),
      urls: [BASE, `${BASE}?$skiptoken=2`, `${BASE}?$skiptoken=3`],
    },
    {
      name: "reads $['@odata.nextLink'] as RFC 9535 JSONPath",
      settings: nextLink("$['@odata.nextLink']"),
      api: linked(
        20,
        10,
        (value, next) => ({ value, '@odata.nextLink': next }),
        (p) => `${BASE}?$skiptoken=${p}`,
      ),
      urls: [BASE, `${BASE}?$skiptoken=2`],
    },
    {
      name: 'reads a nested dot path (links.next)',
      settings: nextLink('links.next'),
      api: linked(
        30,
        10,
        (items, next) => ({ items, links: { next } }),
        (p) => `${BASE}?cursor=${p}`,
      ),
      urls: [BASE, `${BASE}?cursor=2`, `${BASE}?cursor=3`],
    },
    {
      name: 'reads a nested JSONPath ($.links.next)',
      settings: nextLink('$.links.next'),
      api: linked(
        20,
        10,
        (items, next) => ({ items, links: { next } }),
        (p) => `${BASE}?cursor=${p}`,
      ),
      urls: [BASE, `${BASE}?cursor=2`],
    },
    {
      name: 'resolves a relative link against the URL of the page that contained it',
      settings: nextLink('next'),
      first: 'https://api.example.com/v1/items?cursor=1',
      api: linked(
        30,
        10,
        (data, next) => ({ data, next }),
        (p) => `items?cursor=${p}`,
      ),
      urls: [
        'https://api.example.com/v1/items?cursor=1',
        'https://api.example.com/v1/items?cursor=2',
        'https://api.example.com/v1/items?cursor=3',
      ],
    },
    {
      name: 'resolves a root-relative link against the page origin',
      settings: nextLink('next'),
      api: linked(
        20,
        10,
        (data, next) => ({ data, next }),
        (p) => `/v2/items?cursor=${p}`,
      ),
      urls: [BASE, 'https://api.example.com/v2/items?cursor=2'],
    },
    {
      name: 'uses the link as the whole next URL: the first query is not re-appended',
      settings: nextLink('next'),
      first: `${BASE}?$top=10&filter=active`,
      api: linked(
        20,
        10,
        (data, next) => ({ data, next }),
        (p) => `${BASE}?cursor=${p}`,
      ),
      urls: [`${BASE}?$top=10&filter=active`, `${BASE}?cursor=2`],
    },
    {
      name: 'does not stop at an empty page in the middle of the sequence',
      settings: nextLink('next'),
      api: (url) => {
        const page = Number(url.searchParams.get('cursor') ?? 1);
        return { data: page === 2 ? [] : ids(page, 1), next: page < 4 ? `${BASE}?cursor=${page + 1}` : null };
      },
      urls: [BASE, `${BASE}?cursor=2`, `${BASE}?cursor=3`, `${BASE}?cursor=4`],
    },
    {
      name: 'treats Page Size as informational (pages smaller than it go on)',
      settings: nextLink('next', { pageSize: 100 }),
      api: linked(
        9,
        3,
        (data, next) => ({ data, next }),
        (p) => `${BASE}?cursor=${p}`,
      ),
      urls: [BASE, `${BASE}?cursor=2`, `${BASE}?cursor=3`],
    },
  ];
  it.each(cases)('$name', ({ settings, first, api, urls }) => {
    const driven = drive(settings, first ?? BASE, api);
    expect(driven.urls).toEqual(urls);
    expect(driven.last).toMatchObject({ kind: 'stop', reason: 'noNextLink' });
    expect(driven.warnings).toEqual([]);
  });

  it.each([
    ['absent', {}],
    ['null', { next: null }],
    ['an empty string', { next: '' }],
    ['only whitespace', { next: '  ' }],
  ])('ends when the link is %s', (_, body) => {
    expect(drive(nextLink('next'), BASE, () => body).last).toMatchObject({ kind: 'stop', reason: 'noNextLink' });
  });

  it.each([
    ['a number', { next: 2 }, 'points to the number 2, not to a URL string'],
    ['an object', { next: { href: 'x' } }, 'points to an object, not to a URL string'],
    ['a boolean', { next: true }, 'points to the boolean true'],
    ['an array', { next: ['a'] }, 'points to an array'],
  ])('fails the run when the link is %s', (_, body, message) => {
    const { last } = drive(nextLink('next'), BASE, () => body);
    expect(last.kind).toBe('fail');
    expect(last.kind === 'fail' && last.error).toContain(message);
  });

  it('fails when a JSONPath finds several values', () => {
    const { last } = drive(nextLink('$.links[*].href'), BASE, () => ({ links: [{ href: 'a' }, { href: 'b' }] }));
    expect(last).toEqual({ kind: 'fail', error: 'Next Link JSON Path "$.links[*].href" finds 2 values; it must name exactly one URL' });
  });

  it.each([
    ['another origin', 'https://evil.example.net/items?cursor=2', 'points to another origin (https://evil.example.net)'],
    ['another port', 'https://api.example.com:8443/items?cursor=2', 'points to another origin (https://api.example.com:8443)'],
    ['another scheme', 'http://api.example.com/v1/items?cursor=2', 'points to another origin (http://api.example.com)'],
    ['a non-http scheme', 'ftp://api.example.com/items', 'is not an http or https URL'],
    ['an invalid URL', 'http://[::1', 'is not a valid URL'],
  ])('refuses a link to %s', (_, link, message) => {
    const { last, urls } = drive(nextLink('next'), BASE, () => ({ next: link }));
    expect(urls).toEqual([BASE]);
    expect(last.kind === 'fail' && last.error).toContain(message);
  });

  it('follows a cross-origin link when the endpoint allows it', () => {
    const api: Api = (url) => ({ next: url.hostname === 'api.example.com' ? 'https://cdn.example.net/items?cursor=2' : null });
    expect(drive(nextLink('next', { allowCrossOrigin: true }), BASE, api).urls).toEqual([BASE, 'https://cdn.example.net/items?cursor=2']);
  });

  it('fails naming the URL when a next link points back to a page already requested', () => {
    const api: Api = (url) => {
      const page = Number(url.searchParams.get('cursor') ?? 1);
      return { next: `${BASE}?cursor=${page === 3 ? 2 : page + 1}` };
    };
    const { last, urls } = drive(nextLink('next'), BASE, api);
    expect(urls).toEqual([BASE, `${BASE}?cursor=2`, `${BASE}?cursor=3`]);
    expect(last).toEqual({
      kind: 'fail',
      error: `the next page's URL ${BASE}?cursor=2 was already requested as page 2: the API's next links loop`,
    });
  });

  it('treats a link to the page itself as a loop', () => {
    const { last } = drive(nextLink('self'), BASE, () => ({ self: BASE }));
    expect(last.kind === 'fail' && last.error).toContain(`${BASE} was already requested as page 1`);
  });

  it('stops at Max Pages with the warning when a next link is still present', () => {
    const api = linked(
      1000,
      10,
      (data, next) => ({ data, next }),
      (p) => `${BASE}?cursor=${p}`,
    );
    const { urls, last } = drive(nextLink('next', { maxPages: 3 }), BASE, api);
    expect(urls).toHaveLength(3);
    expect(last).toMatchObject({ kind: 'stop', reason: 'maxPages', warning: MAX_PAGES_WARNING(3) });
  });

  it('stops without a warning when the last page is exactly page Max Pages', () => {
    const api = linked(
      30,
      10,
      (data, next) => ({ data, next }),
      (p) => `${BASE}?cursor=${p}`,
    );
    const { urls, last } = drive(nextLink('next', { maxPages: 3 }), BASE, api);
    expect(urls).toHaveLength(3);
    expect(last).toEqual({ kind: 'stop', reason: 'noNextLink', detail: 'page 3 has no next link at "next": the last page' });
  });
});

describe('Page Number', () => {
  const pageOf = (url: URL): number => Number(url.searchParams.get('page'));
  it.each([
    { name: 'stops at the first short page', total: 25, size: 10, pages: 3, reason: 'shortPage' },
    {
      name: 'requests one more page when the last page is full, and stops at the empty one',
      total: 30,
      size: 10,
      pages: 4,
      reason: 'shortPage',
    },
    { name: 'stops after page 1 when it is already short', total: 4, size: 10, pages: 1, reason: 'shortPage' },
    { name: 'stops after page 1 of an empty dataset', total: 0, size: 10, pages: 1, reason: 'shortPage' },
  ])('$name', ({ total, size, pages, reason }) => {
    const { urls, last } = drive(
      pageNumber({ pageSize: size }),
      BASE,
      byPage(total, size, (data) => ({ data }), pageOf),
    );
    expect(urls).toEqual(Array.from({ length: pages }, (_, i) => `${BASE}?page=${i + 1}`));
    expect(last).toMatchObject({ kind: 'stop', reason });
  });

  it('replaces a page parameter already in the endpoint query and keeps the others', () => {
    const { urls } = drive(
      pageNumber(),
      `${BASE}?page=7&sort=id`,
      byPage(15, 10, (data) => ({ data }), pageOf),
    );
    expect(urls).toEqual([`${BASE}?page=1&sort=id`, `${BASE}?page=2&sort=id`]);
  });

  it('counts a root array when Response Data Path is blank', () => {
    const { urls } = drive(
      pageNumber({ responseDataPath: '' }),
      BASE,
      byPage(15, 10, (data) => data, pageOf),
    );
    expect(urls).toHaveLength(2);
  });

  it('stops at Max Pages with the warning while pages are full', () => {
    const { urls, last } = drive(
      pageNumber({ maxPages: 2 }),
      BASE,
      byPage(100, 10, (data) => ({ data }), pageOf),
    );
    expect(urls).toEqual([`${BASE}?page=1`, `${BASE}?page=2`]);
    expect(last).toMatchObject({ kind: 'stop', reason: 'maxPages', warning: MAX_PAGES_WARNING(2) });
  });

  it('stops without a warning when page Max Pages is short', () => {
    const { last } = drive(
      pageNumber({ maxPages: 2 }),
      BASE,
      byPage(15, 10, (data) => ({ data }), pageOf),
    );
    expect(last).toMatchObject({ kind: 'stop', reason: 'shortPage' });
    expect(last.kind === 'stop' && last.warning).toBeFalsy();
  });
});

describe('Offset/Limit', () => {
  const pageOf = (url: URL): number => Number(url.searchParams.get('offset')) / Number(url.searchParams.get('limit')) + 1;
  it('starts at offset 0, adds Page Size, and always sends Page Size as the limit', () => {
    const { urls, last } = drive(
      offsetLimit({ pageSize: 20 }),
      BASE,
      byPage(50, 20, (items) => ({ results: { items } }), pageOf),
    );
    expect(urls).toEqual([`${BASE}?offset=0&limit=20`, `${BASE}?offset=20&limit=20`, `${BASE}?offset=40&limit=20`]);
    expect(last).toMatchObject({
      kind: 'stop',
      reason: 'shortPage',
      detail: 'page 3 has 10 records, fewer than Page Size 20: the last page',
    });
  });

  it('uses the configured parameter names', () => {
    const { urls } = drive(offsetLimit({ offsetParam: '$skip', limitParam: '$top', pageSize: 5 }), BASE, () => ({
      results: { items: [] },
    }));
    expect(urls).toEqual([`${BASE}?%24skip=0&%24top=5`]);
  });

  it('stops at Max Pages with the warning while pages are full', () => {
    const { urls, last } = drive(
      offsetLimit({ maxPages: 3 }),
      BASE,
      byPage(1000, 10, (items) => ({ results: { items } }), pageOf),
    );
    expect(urls.at(-1)).toBe(`${BASE}?offset=20&limit=10`);
    expect(last).toMatchObject({ kind: 'stop', reason: 'maxPages', warning: MAX_PAGES_WARNING(3) });
  });
});

describe('page URLs of Page Number and Offset/Limit', () => {
  it.each([
    ['a bare URL', BASE],
    ['a query with other parameters', `${BASE}?sort=id&$filter=a eq 'b'`],
    ['the parameter already present, first', `${BASE}?offset=7&sort=id`],
    ['the parameter present twice', `${BASE}?offset=1&x=2&offset=3`],
    ['encoded characters and a fragment', `${BASE}?q=%C3%A9+x&y=a%2Fb#frag`],
    ['a URL that contains the internal position mark', `${BASE}?note=IfwPagePosition`],
  ])('are exactly what URLSearchParams.set gives: %s', (_, first) => {
    for (const settings of [pageNumber({ pageParam: 'offset' }), offsetLimit()]) {
      const paginator = createPaginator(settings, first);
      const expected = (pageNo: number): string => {
        const url = new URL(first);
        if (settings.type === 'pageNumber') url.searchParams.set('offset', String(pageNo));
        else {
          url.searchParams.set('offset', String((pageNo - 1) * 10));
          url.searchParams.set('limit', '10');
        }
        url.hash = '';
        return url.href;
      };
      expect(paginator.first.url).toBe(expected(1));
      const step = paginator.next(paginator.first, { body: null, records: ids(1, 10) });
      expect(step).toEqual({ kind: 'next', request: { pageNo: 2, url: expected(2) } });
    }
  });
});

describe('the spec\'s "Pagination problems" table', () => {
  const pageOf = (url: URL): number => Number(url.searchParams.get('page') ?? 1);
  const api = byPage(500, 50, (data) => ({ data }), pageOf);

  describe('only the first page is imported', () => {
    it('Pagination Type None: one request, reason singlePage', () => {
      expect(drive(none(), BASE, api)).toMatchObject({ urls: [BASE], last: { reason: 'singlePage' } });
    });
    it('Page Size above the real page size: page 1 looks short; the detail says so', () => {
      const { urls, last } = drive(pageNumber({ pageSize: 100 }), BASE, api);
      expect(urls).toHaveLength(1);
      expect(last).toEqual({
        kind: 'stop',
        reason: 'shortPage',
        detail:
          'page 1 has 50 records, fewer than Page Size 100: the last page; if the API has more records, Page Size is larger than its real page size',
      });
    });
    it.each([
      [
        'a path that finds nothing',
        'items',
        'Response Data Path "items" finds nothing in the response (the response has properties "data")',
      ],
      ['a path to a non-array', 'data.0', 'Response Data Path "data.0" points to an object, not to the record array'],
      [
        'a blank path on an object root',
        '',
        'Response Data Path is blank, so the response root must be the record array, but it is an object with properties "data"',
      ],
    ])('wrong Response Data Path (%s): recordsNotCountable after page 1, with the reason as a warning', (_, path, why) => {
      const { urls, last, warnings } = drive(pageNumber({ pageSize: 50, responseDataPath: path }), BASE, api);
      expect(urls).toHaveLength(1);
      expect(last).toMatchObject({ kind: 'stop', reason: 'recordsNotCountable' });
      expect(warnings).toHaveLength(1);
      expect(last.kind === 'stop' && last.warning).toContain(why);
      expect(last.kind === 'stop' && last.warning).toContain('records cannot be counted, so fetching stopped after page 1');
    });
  });

  describe('pagination runs to Max Pages', () => {
    it('Next Link JSON Path always finds a value (API links onwards forever): maxPages with the warning', () => {
      const endless: Api = (url) => ({ data: [], next: `${BASE}?cursor=${Number(url.searchParams.get('cursor') ?? 1) + 1}` });
      const { urls, last } = drive(nextLink('next', { maxPages: 3 }), BASE, endless);
      expect(urls).toHaveLength(3);
      expect(last).toMatchObject({ reason: 'maxPages', warning: MAX_PAGES_WARNING(3) });
    });
    it('Next Link JSON Path always finds the same value (e.g. a self link): fails as a loop instead', () => {
      const { last } = drive(nextLink('links.self', { maxPages: 3 }), BASE, () => ({ links: { self: BASE, next: null } }));
      expect(last.kind).toBe('fail');
    });
    it('Page Size below the real page size with an API that repeats its last page: maxPages, and a Page Size warning', () => {
      const clamped = byPage(
        120,
        50,
        (data) => ({ data }),
        (url) => Math.min(3, pageOf(url)),
      );
      const { urls, last, warnings } = drive(pageNumber({ pageSize: 20, maxPages: 5 }), BASE, clamped);
      expect(urls).toHaveLength(5);
      expect(last).toMatchObject({ reason: 'maxPages', warning: MAX_PAGES_WARNING(5) });
      expect(warnings).toEqual([
        'pages have more records than Page Size (20): set Page Size to the number of records the API really returns per page',
        MAX_PAGES_WARNING(5),
      ]);
    });
  });

  it('Max Pages reached with records missing: the warning tells to raise Max Pages or Page Size', () => {
    const { last } = drive(pageNumber({ pageSize: 50, maxPages: 4 }), BASE, api);
    expect(last).toMatchObject({ reason: 'maxPages', warning: MAX_PAGES_WARNING(4) });
  });
});

describe('Response Data Path', () => {
  const records = [{ id: 1 }, { id: 2 }];
  it.each([
    ['root array', '', records],
    ['data', 'data', { data: records }],
    ['results.items', 'results.items', { results: { items: records } }],
    ['value', 'value', { value: records, '@odata.nextLink': 'x' }],
    ['$.value', '$.value', { value: records }],
    ["$['@odata.value'] (JSONPath with a quoted name)", "$['@odata.value']", { '@odata.value': records }],
    ['a top-level name containing a dot', 'd.results', { 'd.results': records }],
  ])('finds the records of a %s response', (_, path, body) => {
    expect(extractRecords(body, path)).toEqual(records);
  });

  it.each([
    ['blank path, object root', '', { data: records }],
    ['path not found', 'items', { data: records }],
    ['path to an object', 'results', { results: { items: records } }],
    ['path to a string', 'data', { data: 'x' }],
    ['root is not JSON object or array', 'data', 'text'],
    ['JSONPath with several matches', '$.pages[*]', { pages: [records, records] }],
  ])('returns null when the path finds no array: %s', (_, path, body) => {
    expect(extractRecords(body, path)).toBeNull();
    expect(explainNoRecords(body, path)).toMatch(/^Response Data Path/);
  });
});

describe('pagination settings validation', () => {
  it.each([
    ['valid Next Link', nextLink('@odata.nextLink'), []],
    ['valid Page Number', pageNumber(), []],
    ['valid Offset/Limit', offsetLimit(), []],
    ['Max Pages 0', none({ maxPages: 0 }), ['Max Pages must be a whole number from 1 to 100000']],
    ['Max Pages fractional', none({ maxPages: 2.5 }), ['Max Pages must be a whole number from 1 to 100000']],
    ['Page Size 0', pageNumber({ pageSize: 0 }), ['Page Size must be a whole number from 1 to 100000']],
    ['missing Next Link JSON Path', nextLink(' '), ['Next Link JSON Path is required for Pagination Type Next Link']],
    [
      'bad JSONPath',
      nextLink('$.links['),
      ['Next Link JSON Path: invalid JSONPath "$.links[": unclosed bracketed selection (\'$.links[\':8)'],
    ],
    [
      'bad Response Data Path',
      pageNumber({ responseDataPath: 'a..b' }),
      ['Response Data Path: invalid path "a..b": empty name at position 2'],
    ],
    ['missing Page Parameter Name', pageNumber({ pageParam: '' }), ['Page Parameter Name is required']],
    ['same offset and limit names', offsetLimit({ limitParam: 'offset' }), ['Offset Parameter Name and Limit Parameter Name must differ']],
  ])('%s', (_, settings, problems) => {
    expect(paginationProblems(settings)).toEqual(problems);
  });

  it('createPaginator refuses invalid settings with every problem', () => {
    expect(() => createPaginator(offsetLimit({ pageSize: -1, offsetParam: '' }), BASE)).toThrow(
      'invalid pagination settings: Page Size must be a whole number from 1 to 100000; Offset Parameter Name is required',
    );
  });
});
