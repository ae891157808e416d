/**
 * Cookies within a run, against real local servers: an API that keeps its paging state in a session
 * cookie (page 1 sets it; later pages need it) works with `sessionCookies` on and fails clearly with
 * it off; the jar is new for every fetch; cookies never go to another origin (a next link to a
 * second server on another port of the same host), and a cookie that origin sets is not kept; cookie
 * values appear in no page, message, summary or log line.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getRun, listRunPages } from '../../src/import-runs/queries.js';
import { queueEndpointRun } from '../../src/import-runs/queue-endpoint-run.js';
import { runQueuedImports } from '../../src/import-runs/run-imports.js';
import { fetchPages, FetchError } from '../../src/rest-source/fetch-pages.js';
import type { FetchedPage } from '../../src/rest-source/model.js';
import { parseAddressRange } from '../../src/core/address-range.js';
import type { SecretBox } from '../../src/rest-source/secrets.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { addEndpoint, itemIds, range, runContext, setupItems, testBox, testClock, type ManualClock } from '../helpers/import-fixtures.js';
import { connectionTo, endpointAt } from '../helpers/paging-server.js';

const SECRET_SESSION = 'sess-4f1c9a7e-very-secret';
const PAGES = 3;
const PAGE = 10;

interface CookieApi {
  readonly origin: string;
  /** The Cookie header of every request, in order ('' when none). */
  readonly cookies: string[];
  /** Where page 3's next link points instead of page 4 (null: no next link after page 3). */
  elsewhere: string | null;
  sessions: number;
  close(): Promise<void>;
}

/**
 *   GET /session?page=N   page 1 sets `sid` (HttpOnly, a new value per session) and `theme`;
 *                         pages 2.. answer 401 {"error":"session expired"} unless the request
 *                         carries that session's sid. { data, next } with next /session?page=N+1
 *                         up to page 3, then `elsewhere` when set.
 *   GET /other?page=N     on the second server: { data: [], next: null }, and it sets `tracker`.
 */
function startApi(): Promise<CookieApi> {
  const issued = new Set<string>();
  const api: Omit<CookieApi, 'origin' | 'close'> = { cookies: [], elsewhere: null, sessions: 0 };
  const server = http.createServer((req, res) => {
    api.cookies.push(req.headers.cookie ?? '');
    const url = new URL(req.url ?? '/', 'http://api');
    const page = Number(url.searchParams.get('page') ?? 1);
    const json = (status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (url.pathname === '/other') return json(200, { data: [], next: null }, { 'set-cookie': 'tracker=from-elsewhere; Path=/' });
    if (url.pathname !== '/session') return json(404, { error: 'no such route' });
    if (page === 1) {
      api.sessions++;
      const sid = `${SECRET_SESSION}-${api.sessions}`;
      issued.add(sid);
      const next = `/session?page=2`;
      return json(200, { data: records(1), next }, { 'set-cookie': [`sid=${sid}; Path=/; HttpOnly`, 'theme=dark; Path=/'] });
    }
    const sid = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (sid === undefined || !issued.has(sid)) return json(401, { error: 'session expired' });
    const next = page < PAGES ? `/session?page=${page + 1}` : api.elsewhere;
    return json(200, { data: records(page), next });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(
        Object.assign(api, {
          origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          close: () => new Promise<void>((done) => server.close(() => done())),
        }),
      ),
    ),
  );
}

const records = (page: number) => range((page - 1) * PAGE + 1, page * PAGE).map((id) => ({ id, name: `Record ${id}` }));

let api: CookieApi;
let other: CookieApi;

beforeAll(async () => {
  [api, other] = await Promise.all([startApi(), startApi()]);
});
afterAll(() => Promise.all([api.close(), other.close()]));
beforeEach(() => {
  for (const server of [api, other]) {
    server.cookies.length = 0;
    server.elsewhere = null;
  }
});

const nextLink = {
  type: 'nextLink',
  nextLinkPath: 'next',
  allowCrossOrigin: false,
  maxPages: 100,
  pageSize: null,
  responseDataPath: 'data',
} as const;

async function fetchAll(sessionCookies: boolean, allowCrossOrigin = false): Promise<{ pages: FetchedPage[]; summary: unknown }> {
  const pages: FetchedPage[] = [];
  const summary = await fetchPages(
    connectionTo(api.origin),
    endpointAt('/session', { ...nextLink, allowCrossOrigin }, { sessionCookies }),
    (page) => void pages.push(page),
    // The other origin is on loopback, as every test server is: the allow list opens it (outbound-policy.ts).
    allowCrossOrigin ? { outbound: { deny: [], allow: [parseAddressRange('127.0.0.0/8')] } } : {},
  );
  return { pages, summary };
}

describe('a session-cookie paging API, through the fetch loop', () => {
  it('with sessionCookies on: page 1 sets the cookies, every later page sends them back, every page arrives', async () => {
    const { pages, summary } = await fetchAll(true);

    expect(pages.map((p) => p.records?.length)).toEqual([10, 10, 10]);
    expect(summary).toMatchObject({ pagesFetched: 3, recordCount: 30, stopReason: 'noNextLink' });
    const sid = `${SECRET_SESSION}-${api.sessions}`;
    expect(api.cookies).toEqual(['', `sid=${sid}; theme=dark`, `sid=${sid}; theme=dark`]);
    expect(JSON.stringify({ pages, summary })).not.toContain(SECRET_SESSION);
  });

  it('with it off (the default): no cookie is sent, and page 2 fails saying that cookies were set and not kept', async () => {
    const error = await fetchAll(false).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).message).toBe(
      `page 2 (GET ${api.origin}/session?page=2): the service answered 401 Unauthorized: check the credentials: {"error":"session expired"}; ` +
        'an earlier answer set cookies and this endpoint does not keep them: if the API keeps its paging state in a session cookie, turn on sessionCookies (Session cookies)',
    );
    expect(api.cookies).toEqual(['', '']);
  });

  it('each fetch starts with an empty jar', async () => {
    await fetchAll(true);
    await fetchAll(true);

    expect(api.cookies[3]).toBe('');
    expect(api.cookies[4]).toBe(`sid=${SECRET_SESSION}-${api.sessions}; theme=dark`);
  });

  it("never sends the origin's cookies to another origin (another port of the same host), and keeps none it sets", async () => {
    api.elsewhere = `${other.origin}/other?page=1`;
    const { pages } = await fetchAll(true, true);

    expect(pages.map((p) => p.url)).toEqual([
      `${api.origin}/session`,
      `${api.origin}/session?page=2`,
      `${api.origin}/session?page=3`,
      `${other.origin}/other?page=1`,
    ]);
    expect(new URL(other.origin).hostname).toBe(new URL(api.origin).hostname);
    expect(other.cookies).toEqual(['']);
    expect(api.cookies.slice(1).every((c) => !c.includes('tracker'))).toBe(true);
  });
});

