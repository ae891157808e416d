/**
 * The OData conventions the API follows: keys in parentheses (`bulkImportRequests(<id>)`), bound
 * actions (`…(<id>)/Microsoft.NAV.cancel`), `$filter` / `$top` / `$skip` on lists and server-driven
 * paging through `@odata.nextLink`.
 *
 * The router cannot match `name(key)` directly, so `rewriteODataUrl` turns it into `name/(key)`
 * before routing; routes are declared as `name/:key` and read the key with `parseKey`. It also routes
 * the service root written with a trailing slash (`…/v1.0/`) to the root.
 */
import { INTEGER_MAX, INTEGER_MIN, isStorableInteger, NUL, NUL_REASON, parseStorableInteger } from '../core/bounds.js';
import { AppError, badRequest, notFound } from '../core/errors.js';
import type { FilterClause, FilterOp, FilterValue } from '../storage/filter.js';

export const API_BASE = '/api/vendor/integrationFramework/v1.0';

/**
 * What a `$format` asks for, written as OData clients write it (`json`, `application/json`, with
 * parameters such as `;odata.metadata=minimal`): 'json', 'xml', or undefined for anything else.
 */
export function formatOf(value: unknown): 'json' | 'xml' | undefined {
  const type = typeof value === 'string' ? value.split(';')[0]!.trim().toLowerCase() : '';
  if (type === 'json' || type === 'application/json') return 'json';
  if (type === 'xml' || type === 'application/xml') return 'xml';
  return undefined;
}

/** The service root as OData clients write it, with a trailing slash; routed to the root itself. */
const ROOT_WITH_SLASH = `${API_BASE}/`;

export function rewriteODataUrl(url: string): string {
  if (url.startsWith(ROOT_WITH_SLASH) && (url.length === ROOT_WITH_SLASH.length || url[ROOT_WITH_SLASH.length] === '?'))
    return API_BASE + url.slice(ROOT_WITH_SLASH.length);
  if (!url.includes('(') && !url.includes('%28') && !url.includes('%29')) return url;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const rest = q < 0 ? '' : url.slice(q);
  const decoded = path.replace(/%28/gi, '(').replace(/%29/gi, ')');
  return decoded.replace(/([A-Za-z][A-Za-z0-9]*)\(([^()/]*)\)/g, '$1/($2)') + rest;
}

/** The text between the parentheses of a rewritten key segment, or null when it is not one. */
export function parseKey(raw: string): string | null {
  if (raw.length < 2 || !raw.startsWith('(') || !raw.endsWith(')')) return null;
  return raw.slice(1, -1);
}

/** A string key, quoted (`'abc'`) as OData writes it; unquoted is accepted too. */
export function parseStringKey(raw: string): string | null {
  const inner = parseKey(raw);
  if (inner === null) return null;
  const m = /^'((?:[^']|'')*)'$/.exec(inner);
  const value = m ? m[1]!.replace(/''/g, "'") : inner;
  // No stored key holds U+0000 (core/bounds.ts): such a key names nothing, on either database.
  return value === '' || value.includes(NUL) ? null : value;
}

