import diagnostics from 'node:diagnostics_channel';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FetchError, fetchPages } from '../../src/rest-source/fetch-pages.js';
import { parseAddressRange } from '../../src/core/address-range.js';
import type { FetchedPage } from '../../src/rest-source/model.js';
import {
  collector,
  connectionTo,
  endpointAt,
  fakeTime,
  paging,
  range,
  startPagingServer,
  type PagingServer,
} from '../helpers/paging-server.js';
import { until } from '../helpers/until.js';

let server: PagingServer;
let other: PagingServer;
beforeAll(async () => {
  server = await startPagingServer();
  other = await startPagingServer();
});
afterAll(async () => {
  await server.close();
  await other.close();
});
beforeEach(() => {
  server.reset({ records: 95, pageSize: 10 });
  other.reset({ records: 95, pageSize: 10 });
});

const paths = (s: PagingServer): string[] => s.requests.map((r) => r.url);

/** Runs `run` counting the requests the HTTP client sends meanwhile (undici's diagnostics channel). */
async function countingSent<T>(run: (sent: () => number) => Promise<T>): Promise<T> {
  let sent = 0;
  const onSend = (): void => void (sent += 1);
  diagnostics.subscribe('undici:client:sendHeaders', onSend);
  try {
    return await run(() => sent);
  } finally {
    diagnostics.unsubscribe('undici:client:sendHeaders', onSend);
  }
}

/** Until the server has received every request sent so far: what it saw is then what was sent, not what arrived in time. */
const receivedAll = (sent: () => number): Promise<number> =>
  until(() => server.requests.length, { holds: (received) => received === sent(), what: 'the server receiving every request sent' });

async function rejection(promise: Promise<unknown>): Promise<FetchError> {
  const err = await promise.then(
    () => new Error('expected the fetch to fail'),
    (e: unknown) => e,
  );
  if (!(err instanceof FetchError)) throw err;
  return err;
}

