/**
 * What pagination detection (detect.ts) reads off one response, each with the evidence a person can
 * check: where the record array is, a stop condition's path (a "more" switch, a total), a cursor in
 * the body or in a response header, page and offset parameters in the request URL. Pure.
 */
import { pathOf } from './more-signals.js';
import type { ResponseHeaders } from './steps.js';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
/** Letters and digits only, lower case: `has_more` and `hasMore` read alike. */
export const norm = (key: string): string => key.toLowerCase().replace(/[^a-z0-9]/g, '');

/** The objects of a response, breadth first, four levels deep; arrays are not entered. */
export function* objectEntries(body: unknown, maxDepth = 4): Generator<{ keys: string[]; value: unknown; depth: number }> {
  let level: { keys: string[]; value: unknown }[] = [{ keys: [], value: body }];
  for (let depth = 0; depth < maxDepth && level.length > 0; depth++) {
    const below: { keys: string[]; value: unknown }[] = [];
    for (const { keys, value } of level) {
      if (!isObject(value)) continue;
      for (const [key, child] of Object.entries(value)) {
        const at = [...keys, key];
        yield { keys: at, value: child, depth };
        if (isObject(child)) below.push({ keys: at, value: child });
      }
    }
    level = below;
  }
}

const RECORD_NAMES = new Set(['data', 'items', 'results', 'value', 'records', 'members', 'nodes', 'entries', 'rows', 'list', 'hits']);