/** An integer key within what the databases store; null (404) for anything else. */
export function parseIntegerKey(raw: string): number | null {
  const inner = parseKey(raw);
  return inner === null ? null : parseStorableInteger(inner);
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A GUID key, bare or quoted; null for anything else (which the caller answers with 404). */
export function parseGuidKey(raw: string): string | null {
  const value = parseStringKey(raw);
  return value !== null && GUID.test(value) ? value.toLowerCase() : null;
}

export function requireKey<T>(value: T | null, entity: string, raw: string): T {
  if (value === null) throw notFound(`No ${entity} with key ${raw}.`);
  return value;
}

// ---- $filter -------------------------------------------------------------------------------

/**
 * A property's type; `{ oneOf }` is a string property with a closed set of values (a status). `date`
 * values are `YYYY-MM-DD`, `datetime` values are compared in `toISOString()` form, `guid` values in
 * lowercase: the forms the service stores. `integer` is one of the service's own columns (32 bits,
 * core/bounds.ts), `bigint` an integer field of a target table (within ±2^53, as imports store it).
 */
export type FilterPropertyType =
  'string' | 'integer' | 'bigint' | 'number' | 'boolean' | 'date' | 'datetime' | 'guid' | { readonly oneOf: readonly string[] };

const LITERAL = [
  "'(?:[^']|'')*'",
  '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}',
  '\\d{4}-\\d{2}-\\d{2}T[0-9:.]+(?:Z|[+-]\\d{2}:\\d{2})',
  '\\d{4}-\\d{2}-\\d{2}',
  '-?\\d+(?:\\.\\d+)?',
  'true',
  'false',
  'null',
].join('|');

/**
 * Parses the subset of `$filter` the lists support: comparisons joined by `and`, e.g.
 * `status eq 'Pending' and integrationSortingOrder eq 10`. Properties and their types are given by
 * the caller (looked up as own properties only: `constructor` is not a property of every list);
 * anything else is a 400 that says what is supported.
 */
export function parseFilter(text: string | undefined, properties: Readonly<Record<string, FilterPropertyType>>): FilterClause[] {
  if (text === undefined || text.trim() === '') return [];
  const clauses: FilterClause[] = [];
  const token = new RegExp(`\\s*([A-Za-z_][A-Za-z0-9_]*)\\s+(eq|ne|gt|ge|lt|le)\\s+(${LITERAL})(?:(?<=')|(?![\\w.:-]))\\s*`, 'y');
  let pos = 0;
  for (;;) {
    token.lastIndex = pos;
    const m = token.exec(text);
    if (!m)
      throw badRequest(
        'invalidQuery',
        `$filter is not understood at position ${pos + 1}: "${text.slice(pos, pos + 40)}". Supported: <property> eq|ne|gt|ge|lt|le <value>, joined by "and".`,
      );
    const [, property = '', op = 'eq', literal = ''] = m;
    if (!Object.hasOwn(properties, property)) {
      throw badRequest(
        'invalidQuery',
        `$filter cannot use property "${property}"; filterable properties: ${Object.keys(properties).join(', ')}.`,
      );
    }
    const value = convertLiteral(literal, properties[property]!, property);
    if (value === null && op !== 'eq' && op !== 'ne')
      throw badRequest('invalidQuery', `$filter compares ${property} with null using ${op}; null can only be compared with eq or ne.`);
    clauses.push({ property, op: op as FilterOp, value });
    pos = token.lastIndex;
    if (pos >= text.length) break;
    const and = /and\s+/iy;
    and.lastIndex = pos;
    if (!and.test(text)) throw badRequest('invalidQuery', `$filter expects "and" at position ${pos + 1}; only "and" joins comparisons.`);
    pos = and.lastIndex;
  }
  return clauses;
}

const unquote = (literal: string): string | undefined => (literal.startsWith("'") ? literal.slice(1, -1).replace(/''/g, "'") : undefined);

function convertLiteral(literal: string, type: FilterPropertyType, property: string): FilterValue {
  if (typeof type === 'object') {
    if (literal === 'null') return null;
    const value = unquote(literal);
    if (value === undefined || !type.oneOf.includes(value)) {
      throw badRequest(
        'invalidQuery',
        `$filter value ${literal} does not fit property "${property}": ${property} is one of ${type.oneOf.join(', ')}.`,
      );
    }
    return value;
  }
  if (literal === 'null') return null;
  const wrong = (expected: string) =>
    badRequest(
      'invalidQuery',
      `$filter value ${literal} does not fit property "${property}" (${type === 'bigint' ? 'integer' : type}): write ${expected}.`,
    );
  switch (type) {
    case 'string': {
      const value = unquote(literal);
      if (value === undefined) throw wrong("a quoted string such as 'text'");
      if (value.includes(NUL)) throw badRequest('invalidQuery', `$filter value for property "${property}" ${NUL_REASON}.`);
      return value;
    }
    case 'integer': {
      const value = Number(literal);
      if (!/^-?\d+$/.test(literal)) throw wrong('a whole number');
      if (!isStorableInteger(value)) throw wrong(`a whole number from ${INTEGER_MIN} to ${INTEGER_MAX}`);
      return value;
    }
    case 'bigint': {
      const value = Number(literal);
      if (!/^-?\d+$/.test(literal)) throw wrong('a whole number');
      if (!Number.isSafeInteger(value)) throw wrong('a whole number within ±9007199254740991');
      return value;
    }
    case 'number': {
      if (!/^-?\d+(?:\.\d+)?$/.test(literal)) throw wrong('a number such as 12.5');
      return Number(literal);
    }
    case 'boolean': {
      if (literal !== 'true' && literal !== 'false') throw wrong('true or false');
      return literal === 'true';
    }
    case 'date': {
      const text = unquote(literal) ?? literal;
      const d = new Date(`${text}T00:00:00Z`);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== text)
        throw wrong('a date such as 2026-01-31');
      return text;
    }
    case 'datetime': {
      const text = unquote(literal) ?? literal;
      const d = new Date(text);
      if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(d.getTime())) throw wrong('a date and time such as 2026-01-31T12:00:00Z');
      return d.toISOString();
    }
    case 'guid': {
      const text = unquote(literal) ?? literal;
      if (!GUID.test(text)) throw wrong('a GUID such as 0b9d6e2c-4f3a-4c1e-9a7b-2d5f8e1c3a60');
      return text.toLowerCase();
    }
    default: {
      const never: never = type;
      throw new AppError(500, 'internalError', `unknown filter type ${String(never)}`);
    }
  }
}