describe('fetchPages over each strategy', () => {
  it.each([
    { route: '/next-absolute', settings: paging.nextLink('next'), stop: 'noNextLink', requests: 10 },
    { route: '/next-relative', settings: paging.nextLink('next'), stop: 'noNextLink', requests: 10 },
    {
      route: '/odata/Customers',
      settings: paging.nextLink('@odata.nextLink', { responseDataPath: 'value' }),
      stop: 'noNextLink',
      requests: 10,
    },
    { route: '/nested', settings: paging.nextLink('links.next', { responseDataPath: 'items' }), stop: 'noNextLink', requests: 10 },
    { route: '/page-number', settings: paging.pageNumber(), stop: 'shortPage', requests: 10 },
    { route: '/root-array', settings: paging.pageNumber({ responseDataPath: '' }), stop: 'shortPage', requests: 10 },
    { route: '/offset-limit', settings: paging.offsetLimit(), stop: 'shortPage', requests: 10 },
  ])('$route: every record arrives once and in order, stopping with $stop', async ({ route, settings, stop, requests }) => {
    const time = fakeTime();
    const seen = collector();
    const summary = await fetchPages(connectionTo(server.origin), endpointAt(route, settings), seen.onPage, time.options);
    expect(seen.ids()).toEqual(range(1, 95));
    expect(seen.pages.map((p) => p.pageNo)).toEqual(range(1, requests));
    expect(summary).toMatchObject({ pagesFetched: requests, recordCount: 95, stopReason: stop, warnings: [] });
    expect(server.requests).toHaveLength(requests);
    expect(time.delays).toEqual([]);
  });

  it('Offset/Limit sends offset 0, 10, 20 … and limit Page Size on every request', async () => {
    server.reset({ records: 25 });
    await fetchPages(connectionTo(server.origin), endpointAt('/offset-limit', paging.offsetLimit()), () => {}, fakeTime().options);
    expect(paths(server)).toEqual([
      '/offset-limit?offset=0&limit=10',
      '/offset-limit?offset=10&limit=10',
      '/offset-limit?offset=20&limit=10',
    ]);
  });

  it('Page Number requests one page past a full last page and stops at the empty one', async () => {
    server.reset({ records: 30 });
    const summary = await fetchPages(
      connectionTo(server.origin),
      endpointAt('/page-number', paging.pageNumber()),
      () => {},
      fakeTime().options,
    );
    expect(paths(server)).toEqual(['/page-number?page=1', '/page-number?page=2', '/page-number?page=3', '/page-number?page=4']);
    expect(summary).toMatchObject({
      pagesFetched: 4,
      recordCount: 30,
      stopReason: 'shortPage',
      stopDetail: 'page 4 has 0 records, fewer than Page Size 10: the last page',
    });
  });

  it('None makes one request and ignores the next link', async () => {
    const seen = collector();
    const summary = await fetchPages(
      connectionTo(server.origin),
      endpointAt('/next-absolute', paging.none()),
      seen.onPage,
      fakeTime().options,
    );
    expect(summary).toMatchObject({ pagesFetched: 1, recordCount: 10, stopReason: 'singlePage' });
    expect(server.requests).toHaveLength(1);
  });

  it('hands over the parsed body, the counted records and the URL of each page', async () => {
    server.reset({ records: 3 });
    const seen = collector();
    await fetchPages(
      connectionTo(server.origin),
      endpointAt('/odata/Customers', paging.nextLink('@odata.nextLink', { responseDataPath: '' })),
      seen.onPage,
      fakeTime().options,
    );
    const [page] = seen.pages as [FetchedPage];
    expect(page).toMatchObject({ pageNo: 1, url: `${server.origin}/odata/Customers`, records: null });
    expect(page.body).toMatchObject({ value: [{ id: 1 }, { id: 2 }, { id: 3 }] });
  });

  it('reports recordCount null when Response Data Path finds no array (Next Link goes on regardless)', async () => {
    const summary = await fetchPages(
      connectionTo(server.origin),
      endpointAt('/next-absolute', paging.nextLink('next', { responseDataPath: '' })),
      () => {},
      fakeTime().options,
    );
    expect(summary).toMatchObject({ pagesFetched: 10, recordCount: null, stopReason: 'noNextLink' });
  });

  it('stops after page 1 with recordsNotCountable and says why when Response Data Path is wrong', async () => {
    const summary = await fetchPages(
      connectionTo(server.origin),
      endpointAt('/page-number', paging.pageNumber({ responseDataPath: 'items' })),
      () => {},
      fakeTime().options,
    );
    expect(summary.pagesFetched).toBe(1);
    expect(summary.stopReason).toBe('recordsNotCountable');
    expect(summary.warnings).toEqual([
      'Response Data Path "items" finds nothing in the response (the response has properties "data"): records cannot be counted, so fetching stopped after page 1; fix Response Data Path (the path to the record array)',
    ]);
  });

  it('stops at Max Pages with the warning when the API has more', async () => {
    const summary = await fetchPages(
      connectionTo(server.origin),
      endpointAt('/next-absolute', paging.nextLink('next', { maxPages: 4 })),
      () => {},
      fakeTime().options,
    );
    expect(summary).toMatchObject({
      pagesFetched: 4,
      recordCount: 40,
      stopReason: 'maxPages',
      warnings: ['Max Pages reached (4): the API has more pages; raise Max Pages or Page Size'],
    });
  });

  it('builds the first URL from base URL, path and both queries (endpoint wins) and sends headers (endpoint wins)', async () => {
    server.reset({ records: 5 });
    const connection = connectionTo(`${server.origin}/`, {
      query: { sort: 'id', tenant: 'a' },
      headers: { 'X-Tenant': 'a', 'X-Trace': 'c' },
    });
    const endpoint = endpointAt('page-number', paging.pageNumber(), { query: { tenant: 'b' }, headers: { 'x-tenant': 'b' } });
    await fetchPages(connection, endpoint, () => {}, fakeTime().options);
    expect(paths(server)).toEqual(['/page-number?sort=id&tenant=b&page=1']);
    expect(server.requests[0]!.headers).toMatchObject({ 'x-tenant': 'b', 'x-trace': 'c', accept: 'application/json' });
  });

  it('sends the POST body with every page request', async () => {
    server.reset({ records: 15 });
    const endpoint = endpointAt('/page-number', paging.pageNumber(), { method: 'POST', body: '{"filter":"all"}' });
    await fetchPages(connectionTo(server.origin), endpoint, () => {}, fakeTime().options);
    expect(server.requests.map((r) => [r.method, r.body, r.headers['content-type']])).toEqual([
      ['POST', '{"filter":"all"}', 'application/json'],
      ['POST', '{"filter":"all"}', 'application/json'],
    ]);
  });

  it('requests the next page while onPage handles the current one, never more than one ahead', async () => {
    const requestsSeenByOnPage: number[] = [];
    await countingSent((sent) =>
      fetchPages(
        connectionTo(server.origin),
        endpointAt('/next-absolute', paging.nextLink('next')),
        async (page) => {
          await receivedAll(sent);
          requestsSeenByOnPage.push(server.requests.length - page.pageNo);
        },
        fakeTime().options,
      ),
    );
    // While page k is handled the request for page k + 1 is out (none after the last page).
    expect(requestsSeenByOnPage).toEqual([...new Array<number>(9).fill(1), 0]);
  });

  it('stops at the first page onPage rejects, with its error', async () => {
    const stop = new Error('staging failed');
    await countingSent(async (sent) => {
      const failing = fetchPages(
        connectionTo(server.origin),
        endpointAt('/next-absolute', paging.nextLink('next')),
        (page) => {
          if (page.pageNo === 2) throw stop;
        },
        fakeTime().options,
      );
      await expect(failing).rejects.toBe(stop);
      await receivedAll(sent);
    });
    // Page 3 was already requested while page 2 was handled; nothing after it.
    expect(server.requests.map((r) => r.url)).toEqual(['/next-absolute', '/next-absolute?cursor=2', '/next-absolute?cursor=3']);
  });

  it('hands a page over only once the request for the next one is written, so staging overlaps the server work', async () => {
    const events: string[] = [];
    const onSend = (message: unknown): void => {
      const { request } = message as { request: { path: string } };
      events.push(`sent ${new URL(request.path, server.origin).searchParams.get('page') ?? '1'}`);
    };
    diagnostics.subscribe('undici:client:sendHeaders', onSend);
    try {
      server.reset({ records: 40, pageSize: 10 });
      await fetchPages(
        connectionTo(server.origin),
        endpointAt('/page-number', paging.pageNumber()),
        (page) => void events.push(`page ${page.pageNo}`),
        fakeTime().options,
      );
    } finally {
      diagnostics.unsubscribe('undici:client:sendHeaders', onSend);
    }
    expect(events).toEqual(['sent 1', 'sent 2', 'page 1', 'sent 3', 'page 2', 'sent 4', 'page 3', 'sent 5', 'page 4', 'page 5']);
  });

  it('stops when the signal aborts, with its reason', async () => {
    const controller = new AbortController();
    const fetching = fetchPages(
      connectionTo(server.origin),
      endpointAt('/next-absolute', paging.nextLink('next')),
      (page) => {
        if (page.pageNo === 3) controller.abort(new Error('shutting down'));
      },
      { ...fakeTime().options, signal: controller.signal },
    );
    await expect(fetching).rejects.toThrow('shutting down');
    // Page 4's request was already on the wire when page 3 was handed over; nothing is sent after it.
    expect(server.requests).toHaveLength(4);
  });

  it.each([
    { route: '/next-absolute', settings: paging.nextLink('next', { maxPages: 2000 }) },
    { route: '/offset-limit', settings: paging.offsetLimit({ maxPages: 2000 }) },
  ])('$route: 10 000 records over 1 000 pages arrive once and in order', async ({ route, settings }) => {
    server.reset({ records: 10_000, pageSize: 10 });
    let expected = 1;
    let pages = 0;
    const summary = await fetchPages(
      connectionTo(server.origin),
      endpointAt(route, settings),
      (page) => {
        pages++;
        for (const r of page.records ?? []) expect((r as { id: number }).id).toBe(expected++);
      },
      fakeTime().options,
    );
    expect(expected - 1).toBe(10_000);
    expect(summary).toMatchObject({ recordCount: 10_000, stopReason: route === '/offset-limit' ? 'shortPage' : 'noNextLink' });
    expect(pages).toBe(route === '/offset-limit' ? 1001 : 1000);
  });
});

