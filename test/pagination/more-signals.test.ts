/** What a page says about the pages after it (src/pagination/more-signals.ts), table-driven. */
import { describe, expect, it } from 'vitest';
import { moreRecordsSignal, nextLinkCandidate } from '../../src/pagination/more-signals.js';

describe('moreRecordsSignal', () => {
  it.each([
    [
      'a total above the records so far',
      { data: [], total: 35 },
      1,
      10,
      { kind: 'total', path: 'total', says: 'the response says there are 35 records ("total": 35)' },
    ],
    ['a nested total', { data: [], meta: { total_count: 35 } }, 1, 10, { kind: 'total', path: 'meta.total_count' }],
    ['@odata.count', { value: [], '@odata.count': 35 }, 1, 10, { kind: 'total', path: '@odata.count' }],
    ['a number of pages above this one', { data: [], totalPages: 4 }, 1, 10, { kind: 'pages', path: 'totalPages' }],
    ['hasMore true', { data: [], has_more: true }, 1, 10, { kind: 'more', path: 'has_more' }],
    ['a next link', { data: [], links: { next: '/p?page=2' } }, 1, 10, { kind: 'nextLink', path: 'links.next' }],
    ["HAL's next href", { _links: { next: { href: '/p?page=2' } } }, 1, 10, { kind: 'nextLink', path: '_links.next.href' }],
    ['a next cursor', { data: [], nextCursor: 'abc' }, 1, 10, { kind: 'cursor', path: 'nextCursor' }],
  ])('%s: more follow', (_name, body, pageNo, soFar, expected) => {
    expect(moreRecordsSignal(body, pageNo, soFar)).toMatchObject(expected);
  });

  it.each([
    ['a total reached', { data: [], total: 35 }, 4, 35],
    ['a count of this page only', { data: [], count: 10 }, 1, 10],
    ['the last page by number', { data: [], totalPages: 4 }, 4, 35],
    ['hasMore false', { data: [], hasMore: false }, 1, 10],
    ['a null or empty next link', { data: [], next: null, links: { next: '  ' } }, 1, 10],
    ['a root array', [{ total: 99 }], 1, 1],
    ['nothing of the kind', { data: [], page: 1, size: 10 }, 1, 10],
  ])('%s: nothing says more follow', (_name, body, pageNo, soFar) => {
    expect(moreRecordsSignal(body, pageNo, soFar)).toBeUndefined();
  });
});

describe('nextLinkCandidate', () => {
  it('finds a next link under a common name, as a path to set', () => {
    expect(nextLinkCandidate({ data: [], paging: { nextPageUrl: 'https://x/2' } })?.path).toBe('paging.nextPageUrl');
    expect(nextLinkCandidate({ '@odata.nextLink': 'https://x/2' })?.path).toBe('@odata.nextLink');
    expect(nextLinkCandidate({ 'odd key': { next: 'https://x/2' } })?.path).toBe('$["odd key"]["next"]');
    expect(nextLinkCandidate({ data: [], next: null })).toBeUndefined();
  });
});