describe('a whole run', () => {
  let t: TestDatabase;
  let clock: ManualClock;
  let box: SecretBox;

  beforeEach(async () => {
    t = await openTestDatabase();
    clock = testClock();
    box = testBox();
    await setupItems(t.db, clock, box, api.origin);
  });
  afterEach(() => t.cleanup());

  async function run(sessionCookies: boolean): Promise<{ runId: string; log: string }> {
    await addEndpoint(t.db, clock, 'items', {
      path: '/session',
      paginationType: 'nextLink',
      nextLinkJsonPath: 'next',
      responseDataPath: 'data',
      sessionCookies,
    });
    const lines: string[] = [];
    const logger = pino(
      { level: 'trace' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const queued = await queueEndpointRun(t.db, 'items', 'manual', clock());
    await runQueuedImports(runContext(t.db, clock, box, { logger }));
    return { runId: queued.runId, log: lines.join('') };
  }

  it('imports every record with sessionCookies on, and no cookie value is in the run, its page log or the log', async () => {
    const { runId, log } = await run(true);
    const ended = await getRun(t.db, runId);

    expect(ended).toMatchObject({ status: 'Completed', pagesFetched: 3, insertedCount: 30 });
    expect(itemIds(t.db)).toEqual(range(1, 30));
    const pages = await listRunPages(t.db, runId, { skip: 0, limit: 10 });
    expect(JSON.stringify({ ended, pages })).not.toContain(SECRET_SESSION);
    expect(log).toContain('import run completed');
    expect(log).not.toContain(SECRET_SESSION);
  });

  it('fails clearly with it off, imports nothing, and the message holds no cookie value', async () => {
    const { runId, log } = await run(false);
    const ended = await getRun(t.db, runId);

    expect(ended).toMatchObject({ status: 'Failed', insertedCount: 0 });
    expect(ended?.errorMessage).toContain('turn on sessionCookies');
    expect(itemIds(t.db)).toEqual([]);
    expect(JSON.stringify(ended)).not.toContain(SECRET_SESSION);
    expect(log).not.toContain(SECRET_SESSION);
  });
});