describe('fetchPages faults', () => {
  const nextAbsolute = (over: Record<string, unknown> = {}) => endpointAt('/next-absolute', paging.nextLink('next', over));

  it('waits Retry-After (seconds) after a 429 and then goes on', async () => {
    server.setFaults([{ kind: 'status', page: 2, status: 429, times: 1, retryAfter: '7' }]);
    const time = fakeTime();
    const seen = collector();
    await fetchPages(connectionTo(server.origin), nextAbsolute(), seen.onPage, time.options);
    expect(time.delays).toEqual([7000]);
    expect(seen.ids()).toEqual(range(1, 95));
  });

  it('waits until a Retry-After HTTP date, measured on the injected clock', async () => {
    server.setFaults([{ kind: 'status', page: 1, status: 429, times: 1, retryAfter: 'Thu, 01 Jan 2026 00:00:30 GMT' }]);
    const time = fakeTime('2026-01-01T00:00:00Z');
    await fetchPages(connectionTo(server.origin), nextAbsolute(), () => {}, time.options);
    expect(time.delays).toEqual([30_000]);
  });

  it('retries 503 with exponential backoff and jitter, then succeeds', async () => {
    server.setFaults([{ kind: 'status', page: 3, status: 503, times: 2 }]);
    const time = fakeTime(undefined, 0.5);
    const seen = collector();
    await fetchPages(connectionTo(server.origin), nextAbsolute(), seen.onPage, time.options);
    expect(time.delays).toEqual([75, 150]); // 100 and 200 ms, each at 3/4 with random 0.5
    expect(seen.ids()).toEqual(range(1, 95));
    expect(paths(server).filter((p) => p.endsWith('cursor=3'))).toHaveLength(3);
  });

  it('fails naming the page, URL, status and body excerpt when retries run out', async () => {
    server.setFaults([{ kind: 'status', page: 2, status: 503, times: 10, body: 'x'.repeat(2000) }]);
    const err = await rejection(fetchPages(connectionTo(server.origin), nextAbsolute(), () => {}, fakeTime().options));
    expect(err.pageNo).toBe(2);
    expect(err.url).toBe(`${server.origin}/next-absolute?cursor=2`);
    expect(err.status).toBe(503);
    expect(err.message).toBe(
      `page 2 (GET ${server.origin}/next-absolute?cursor=2): the service answered 503 Service Unavailable after 4 attempts: ${'x'.repeat(500)}…`,
    );
  });

  it('fails at once on a 404 without retrying', async () => {
    const time = fakeTime();
    const err = await rejection(fetchPages(connectionTo(server.origin), endpointAt('/missing', paging.none()), () => {}, time.options));
    expect(err.message).toBe(
      `page 1 (GET ${server.origin}/missing): the service answered 404 Not Found: check the base URL and the endpoint path: {"error":"no route /missing"}`,
    );
    expect(time.delays).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('fails at once on a 401 and says to check the credentials', async () => {
    server.expectAuthorization = 'Bearer right';
    const connection = connectionTo(server.origin, { auth: { type: 'bearer', token: 'wrong-token' } });
    const err = await rejection(fetchPages(connection, nextAbsolute(), () => {}, fakeTime().options));
    expect(err.message).toContain('page 1 (GET');
    expect(err.message).toContain('answered 401 Unauthorized: check the credentials');
    expect(server.requests).toHaveLength(1);
  });

  it('retries a request that times out (no answer within timeoutMs)', async () => {
    server.setFaults([{ kind: 'hang', page: 2, times: 1 }]);
    const time = fakeTime();
    const seen = collector();
    await fetchPages(connectionTo(server.origin, { timeoutMs: 300 }), nextAbsolute(), seen.onPage, time.options);
    expect(time.delays).toHaveLength(1);
    expect(seen.ids()).toEqual(range(1, 95));
  });

  it('fails with the timeout when every attempt hangs', async () => {
    server.setFaults([{ kind: 'hang', page: 1, times: 5 }]);
    const connection = connectionTo(server.origin, { timeoutMs: 200, retry: { maxRetries: 1, initialDelayMs: 10 } });
    const err = await rejection(fetchPages(connection, nextAbsolute(), () => {}, fakeTime().options));
    expect(err.message).toBe(`page 1 (GET ${server.origin}/next-absolute): no response within 200 ms (timeout) after 2 attempts`);
  });

  it('fails after retries when nothing listens', async () => {
    const gone = await startPagingServer();
    await gone.close();
    const connection = connectionTo(gone.origin, { retry: { maxRetries: 2, initialDelayMs: 10 } });
    const time = fakeTime();
    const err = await rejection(fetchPages(connection, nextAbsolute(), () => {}, time.options));
    expect(err.message).toMatch(
      /^page 1 \(GET http:\/\/127\.0\.0\.1:\d+\/next-absolute\): network error: .*ECONNREFUSED.* after 3 attempts$/,
    );
    expect(time.delays).toHaveLength(2);
  });

  it('fails the page whose JSON is malformed', async () => {
    server.setFaults([{ kind: 'malformedJson', page: 3 }]);
    const pages: number[] = [];
    const err = await rejection(
      fetchPages(connectionTo(server.origin), nextAbsolute(), (p) => void pages.push(p.pageNo), fakeTime().options),
    );
    expect(err.pageNo).toBe(3);
    expect(err.message).toMatch(
      /^page 3 \(GET .*cursor=3\): the response is not valid JSON \(.*\); it begins: \{"data": \[\{"id": 1, "name": "trunc$/,
    );
    expect(pages).toEqual([1, 2]);
  });

  it('goes on past an empty page in the middle of a next-link sequence', async () => {
    server.setFaults([{ kind: 'emptyPage', page: 4 }]);
    const seen = collector();
    const summary = await fetchPages(connectionTo(server.origin), nextAbsolute(), seen.onPage, fakeTime().options);
    expect(seen.ids()).toEqual([...range(1, 30), ...range(41, 95)]);
    expect(summary).toMatchObject({ pagesFetched: 10, stopReason: 'noNextLink' });
  });

  it('fails naming the URL when next links loop', async () => {
    server.setFaults([{ kind: 'loop', page: 5, toPage: 3 }]);
    const err = await rejection(fetchPages(connectionTo(server.origin), nextAbsolute(), () => {}, fakeTime().options));
    expect(err.pageNo).toBe(5);
    expect(err.message).toBe(
      `page 5 (GET ${server.origin}/next-absolute?cursor=5): the next page's URL ${server.origin}/next-absolute?cursor=3 was already requested as page 3: the API's next links loop`,
    );
  });

  it('runs to Max Pages when next links never end', async () => {
    server.setFaults([{ kind: 'endlessNextLinks' }]);
    const summary = await fetchPages(connectionTo(server.origin), nextAbsolute({ maxPages: 15 }), () => {}, fakeTime().options);
    expect(summary).toMatchObject({ pagesFetched: 15, recordCount: 95, stopReason: 'maxPages' });
    expect(summary.warnings).toEqual(['Max Pages reached (15): the API has more pages; raise Max Pages or Page Size']);
  });

  it('refuses a next link to another origin', async () => {
    server.setFaults([{ kind: 'crossOriginLink', page: 2, origin: other.origin }]);
    const err = await rejection(fetchPages(connectionTo(server.origin), nextAbsolute(), () => {}, fakeTime().options));
    expect(err.pageNo).toBe(2);
    expect(err.message).toContain(`the next link ${other.origin}/next-absolute?cursor=3 points to another origin (${other.origin})`);
    expect(other.requests).toHaveLength(0);
  });

  it('follows an allowed cross-origin link without sending credentials or secret headers there', async () => {
    server.setFaults([{ kind: 'crossOriginLink', page: 2, origin: other.origin }]);
    const connection = connectionTo(server.origin, {
      auth: { type: 'apiKey', in: 'query', name: 'api_key', value: 'k-123456' },
      headers: { Authorization: 'Bearer static', 'X-Api-Token': 't-123456', 'X-Tenant': 'acme' },
    });
    const seen = collector();
    // The other origin is on loopback, as every test server is: the allow list opens it (outbound-policy.ts).
    const outbound = { deny: [], allow: [parseAddressRange('127.0.0.0/8')] };
    await fetchPages(connection, nextAbsolute({ allowCrossOrigin: true }), seen.onPage, { ...fakeTime().options, outbound });
    expect(seen.ids()).toEqual(range(1, 95));
    expect(server.requests.every((r) => r.url.includes('api_key=k-123456') && r.headers.authorization === 'Bearer static')).toBe(true);
    expect(other.requests).toHaveLength(8);
    for (const r of other.requests) {
      expect(r.url).not.toContain('api_key');
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers['x-api-token']).toBeUndefined();
      expect(r.headers['x-tenant']).toBe('acme');
    }
  });
});

describe('where a fetch may connect (outbound address policy)', () => {
  const nextAbsolute = (over: Record<string, unknown> = {}) => endpointAt('/next-absolute', paging.nextLink('next', over));
  it.each([
    ['an IP literal', (port: string) => `http://127.0.0.1:${port}`],
    ['a name that resolves to loopback (checked on the resolved address)', (port: string) => `http://localhost:${port}`],
  ])('refuses an allowed cross-origin next link to a loopback address written as %s, and never connects there', async (_, originAt) => {
    const target = originAt(new URL(other.origin).port);
    server.setFaults([{ kind: 'crossOriginLink', page: 2, origin: target }]);
    const err = await rejection(
      fetchPages(connectionTo(server.origin), nextAbsolute({ allowCrossOrigin: true }), () => {}, fakeTime().options),
    );
    expect(err.pageNo).toBe(3);
    expect(err.message).toContain('not connected:');
    expect(err.message).toContain(
      "is a loopback, link-local or private address, which only a connection's own base URL or token URL may reach",
    );
    expect(err.status).toBeNull();
    expect(other.requests).toHaveLength(0);
  });

  it("reaches the connection's own base URL on loopback (an administrator chose it), and refuses it once the deny list names it", async () => {
    const seen = collector();
    await fetchPages(connectionTo(server.origin), nextAbsolute(), seen.onPage, fakeTime().options);
    expect(seen.ids()).toEqual(range(1, 95));
    const before = server.requests.length;
    const outbound = { deny: [parseAddressRange('127.0.0.1')], allow: [] };
    const err = await rejection(fetchPages(connectionTo(server.origin), nextAbsolute(), () => {}, { ...fakeTime().options, outbound }));
    expect(err.pageNo).toBe(1);
    expect(err.message).toContain('127.0.0.1 is on the outbound deny list (IFW_OUTBOUND_DENY)');
    expect(server.requests).toHaveLength(before);
  });
});
