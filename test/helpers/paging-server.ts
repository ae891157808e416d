/**
 * A real HTTP server (node:http on 127.0.0.1, ephemeral port) that pages a dataset of N records in
 * every shape the pagination settings support, with faults a test switches on per page. It records
 * every request (method, URL, headers, body) so tests can assert what the client sent.
 *
 * Routes (page = 1-based; each page holds `pageSize` records `{ id, name }`, ids from 1):
 *   GET /next-absolute?cursor=P   { data, next: "http://host/next-absolute?cursor=P+1" | null }
 *   GET /next-relative?cursor=P   { data, next: "next-relative?cursor=P+1" | null }   (relative)
 *   GET /odata/Customers?$skiptoken=P  { "@odata.context", value, "@odata.nextLink"? }
 *   GET /nested?page=P            { items, links: { self, next: "/nested?page=P+1" | null } }
 *   GET /page-number?page=P       { data }            (past the end: empty)
 *   GET /offset-limit?offset=O&limit=L  { results: { items } }   (honours limit)
 *   GET /root-array?page=P        [ …records ]
 *   POST /oauth/token             { access_token: "token-N", token_type, expires_in }
 *   GET /                         { service: "paging" }
 *   GET /status/CODE              answers CODE
 *   and the well-known APIs' shapes of paging-shapes.ts (GitHub, Stripe, Slack, GraphQL, …)
 * Below the server: connections, endpoints and injected time for the tests that use it.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Clock } from '../../src/core/clock.js';
import type { PaginationSettings } from '../../src/pagination/types.js';
import { OAuthTokenCache } from '../../src/rest-source/auth.js';
import type { FetchOptions } from '../../src/rest-source/fetch-pages.js';
import type { FetchedPage, RestConnection, RestEndpoint } from '../../src/rest-source/model.js';
import { shapeRoute } from './paging-shapes.js';

export type Fault =
  /** Answer `status` instead of the page, `times` times (then the page). */
  | {
      readonly kind: 'status';
      readonly page: number;
      readonly status: number;
      times: number;
      readonly retryAfter?: string;
      readonly body?: string;
    }
  /** Accept the request and never answer, `times` times. */
  | { readonly kind: 'hang'; readonly page: number; times: number }
  | { readonly kind: 'malformedJson'; readonly page: number }
  /** The page's next link points to the same route on `origin`. */
  | { readonly kind: 'crossOriginLink'; readonly page: number; readonly origin: string }
  /** The page's next link points back to page `toPage`. */
  | { readonly kind: 'loop'; readonly page: number; readonly toPage: number }
  /** The page has no records but keeps its next link. */
  | { readonly kind: 'emptyPage'; readonly page: number }
  /** Next links never end: past the data, empty pages that still link onwards. */
  | { readonly kind: 'endlessNextLinks' }
  /** Page Number past the end answers the last page again (some APIs clamp). */
  | { readonly kind: 'clampToLastPage' };