/** Whether rank `a` comes before rank `b` (compared number by number). */
function before(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

/** Where the record array is: its Response Data Path ('' for the root), the array, and why. */
export interface RecordArray {
  readonly path: string;
  readonly records: readonly unknown[];
  readonly evidence: string;
}

/**
 * The response's record array: the root when it is one; else the shallowest array of objects (an
 * array under a common name such as `data`, `items`, `value`, `nodes` first, then the longest); an
 * empty array under a common name when no array has objects. Undefined when there is none.
 */
export function findRecordArray(body: unknown): RecordArray | undefined {
  if (Array.isArray(body))
    return { path: '', records: body, evidence: `the response is an array of ${body.length} records (Response Data Path blank)` };
  let best: { keys: string[]; value: unknown[]; rank: number[] } | undefined;
  for (const { keys, value, depth } of objectEntries(body)) {
    if (!Array.isArray(value)) continue;
    const objects = value.length > 0 && value.every(isObject);
    const named = RECORD_NAMES.has(norm(keys.at(-1)!));
    if (!objects && !(named && value.length === 0)) continue;
    const rank = [objects ? 0 : 1, depth, named ? 0 : 1, -value.length];
    if (best === undefined || before(rank, best.rank)) best = { keys, value, rank };
  }
  if (best === undefined) return undefined;
  const path = pathOf(best.keys);
  return { path, records: best.value, evidence: `the response has an array of ${best.value.length} records at "${path}"` };
}

/** A property found by its name, with its path and value. */
export interface Found {
  readonly path: string;
  readonly value: unknown;
}

/** The first property (breadth first) whose name is one of `names` (normalised) and whose value `fits`. */
export function findProperty(body: unknown, names: ReadonlySet<string>, fits: (value: unknown) => boolean): Found | undefined {
  for (const { keys, value } of objectEntries(body)) if (names.has(norm(keys.at(-1)!)) && fits(value)) return { path: pathOf(keys), value };
  return undefined;
}

export const MORE_NAMES = new Set(['hasmore', 'hasnextpage', 'hasnext', 'morerecords', 'moreavailable']);
export const TOTAL_NAMES = new Set(['total', 'totalcount', 'totalrecords', 'totalitems', 'totalresults', 'totalelements', 'odatacount']);
export const PAGES_NAMES = new Set(['totalpages', 'pagecount', 'lastpage', 'numpages']);
export const CURSOR_NAMES = new Set(['nextcursor', 'nextpagetoken', 'nexttoken', 'cursornext', 'continuationtoken', 'nextpagecursor']);

export const isBoolean = (value: unknown): boolean => typeof value === 'boolean';
export const isCount = (value: unknown): boolean => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isToken = (value: unknown): boolean =>
  (typeof value === 'string' && value.trim() !== '') || (typeof value === 'number' && Number.isFinite(value));

/** A cursor property in the body (`next_cursor`, `nextPageToken`, …) with a token, and the usual name it is sent back under. */
export function bodyCursor(body: unknown): (Found & { readonly parameter: string }) | undefined {
  const found = findProperty(body, CURSOR_NAMES, isToken);
  if (found === undefined) return undefined;
  const name = norm(found.path.split('.').at(-1)!);
  const parameter = name.includes('pagetoken') ? 'pageToken' : name === 'continuationtoken' ? 'continuationToken' : 'cursor';
  return { ...found, parameter };
}

/** GraphQL (Relay) connections: a `pageInfo` object with `endCursor`; its path and `hasNextPage`'s when there. */
export function graphqlPageInfo(body: unknown): { cursorPath: string; hasMorePath: string | null } | undefined {
  for (const { keys, value } of objectEntries(body, 6)) {
    if (norm(keys.at(-1)!) !== 'pageinfo' || !isObject(value) || !('endCursor' in value)) continue;
    return {
      cursorPath: pathOf([...keys, 'endCursor']),
      hasMorePath: typeof value.hasNextPage === 'boolean' ? pathOf([...keys, 'hasNextPage']) : null,
    };
  }
  return undefined;
}

const HEADER_CURSORS = /^(x-)?(next-?cursor|next-?page-?token|cursor-?next|continuation(-?token)?|ms-continuation)$/;

/** A response header carrying a cursor (`X-Next-Cursor`, `X-Continuation`…), and the request header it is likely sent back in. */
export function headerCursor(headers: ResponseHeaders): { header: string; parameter: string } | undefined {
  for (const [name, value] of Object.entries(headers)) {
    const first = typeof value === 'string' ? value : value?.[0];
    if (first === undefined || first.trim() === '' || !HEADER_CURSORS.test(name.toLowerCase())) continue;
    const header = name
      .split('-')
      .map((part) => (part.length <= 1 ? part.toUpperCase() : part[0]!.toUpperCase() + part.slice(1)))
      .join('-');
    return { header, parameter: header.replace(/-?Next-?/i, '-').replace(/^-|-$/g, '') || header };
  }
  return undefined;
}

const PAGE_PARAMS = new Set(['page', 'pagenumber', 'pageno', 'pageindex', 'p']);
const OFFSET_PARAMS = new Set(['offset', 'skip', 'start', 'startindex', 'from']);
const LIMIT_PARAMS = new Set(['limit', 'top', 'perpage', 'pagesize', 'size', 'count', 'max', 'maxresults', 'rows']);

/** A query parameter of the request URL by its normalised name (`$skip` reads as `skip`). */
export interface UrlParameter {
  readonly name: string;
  readonly value: string;
}

/** The page, offset and limit parameters the request URL carries (their first of each kind). */
export function urlParameters(url: string): { page?: UrlParameter; offset?: UrlParameter; limit?: UrlParameter } {
  const found: { page?: UrlParameter; offset?: UrlParameter; limit?: UrlParameter } = {};
  for (const [name, value] of new URL(url).searchParams) {
    const n = norm(name);
    if (found.page === undefined && PAGE_PARAMS.has(n)) found.page = { name, value };
    else if (found.offset === undefined && OFFSET_PARAMS.has(n)) found.offset = { name, value };
    else if (found.limit === undefined && LIMIT_PARAMS.has(n)) found.limit = { name, value };
  }
  return found;
}

/** A whole number ≥ 1 written in a URL, or undefined. */
export const positive = (text: string | undefined): number | undefined => {
  const n = text === undefined ? NaN : Number(text);
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
};
