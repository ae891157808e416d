import { describe, expect, it } from 'vitest';
import { createPaginator, parseLinkHeader, type NextStep, type PaginationSettings, type PageRequest } from '../../src/pagination/index.js';

describe('the Link header (RFC 8288)', () => {
  const next = (header: string | string[]): unknown => {
    const parsed = parseLinkHeader(header);
    if ('error' in parsed) return parsed;
    return parsed.links.filter((l) => l.rels.includes('next')).map((l) => l.target);
  };
  it.each<[string, string | string[], unknown]>([
    [
      'GitHub: several links, quoted rel',
      '<https://api.github.com/r?page=2>; rel="next", <https://api.github.com/r?page=5>; rel="last"',
      ['https://api.github.com/r?page=2'],
    ],
    ['an unquoted rel and a relative target', '</items?page=2>; rel=next', ['/items?page=2']],
    ['several links in several headers', ['<https://a.test/1>; rel="prev"', '<https://a.test/3>; rel="next"'], ['https://a.test/3']],
    ['rel="next last": a list of relation types', '<https://a.test/q>; title="x,y"; rel="next last"', ['https://a.test/q']],
    ['commas and semicolons inside a quoted value', '<https://a.test/b?c=1,2>; title="a, b; c"; rel="next"', ['https://a.test/b?c=1,2']],
    ['an escaped quote inside a quoted value', '<https://a.test/2>;rel="next";title="with \\"quote\\", and comma"', ['https://a.test/2']],
    [
      'whitespace around "," and "=" (BWS, OWS)',
      '<https://a.test/1>; rel="prev" , <https://a.test/2> ; rel = "next"',
      ['https://a.test/2'],
    ],
    ['relation types compared case-insensitively', '<https://a.test/2>; REL="NEXT"', ['https://a.test/2']],
    ['the first rel wins, a repeated one is ignored', '<https://a.test/2>; rel="prev"; rel="next"', []],
    ['empty list elements', ', <https://a.test/2>; rel="next",, ', ['https://a.test/2']],
    ['a parameter without a value', '<https://a.test/2>; crossorigin; rel="next"', ['https://a.test/2']],
    ['no next link', '<https://a.test/1>; rel="prev", <https://a.test/9>; rel="last"', []],
    ['an empty header', '', []],
  ])('%s', (_name, header, expected) => {
    expect(next(header)).toEqual(expected);
  });

  it.each([
    ['text that is no link', 'garbage', 'expected "<" to start a link at character 1'],
    ['an unclosed target', '<https://a.test/2; rel="next"', 'a "<" has no ">"'],
    ['an unclosed quoted value', '<https://a.test/2>; rel="next', 'a quoted value is not closed'],
    ['a parameter without a name', '<https://a.test/2>; ="next"', 'a parameter has no name'],
  ])('refuses %s, saying where', (_name, header, problem) => {
    expect(parseLinkHeader(header)).toEqual({ error: expect.stringContaining(problem) as string });
  });
});

// ---------------------------------------------------------------------------------------------

const linkHeader = (over: Record<string, unknown> = {}): PaginationSettings => ({
  type: 'linkHeader',
  maxPages: 100,
  pageSize: null,
  responseDataPath: '',
  ...over,
});

type Answer = { link?: string | string[]; body?: unknown };

function drive(settings: PaginationSettings, firstUrl: string, api: (url: URL, call: number) => Answer, origin?: string) {
  const paginator = createPaginator(settings, firstUrl, origin);
  const urls: string[] = [];
  let request: PageRequest = paginator.first;
  for (let call = 1; call <= 1000; call++) {
    urls.push(request.url);
    const { link, body = [] } = api(new URL(request.url), call);
    const step: NextStep = paginator.next(request, {
      body,
      records: Array.isArray(body) ? body : null,
      headers: link === undefined ? {} : { link },
    });
    if (step.kind !== 'next') return { urls, last: step };
    request = step.request;
  }
  throw new Error('did not stop');
}