export interface RecordedRequest {
  readonly method: string;
  /** Path and query as received. */
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export interface PagingServer {
  readonly origin: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Records in the dataset and the server's real page size; change between tests freely. */
  records: number;
  pageSize: number;
  /** When set, data routes answer 401 unless Authorization equals it. */
  expectAuthorization: string | null;
  /** The token endpoint's answer for the n-th token (1-based). */
  tokenResponse: (n: number) => { status: number; body: unknown };
  setFaults(faults: Fault[]): void;
  /** Closes the connections of the requests a `hang` fault holds: the client sees its connection dropped. */
  dropHung(): void;
  /** Clears requests, faults, tokens and expectations; keeps records and pageSize unless given. */
  reset(options?: { records?: number; pageSize?: number }): void;
  close(): Promise<void>;
}

export interface PagedRecord {
  readonly id: number;
  readonly name: string;
}

const record = (id: number): PagedRecord => ({ id, name: `Record ${id}` });

function slice(from: number, count: number, total: number): PagedRecord[] {
  const out: PagedRecord[] = [];
  for (let id = from + 1; id <= Math.min(from + count, total); id++) out.push(record(id));
  return out;
}

const DEFAULT_TOKEN = (n: number): { status: number; body: unknown } => ({
  status: 200,
  body: { access_token: `token-${n}`, token_type: 'Bearer', expires_in: 3600 },
});

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const intParam = (url: URL, name: string, fallback: number): number => {
  const raw = url.searchParams.get(name);
  const n = raw === null ? NaN : Number(raw);
  return Number.isInteger(n) ? n : fallback;
};

export async function startPagingServer(options: { records?: number; pageSize?: number } = {}): Promise<PagingServer> {
  let faults: Fault[] = [];
  let tokensIssued = 0;
  const sockets = new Set<Socket>();
  const hung = new Set<http.ServerResponse>();

  const faultOn = <K extends Fault['kind']>(kind: K, page: number): Extract<Fault, { kind: K }> | undefined =>
    faults.find((f): f is Extract<Fault, { kind: K }> => f.kind === kind && (!('page' in f) || f.page === page));

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): void => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };

  /** Page number and route-specific link builder for a data route, or null when the path is not one. */
  const route = (
    url: URL,
  ): {
    page: number;
    link: (page: number, origin?: string) => string;
    shape: (data: PagedRecord[], next: string | null, page: number) => unknown;
  } | null => {
    const at =
      (param: string, origin?: string) =>
      (page: number, o = origin ?? server.origin) =>
        `${o}${url.pathname}?${param}=${page}`;
    switch (url.pathname) {
      case '/next-absolute':
        return { page: intParam(url, 'cursor', 1), link: at('cursor'), shape: (data, next) => ({ data, next }) };
      case '/next-relative':
        return {
          page: intParam(url, 'cursor', 1),
          link: (p, o) => (o === undefined ? `next-relative?cursor=${p}` : `${o}/next-relative?cursor=${p}`),
          shape: (data, next) => ({ data, next }),
        };
      case '/odata/Customers':
        return {
          page: intParam(url, '$skiptoken', 1),
          link: at('$skiptoken'),
          shape: (value, next) => ({
            '@odata.context': `${server.origin}/odata/$metadata#Customers`,
            value,
            ...(next === null ? {} : { '@odata.nextLink': next }),
          }),
        };
      case '/nested':
        return {
          page: intParam(url, 'page', 1),
          link: (p, o) => (o === undefined ? `/nested?page=${p}` : `${o}/nested?page=${p}`),
          shape: (items, next, p) => ({ items, links: { self: `/nested?page=${p}`, next } }),
        };
      case '/page-number':
        return { page: intParam(url, 'page', 1), link: at('page'), shape: (data) => ({ data }) };
      case '/root-array':
        return { page: intParam(url, 'page', 1), link: at('page'), shape: (data) => data };
      case '/offset-limit': {
        const limit = intParam(url, 'limit', server.pageSize);
        return {
          page: Math.floor(intParam(url, 'offset', 0) / Math.max(1, limit)) + 1,
          link: at('page'),
          shape: (items) => ({ results: { items } }),
        };
      }
      default:
        return null;
    }
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const body = await readBody(req);
    server.requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body });
    const url = new URL(req.url ?? '/', server.origin);

    if (url.pathname === '/oauth/token' && req.method === 'POST') {
      const { status, body: answer } = server.tokenResponse(++tokensIssued);
      return send(res, status, answer);
    }
    if (url.pathname === '/') return send(res, 200, { service: 'paging' });
    if (url.pathname.startsWith('/status/')) return send(res, Number(url.pathname.slice(8)), { error: 'as requested' });

    const shaped = shapeRoute(url, req, body, {
      origin: server.origin,
      records: server.records,
      pageSize: server.pageSize,
      slice: (offset, count) => slice(offset, count, server.records),
      loopTo: (page) => faultOn('loop', page)?.toPage,
    });
    if (shaped !== null) {
      const fault = faultOn('status', shaped.page);
      if (fault !== undefined && fault.times > 0) {
        fault.times--;
        return send(res, fault.status, fault.body ?? { error: `fault ${fault.status}` });
      }
      return send(res, 200, shaped.body, shaped.headers);
    }
    const r = route(url);
    if (r === null) return send(res, 404, { error: `no route ${url.pathname}` });
    if (server.expectAuthorization !== null && req.headers.authorization !== server.expectAuthorization) {
      return send(res, 401, { error: 'invalid token' }, { 'www-authenticate': 'Bearer' });
    }
    const { page } = r;

    const status = faultOn('status', page);
    if (status !== undefined && status.times > 0) {
      status.times--;
      return send(
        res,
        status.status,
        status.body ?? { error: `fault ${status.status}` },
        status.retryAfter === undefined ? {} : { 'retry-after': status.retryAfter },
      );
    }
    const hang = faultOn('hang', page);
    if (hang !== undefined && hang.times > 0) {
      hang.times--;
      hung.add(res);
      return; // never answered; dropHung() or close() destroys the socket
    }
    if (faultOn('malformedJson', page) !== undefined) return send(res, 200, '{"data": [{"id": 1, "name": "trunc');

    const { pageSize, records: total } = server;
    const lastPage = Math.max(1, Math.ceil(total / pageSize));
    const limit = url.pathname === '/offset-limit' ? intParam(url, 'limit', pageSize) : pageSize;
    const offset = url.pathname === '/offset-limit' ? intParam(url, 'offset', 0) : (page - 1) * pageSize;
    const shownPage = faultOn('clampToLastPage', page) !== undefined && page > lastPage ? lastPage : page;
    let data = slice(url.pathname === '/offset-limit' ? offset : (shownPage - 1) * pageSize, limit, total);
    if (faultOn('emptyPage', page) !== undefined) data = [];

    let next: string | null = page < lastPage || faultOn('endlessNextLinks', page) !== undefined ? r.link(page + 1) : null;
    const cross = faultOn('crossOriginLink', page);
    if (cross !== undefined) next = r.link(page + 1, cross.origin);
    const loop = faultOn('loop', page);
    if (loop !== undefined) next = r.link(loop.toPage);
    return send(res, 200, r.shape(data, next, page));
  };

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => send(res, 500, { error: String(err) }));
  });
  httpServer.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;

  const server: PagingServer = {
    origin: `http://127.0.0.1:${port}`,
    requests: [],
    records: options.records ?? 100,
    pageSize: options.pageSize ?? 10,
    expectAuthorization: null,
    tokenResponse: DEFAULT_TOKEN,
    setFaults(next) {
      faults = next.map((f) => ({ ...f }));
    },
    dropHung() {
      for (const res of hung) res.socket?.destroy();
      hung.clear();
    },
    reset(next = {}) {
      server.requests.length = 0;
      faults = [];
      tokensIssued = 0;
      server.expectAuthorization = null;
      server.tokenResponse = DEFAULT_TOKEN;
      if (next.records !== undefined) server.records = next.records;
      if (next.pageSize !== undefined) server.pageSize = next.pageSize;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve, reject) => httpServer.close((err) => (err ? reject(err) : resolve())));
    },
  };
  return server;
}

