/**
 * What a page says about the pages after it, read from the names APIs commonly give it: a total
 * (`total`, `totalCount`, `@odata.count`, …), a number of pages (`totalPages`, `lastPage`, …), a
 * "more" switch (`hasMore`, `has_more`, …), a next link or cursor (`next`, `links.next`,
 * `@odata.nextLink`, `_links.next.href`, `nextCursor`, …). A paginator that is about to stop while the
 * page says more follow has stopped short: its settings do not fit the API (Page Size differs from the
 * real page size, the Next Link JSON Path is wrong, the Pagination Type is None), and the run says so
 * instead of looking complete.
 */
import { listKeys } from './records.js';

/** What the page claims, and where it says it. */
export interface MoreSignal {
  readonly kind: 'total' | 'pages' | 'more' | 'nextLink' | 'cursor';
  /** Where the page says it, as a path a person can type (`meta.total`, `links.next`, `@odata.nextLink`). */
  readonly path: string;
  /** The claim in words, with its evidence: `the response says there are 35 records ("total": 35)`. */
  readonly says: string;
}

/** Letters and digits only, lower case: `@odata.count`, `total_count` and `totalCount` read alike. */
const norm = (key: string): string => key.toLowerCase().replace(/[^a-z0-9]/g, '');

const TOTALS = new Set([
  'total',
  'totalcount',
  'totalrecords',
  'totalitems',
  'totalresults',
  'totalelements',
  'totalrows',
  'totalsize',
  'count',
  'odatacount',
  'recordcount',
]);
const PAGES = new Set(['totalpages', 'pagecount', 'lastpage', 'pages', 'numpages', 'pagestotal']);
const MORE = new Set(['hasmore', 'hasnext', 'hasnextpage', 'morerecords', 'moreavailable', 'more']);
const LINKS = new Set(['next', 'nextlink', 'nextpage', 'nextpageurl', 'nexturl', 'odatanextlink', 'nextpagelink', 'nexthref']);
const CURSORS = new Set(['nextcursor', 'nextpagetoken', 'nexttoken', 'cursornext']);

const PLAIN_NAME = /^[A-Za-z_@$][\w@$-]*$/;

/** A path to a property, in the form a Next Link JSON Path or Response Data Path takes. */
export function pathOf(keys: readonly string[]): string {
  if (keys.length === 1 && !keys[0]!.includes("'")) return keys[0]!;
  if (keys.every((k) => PLAIN_NAME.test(k))) return keys.join('.');
  return `$${keys.map((k) => `[${JSON.stringify(k)}]`).join('')}`;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const shown = (value: unknown): string => JSON.stringify(value);

/** The objects of a page to look in: the root and the objects below it, three levels deep; record arrays are not entered. */
function* properties(body: unknown, prefix: readonly string[] = [], depth = 0): Generator<[keys: string[], value: unknown]> {
  if (!isObject(body) || depth > 2) return;
  for (const [key, value] of Object.entries(body)) {
    const keys = [...prefix, key];
    yield [keys, value];
    if (isObject(value)) yield* properties(value, keys, depth + 1);
  }
}

/** A next link's URL: a non-empty string, or HAL's `{ "href": "…" }`. */
function linkOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
  if (isObject(value) && typeof value.href === 'string' && value.href.trim() !== '') return value.href.trim();
  return undefined;
}

/**
 * Whether page `pageNo`, after `recordsSoFar` records in all (this page's included), says more records
 * or pages follow; the first claim found, or undefined.
 */
export function moreRecordsSignal(body: unknown, pageNo: number, recordsSoFar: number): MoreSignal | undefined {
  for (const [keys, value] of properties(body)) {
    const name = norm(keys.at(-1)!);
    const path = pathOf(keys);
    const where = `("${keys.join('.')}": ${shown(value)})`;
    if (TOTALS.has(name) && typeof value === 'number' && value > recordsSoFar)
      return { kind: 'total', path, says: `the response says there are ${value} records ${where}` };
    if (PAGES.has(name) && typeof value === 'number' && value > pageNo)
      return { kind: 'pages', path, says: `the response says there are ${value} pages ${where}` };
    if (MORE.has(name) && value === true) return { kind: 'more', path, says: `the response says more records follow ${where}` };
    if (LINKS.has(name)) {
      const link = linkOf(value);
      const linkPath = isObject(value) ? pathOf([...keys, 'href']) : path;
      if (link !== undefined) return { kind: 'nextLink', path: linkPath, says: `the response has a next link at "${linkPath}"` };
      if (typeof value === 'number' && value > pageNo) return { kind: 'pages', path, says: `the response names a next page ${where}` };
    }
    if (CURSORS.has(name) && typeof value === 'string' && value.trim() !== '')
      return { kind: 'cursor', path, says: `the response has a cursor for the next page at "${path}"` };
  }
  return undefined;
}

/** The next link a page holds under a name APIs commonly use, for "set Next Link JSON Path to …". */
export function nextLinkCandidate(body: unknown): MoreSignal | undefined {
  for (const [keys, value] of properties(body)) {
    if (!LINKS.has(norm(keys.at(-1)!)) || linkOf(value) === undefined) continue;
    const path = isObject(value) ? pathOf([...keys, 'href']) : pathOf(keys);
    return { kind: 'nextLink', path, says: `the response has a next link at "${path}"` };
  }
  return undefined;
}

/** ` (the response has properties "a", "b")`, for a path that finds nothing. */
export const propertiesHint = (body: unknown): string => (isObject(body) ? ` (the response has ${listKeys(body)})` : '');
