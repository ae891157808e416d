/**
 * The OData conventions the API follows: keys in parentheses (`bulkImportRequests(<id>)`), bound
 * actions (`…(<id>)/Microsoft.NAV.cancel`), `$filter` / `$top` / `$skip` on lists and server-driven
 * paging through `@odata.nextLink`.
 *
 * The router cannot match `name(key)` directly, so `rewriteODataUrl` turns it into `name/(key)`
 * before routing; routes are declared as `name/:key` and read the key with `parseKey`.
 */
import { AppError, badRequest, notFound } from '../core/errors.js';
import type { FilterClause, FilterOp, FilterValue } from '../storage/filter.js';

export const API_BASE = '/api/vendor/integrationFramework/v1.0';

export function rewriteODataUrl(url: string): string {
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
  return value === '' ? null : value;
}

export function parseIntegerKey(raw: string): number | null {
  const inner = parseKey(raw);
  if (inner === null || !/^-?\d{1,15}$/.test(inner)) return null;
  return Number(inner);
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

/** A property's type; `{ oneOf }` is a string property with a closed set of values (a status). */
export type FilterPropertyType = 'string' | 'integer' | 'boolean' | 'datetime' | { readonly oneOf: readonly string[] };

/**
 * Parses the subset of `$filter` the lists support: comparisons joined by `and`, e.g.
 * `status eq 'Pending' and integrationSortingOrder eq 10`. Properties and their types are given by
 * the caller; anything else is a 400 that says what is supported.
 */
export function parseFilter(text: string | undefined, properties: Readonly<Record<string, FilterPropertyType>>): FilterClause[] {
  if (text === undefined || text.trim() === '') return [];
  const clauses: FilterClause[] = [];
  const token =
    /\s*([A-Za-z][A-Za-z0-9]*)\s+(eq|ne|gt|ge|lt|le)\s+('(?:[^']|'')*'|\d{4}-\d{2}-\d{2}T[0-9:.]+(?:Z|[+-]\d{2}:\d{2})|-?\d+(?:\.\d+)?|true|false|null)\s*/y;
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
    const type = properties[property];
    if (type === undefined) {
      throw badRequest(
        'invalidQuery',
        `$filter cannot use property "${property}"; filterable properties: ${Object.keys(properties).join(', ')}.`,
      );
    }
    clauses.push({ property, op: op as FilterOp, value: convertLiteral(literal, type, property) });
    pos = token.lastIndex;
    if (pos >= text.length) break;
    const and = /and\s+/iy;
    and.lastIndex = pos;
    if (!and.test(text)) throw badRequest('invalidQuery', `$filter expects "and" at position ${pos + 1}; only "and" joins comparisons.`);
    pos = and.lastIndex;
  }
  return clauses;
}

function convertLiteral(literal: string, type: FilterPropertyType, property: string): FilterValue {
  if (typeof type === 'object') {
    const value = literal.startsWith("'") ? literal.slice(1, -1).replace(/''/g, "'") : undefined;
    if (value === undefined || !type.oneOf.includes(value)) {
      throw badRequest(
        'invalidQuery',
        `$filter value ${literal} does not fit property "${property}": ${property} is one of ${type.oneOf.join(', ')}.`,
      );
    }
    return value;
  }
  if (literal === 'null') return null;
  const wrong = () => badRequest('invalidQuery', `$filter value ${literal} does not fit property "${property}" (${type}).`);
  switch (type) {
    case 'string': {
      if (!literal.startsWith("'")) throw wrong();
      return literal.slice(1, -1).replace(/''/g, "'");
    }
    case 'integer': {
      if (!/^-?\d+$/.test(literal)) throw wrong();
      return Number(literal);
    }
    case 'boolean': {
      if (literal !== 'true' && literal !== 'false') throw wrong();
      return literal === 'true';
    }
    case 'datetime': {
      const text = literal.startsWith("'") ? literal.slice(1, -1) : literal;
      const d = new Date(text);
      if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(d.getTime())) throw wrong();
      return d.toISOString();
    }
    default: {
      const never: never = type;
      throw new AppError(500, 'internalError', `unknown filter type ${String(never)}`);
    }
  }
}

// ---- $top / $skip and server-driven paging -------------------------------------------------

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