// ---------------------------------------------------------------------------------------------
// Fixtures for tests of the fetch loop against this server.

export function connectionTo(baseUrl: string, over: Partial<RestConnection> = {}): RestConnection {
  return {
    code: 'paging',
    baseUrl,
    auth: { type: 'none' },
    headers: {},
    query: {},
    timeoutMs: 2_000,
    retry: { maxRetries: 3, initialDelayMs: 100 },
    ...over,
  };
}

export function endpointAt(path: string, pagination: PaginationSettings, over: Partial<RestEndpoint> = {}): RestEndpoint {
  return {
    code: 'items',
    connectionCode: 'paging',
    path,
    method: 'GET',
    headers: {},
    query: {},
    body: null,
    integrationSortingOrder: 1,
    pagination,
    scheduleSeconds: null,
    responseActions: [],
    sessionCookies: false,
    ...over,
  };
}

const common = { maxPages: 100, pageSize: null, responseDataPath: 'data' } as const;

export const paging = {
  none: (over: Partial<PaginationSettings> = {}): PaginationSettings => ({ ...common, type: 'none', ...over }) as PaginationSettings,
  nextLink: (nextLinkPath: string, over: Record<string, unknown> = {}): PaginationSettings => ({
    ...common,
    type: 'nextLink',
    nextLinkPath,
    allowCrossOrigin: false,
    ...over,
  }),
  pageNumber: (over: Record<string, unknown> = {}): PaginationSettings => ({
    ...common,
    type: 'pageNumber',
    pageParam: 'page',
    pageSize: 10,
    ...over,
  }),
  offsetLimit: (over: Record<string, unknown> = {}): PaginationSettings => ({
    ...common,
    type: 'offsetLimit',
    offsetParam: 'offset',
    limitParam: 'limit',
    pageSize: 10,
    responseDataPath: 'results.items',
    ...over,
  }),
};

/** Injected time: a clock the test moves, a sleep that records delays and returns at once, fixed jitter. */
export interface FakeTime {
  readonly delays: number[];
  readonly options: FetchOptions & { clock: Clock };
  advance(ms: number): void;
}

export function fakeTime(start = '2026-01-01T00:00:00Z', random = 0.5): FakeTime {
  let now = Date.parse(start);
  const delays: number[] = [];
  return {
    delays,
    options: {
      clock: () => new Date(now),
      sleep: (ms) => {
        delays.push(ms);
        return Promise.resolve();
      },
      random: () => random,
      tokenCache: new OAuthTokenCache(),
    },
    advance(ms) {
      now += ms;
    },
  };
}

/** An onPage that collects pages (tests only: a real caller stages and forgets them). */
export function collector(): { pages: FetchedPage[]; onPage: (page: FetchedPage) => void; ids(): number[] } {
  const pages: FetchedPage[] = [];
  return {
    pages,
    onPage: (page) => void pages.push(page),
    ids: () => pages.flatMap((p) => (p.records ?? []).map((r) => (r as { id: number }).id)),
  };
}

export const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** The target table and the integration (Sorting Order 30) that take the paging server's records, as the API declares them. */
export const PAGED_CONTACTS = {
  table: {
    name: 'contact',
    fields: [
      { name: 'id', type: 'integer' },
      { name: 'name', type: 'text' },
    ],
    primaryKey: ['id'],
  },
  integration: {
    sortingOrder: 30,
    name: 'Contacts from the paging API',
    type: 'restApi',
    targetTable: 'contact',
    writeMode: 'upsert',
    fields: [
      { fieldNo: 1, title: 'Id', sourcePath: 'id' },
      { fieldNo: 2, title: 'Name', sourcePath: 'name' },
    ],
    mappings: [
      { fieldNo: 1, targetField: 'id', required: true },
      { fieldNo: 2, targetField: 'name' },
    ],
  },
};
