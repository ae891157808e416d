/**
 * Routes of the paging server (paging-server.ts) in the shapes of well-known APIs, for Link Header,
 * Cursor and the stop conditions. Each serves the server's records in pages of `per_page` / `limit` /
 * `first` (default: the server's page size), honours the server's `status` and `loop` faults by page,
 * and says nothing of the client beyond what the real API would:
 *
 *   GET  /github/issues?page=P&per_page=N   [ …records ]; Link: next, last, first, prev (absolute)
 *   GET  /github-relative/issues?…          the same with relative link targets
 *   GET  /stripe/customers?starting_after=ID&limit=N   { object: "list", data, has_more } (ids numeric here)
 *   GET  /slack/users.list?cursor=C&limit=N { ok, members, response_metadata: { next_cursor } } ("" at the end)
 *   POST /graphql  { query, variables: { first, after } }
 *        { data: { contacts: { nodes, pageInfo: { hasNextPage, endCursor } } } }
 *   GET  /header-cursor  (request header X-Cursor)  { items }; response header X-Next-Cursor while more follow
 *   GET  /total-count?page=P&per_page=N     { total_count, items }
 */
import type http from 'node:http';
import type { PagedRecord } from './paging-server.js';

export interface ShapeContext {
  readonly origin: string;
  readonly records: number;
  readonly pageSize: number;
  /** The records from 0-based `offset`, at most `count`. */
  slice(offset: number, count: number): PagedRecord[];
  /** The page a `loop` fault on `page` sends back to, or undefined. */
  loopTo(page: number): number | undefined;
}

export interface ShapeAnswer {
  /** The 1-based page asked for (faults apply by it). */
  readonly page: number;
  readonly body: unknown;
  readonly headers?: http.OutgoingHttpHeaders;
}

const int = (value: string | null | undefined, fallback: number): number => {
  const n = value === null || value === undefined ? NaN : Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

/** An opaque cursor for page P, as Slack's base64 ones. */
export const cursorOf = (page: number): string => Buffer.from(`page:${page}`).toString('base64');
const pageOfCursor = (cursor: string | null | undefined): number => {
  if (cursor === null || cursor === undefined || cursor === '') return 1;
  const match = /^page:(\d+)$/.exec(Buffer.from(cursor, 'base64').toString());
  return match === null ? 0 : Number(match[1]);
};

/** The answer of a shaped route, or null when `url` is none of them. */
export function shapeRoute(url: URL, req: http.IncomingMessage, requestBody: string, s: ShapeContext): ShapeAnswer | null {
  const lastPage = (size: number) => Math.max(1, Math.ceil(s.records / size));
  /** The page after `page`: the next one, or where a loop fault sends it. */
  const nextOf = (page: number) => s.loopTo(page) ?? page + 1;
  switch (url.pathname) {
    case '/github/issues':
    case '/github-relative/issues': {
      const page = int(url.searchParams.get('page'), 1);
      const size = int(url.searchParams.get('per_page'), s.pageSize);
      const last = lastPage(size);
      const base = url.pathname.startsWith('/github-relative') ? '' : s.origin;
      const at = (p: number) => `<${base}${url.pathname}?per_page=${size}&page=${p}>`;
      const links = [
        ...(page > 1 ? [`${at(page - 1)}; rel="prev"`] : []),
        ...(page < last ? [`${at(nextOf(page))}; rel="next"`] : []),
        `${at(last)}; rel="last"`,
        `${at(1)}; rel="first"`,
      ];
      return { page, body: s.slice((page - 1) * size, size), headers: { link: links.join(', ') } };
    }
    case '/stripe/customers': {
      const size = int(url.searchParams.get('limit'), s.pageSize);
      const after = url.searchParams.get('starting_after');
      const from = after === null ? 0 : Number(after);
      const page = Math.floor(from / size) + 1;
      const data = s.slice(from, size);
      return { page, body: { object: 'list', url: '/v1/customers', data, has_more: from + size < s.records } };
    }
    case '/slack/users.list': {
      const size = int(url.searchParams.get('limit'), s.pageSize);
      const page = pageOfCursor(url.searchParams.get('cursor'));
      if (page === 0) return { page, body: { ok: false, error: 'invalid_cursor' } };
      const next = page < lastPage(size) ? cursorOf(nextOf(page)) : '';
      return { page, body: { ok: true, members: s.slice((page - 1) * size, size), response_metadata: { next_cursor: next } } };
    }
    case '/graphql': {
      if (req.method !== 'POST') return { page: 1, body: { errors: [{ message: 'POST only' }] } };
      const { variables } = JSON.parse(requestBody) as { variables?: { first?: number; after?: string | null } };
      const size = variables?.first ?? s.pageSize;
      const page = pageOfCursor(variables?.after);
      const hasNextPage = page < lastPage(size);
      const nodes = s.slice((page - 1) * size, size);
      return { page, body: { data: { contacts: { nodes, pageInfo: { hasNextPage, endCursor: cursorOf(nextOf(page)) } } } } };
    }
    case '/header-cursor': {
      const page = pageOfCursor(req.headers['x-cursor'] as string | undefined);
      const more = page < lastPage(s.pageSize);
      return {
        page,
        body: { items: s.slice((page - 1) * s.pageSize, s.pageSize) },
        headers: more ? { 'x-next-cursor': cursorOf(nextOf(page)) } : {},
      };
    }
    case '/total-count': {
      const page = int(url.searchParams.get('page'), 1);
      const size = int(url.searchParams.get('per_page'), s.pageSize);
      return { page, body: { total_count: s.records, items: s.slice((page - 1) * size, size) } };
    }
    default:
      return null;
  }
}