// ---- $orderby and $count -------------------------------------------------------------------

export interface OrderItem {
  readonly property: string;
  readonly descending: boolean;
}

/** `$orderby=name desc,id`: properties from `properties` only, each asc (the default) or desc. */
export function parseOrderBy(text: string | undefined, properties: readonly string[]): OrderItem[] {
  if (text === undefined || text.trim() === '') return [];
  return text.split(',').map((item) => {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)(?:\s+(asc|desc))?\s*$/i.exec(item);
    if (!m || !properties.includes(m[1]!)) {
      throw badRequest(
        'invalidQuery',
        `$orderby item "${item.trim()}" is not supported; write <property> [asc|desc], comma-separated, with a property among: ${properties.join(', ')}.`,
      );
    }
    return { property: m[1]!, descending: m[2]?.toLowerCase() === 'desc' };
  });
}

/** `$count=true` asks for `@odata.count`, the number of items matching `$filter` on all pages. */
export function parseCount(text: string | undefined): boolean {
  if (text === undefined || text === 'false') return false;
  if (text === 'true') return true;
  throw badRequest('invalidQuery', `$count must be true or false, got "${text}".`);
}

// ---- $top / $skip and server-driven paging -------------------------------------------------

/** The URL the caller wrote (`name(key)`, not the rewritten `name/(key)`), the base of an `@odata.nextLink`. */
export const requestedUrl = (request: { readonly originalUrl: string; readonly protocol: string; readonly host: string }): URL =>
  new URL(request.originalUrl, `${request.protocol}://${request.host}`);

export interface PageRequest {
  /** Rows to return in this answer. */
  readonly limit: number;
  readonly skip: number;
  /** What the caller asked for with $top (undefined: everything). */
  readonly top: number | undefined;
}

function nonNegativeInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw badRequest('invalidQuery', `${name} must be a non-negative whole number, got "${value}".`);
  return Number(value);
}

export function parsePaging(query: { $top?: string; $skip?: string }, maxPageSize: number): PageRequest {
  const top = nonNegativeInt(query.$top, '$top');
  const skip = nonNegativeInt(query.$skip, '$skip') ?? 0;
  return { top, skip, limit: Math.min(top ?? maxPageSize, maxPageSize) };
}

/**
 * Fetches one row more than the page so that the next link is only given when more rows exist.
 * `rows` is what the query returned for `limit + 1`.
 */
export function pageResult<T>(rows: T[], page: PageRequest, selfUrl: URL): { value: T[]; nextLink: string | undefined } {
  const value = rows.slice(0, page.limit);
  const remainingTop = page.top === undefined ? undefined : page.top - value.length;
  const more = rows.length > page.limit && (remainingTop === undefined || remainingTop > 0);
  if (!more) return { value, nextLink: undefined };
  const next = new URL(selfUrl);
  next.searchParams.set('$skip', String(page.skip + value.length));
  if (remainingTop !== undefined) next.searchParams.set('$top', String(remainingTop));
  else next.searchParams.delete('$top');
  return { value, nextLink: next.toString().replace(/%24/g, '$').replace(/\+/g, '%20') };
}