/** GitHub's shape: `page` and `per_page`, next/last/first/prev links while pages remain. */
const github =
  (pages: number, absolute: boolean) =>
  (url: URL): Answer => {
    const page = Number(url.searchParams.get('page') ?? '1');
    const at = (p: number) => `${absolute ? url.origin : ''}/repos/o/r/issues?per_page=2&page=${p}`;
    const links = [page < pages ? `<${at(page + 1)}>; rel="next"` : '', `<${at(pages)}>; rel="last"`, `<${at(1)}>; rel="first"`].filter(
      (l) => l !== '',
    );
    return { link: links.join(', '), body: [{ page }] };
  };

describe('Link Header pagination', () => {
  it.each([
    ['absolute links', true],
    ['relative links, resolved against the request URL', false],
  ])('follows rel="next" to the last page: %s', (_name, absolute) => {
    const { urls, last } = drive(linkHeader(), 'https://api.test/repos/o/r/issues?per_page=2', github(3, absolute));
    expect(urls).toEqual([
      'https://api.test/repos/o/r/issues?per_page=2',
      'https://api.test/repos/o/r/issues?per_page=2&page=2',
      'https://api.test/repos/o/r/issues?per_page=2&page=3',
    ]);
    expect(last).toMatchObject({
      kind: 'stop',
      reason: 'noNextLink',
      detail: expect.stringContaining('page 3 has a Link header without rel="next"') as string,
    });
  });

  it('stops on a page without a Link header', () => {
    const { urls, last } = drive(linkHeader(), 'https://api.test/x', () => ({}));
    expect(urls).toHaveLength(1);
    expect(last).toMatchObject({ kind: 'stop', reason: 'noNextLink', detail: 'page 1 has no Link header: the last page' });
  });

  it('stops at Max Pages with the warning', () => {
    const { urls, last } = drive(linkHeader({ maxPages: 2 }), 'https://api.test/repos/o/r/issues', github(5, true));
    expect(urls).toHaveLength(2);
    expect(last).toMatchObject({ kind: 'stop', reason: 'maxPages', warning: expect.stringContaining('Max Pages reached (2)') as string });
  });

  it('fails on a loop, naming the URL', () => {
    const { last } = drive(linkHeader(), 'https://api.test/a', (url) => ({ link: `<${url.pathname === '/a' ? '/b' : '/a'}>; rel="next"` }));
    expect(last).toEqual({ kind: 'fail', error: expect.stringContaining('https://api.test/a was already requested as page 1') as string });
  });

  it.each<[string, Record<string, unknown>, string | undefined, NextStep['kind'], string]>([
    ['a link to another origin, refused', {}, 'https://api.test', 'fail', 'points to another origin'],
    ['a link to another origin, allowed', { allowCrossOrigin: true }, 'https://api.test', 'next', ''],
    ['an unreadable Link header', {}, undefined, 'fail', 'cannot be read'],
  ])('%s', (name, over, origin, kind, message) => {
    const link = name.includes('unreadable') ? 'nonsense' : '<https://cdn.test/2>; rel="next"';
    const step = createPaginator(linkHeader(over), 'https://api.test/1', origin).next(
      { pageNo: 1, url: 'https://api.test/1' },
      { body: [], records: [], headers: { link } },
    );
    expect(step.kind).toBe(kind);
    if (step.kind === 'fail') expect(step.error).toContain(message);
  });

  it('fails when rel="next" names two different pages', () => {
    const step = createPaginator(linkHeader(), 'https://api.test/1').next(
      { pageNo: 1, url: 'https://api.test/1' },
      { body: [], records: [], headers: { link: ['</2>; rel="next"', '</3>; rel="next"'] } },
    );
    expect(step).toMatchObject({ kind: 'fail', error: expect.stringContaining('names several next pages') as string });
  });
});
