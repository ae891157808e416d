import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  computeBackoff,
  createAgent,
  excerpt,
  exchange,
  MAX_BACKOFF_MS,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  withHttp,
  type HttpOutcome,
} from '../../src/rest-source/http-client.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const policy = { maxRetries: 5, initialDelayMs: 500 };

describe('computeBackoff', () => {
  it.each([
    // attempt, Retry-After, random, expected ms
    { why: 'first retry, no jitter drawn low', attempt: 1, retryAfter: null, random: 0, expected: 250 },
    { why: 'first retry, jitter drawn high', attempt: 1, retryAfter: null, random: 0.999999, expected: 500 },
    { why: 'doubles per retry', attempt: 2, retryAfter: null, random: 0.5, expected: 750 },
    { why: 'doubles again', attempt: 3, retryAfter: null, random: 0.5, expected: 1500 },
    { why: 'capped at MAX_BACKOFF_MS', attempt: 12, retryAfter: null, random: 0.999999, expected: MAX_BACKOFF_MS },
    { why: 'cap applies before jitter', attempt: 12, retryAfter: null, random: 0, expected: MAX_BACKOFF_MS / 2 },
    { why: 'Retry-After seconds win over backoff', attempt: 1, retryAfter: '3', random: 0.9, expected: 3000 },
    { why: 'Retry-After 0 retries at once', attempt: 4, retryAfter: '0', random: 0.9, expected: 0 },
    { why: 'Retry-After HTTP date', attempt: 1, retryAfter: 'Thu, 01 Jan 2026 00:00:45 GMT', random: 0.9, expected: 45_000 },
    { why: 'Retry-After date in the past', attempt: 1, retryAfter: 'Wed, 31 Dec 2025 23:00:00 GMT', random: 0.9, expected: 0 },
    { why: 'Retry-After over the cap is shortened', attempt: 1, retryAfter: '3600', random: 0.9, expected: MAX_RETRY_AFTER_MS },
    { why: 'unreadable Retry-After falls back to backoff', attempt: 1, retryAfter: 'soon', random: 0, expected: 250 },
    { why: 'negative Retry-After is unreadable', attempt: 2, retryAfter: '-5', random: 0, expected: 500 },
  ])('$why', ({ attempt, retryAfter, random, expected }) => {
    expect(computeBackoff(attempt, policy, retryAfter, NOW, random)).toBe(expected);
  });

  it('waits nothing with an initial delay of 0', () => {
    expect(computeBackoff(3, { maxRetries: 3, initialDelayMs: 0 }, null, NOW, 0.7)).toBe(0);
  });
});

describe('parseRetryAfter', () => {
  it.each([
    [null, null],
    ['120', 120_000],
    [' 5 ', 5_000],
    ['1.5', null],
    ['Thu, 01 Jan 2026 00:01:00 GMT', 60_000],
    ['garbage', null],
  ])('%s → %s', (header, ms) => {
    expect(parseRetryAfter(header, NOW)).toBe(ms);
  });
});

describe('excerpt', () => {
  it('keeps a short body on one line', () => {
    expect(excerpt('{\n  "error": "bad"\n}')).toBe('{ "error": "bad" }');
  });
  it('cuts a long body at 500 characters', () => {
    expect(excerpt('y'.repeat(800))).toBe(`${'y'.repeat(500)}…`);
  });
});

describe('exchange over a real socket', () => {
  const BIG_TEXT = 'ä€😀 '.repeat(200_000); // 2.2 MB in many chunks, characters split across them
  const HUGE_ERROR = 'x'.repeat(4 << 20);
  let server: http.Server;
  let origin: string;
  const requests: string[] = [];
  const stalled: http.ServerResponse[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      requests.push(req.url!);
      switch (req.url) {
        case '/bom':
          res.setHeader('set-cookie', ['a=1', 'b=2']);
          res.setHeader('X-Mixed-Case', 'kept');
          res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"ok":true}')]));
          return;
        case '/big':
          res.end(BIG_TEXT);
          return;
        case '/huge-error':
          res.statusCode = 500;
          res.end(HUGE_ERROR);
          return;
        case '/error-bom':
          res.statusCode = 400;
          res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('bad')]));
          return;
        case '/early-hints':
          res.writeEarlyHints({ link: '</style.css>; rel=preload' });
          res.end('after the hints');
          return;
        case '/stall':
          res.writeHead(200, { 'content-length': '100' });
          res.write('{"partial":');
          stalled.push(res);
          return;
        default:
          res.end(`{"path":${JSON.stringify(req.url)}}`);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const res of stalled) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const get = (path: string, signal?: AbortSignal, dispatcher = createAgent(5_000)): Promise<HttpOutcome> =>
    withHttp(5_000, { dispatcher, ...(signal === undefined ? {} : { signal }) }, (deps) =>
      exchange(
        { method: 'GET', url: `${origin}${path}`, headers: { accept: 'application/json' }, body: null, timeoutMs: 5_000 },
        { maxRetries: 0, initialDelayMs: 0 },
        deps,
      ),
    );

  it('reads a 2xx body whole, without its byte order mark, with the headers as undici parses them', async () => {
    const outcome = await get('/bom');
    expect(outcome).toMatchObject({ kind: 'answer', status: 200, text: '{"ok":true}', attempts: 1 });
    const { headers } = outcome as Extract<HttpOutcome, { kind: 'answer' }>;
    expect(headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(headers['x-mixed-case']).toBe('kept');
  });

  it('reads a body of many chunks exactly, characters split across chunks included', async () => {
    const outcome = await get('/big');
    expect(outcome.kind === 'answer' && outcome.text === BIG_TEXT).toBe(true);
  });

  it('reads only the beginning of an error body, keeps its byte order mark, and the next request still answers', async () => {
    const dispatcher = createAgent(5_000);
    try {
      const outcome = await get('/huge-error', undefined, dispatcher);
      expect(outcome.kind).toBe('answer');
      const { status, text } = outcome as Extract<HttpOutcome, { kind: 'answer' }>;
      expect(status).toBe(500);
      expect(text.length).toBeGreaterThanOrEqual(8 * 1024);
      expect(text.length).toBeLessThan(HUGE_ERROR.length);
      expect(await get('/error-bom', undefined, dispatcher)).toMatchObject({ status: 400, text: '\ufeffbad' });
      expect(await get('/after', undefined, dispatcher)).toMatchObject({ status: 200, text: '{"path":"/after"}' });
    } finally {
      await dispatcher.close();
    }
  });

  it('passes over a 103 Early Hints answer to the final one', async () => {
    expect(await get('/early-hints')).toMatchObject({ kind: 'answer', status: 200, text: 'after the hints' });
  });

  it("rejects with the signal's reason when it aborts while the body is on its way", async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const answer = get('/stall', controller.signal);
    await expect.poll(() => stalled.length).toBe(1);
    controller.abort(reason);
    await expect(answer).rejects.toBe(reason);
  });

  it("sends nothing and rejects with the signal's reason when it has aborted already", async () => {
    const before = requests.length;
    const reason = new Error('already stopped');
    await expect(get('/never', AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(requests.length).toBe(before);
  });

  it('answers no answer, not a throw, for a URL that is not HTTP', async () => {
    const outcome = await withHttp(5_000, {}, (deps) =>
      exchange(
        { method: 'GET', url: 'ftp://127.0.0.1/x', headers: {}, body: null, timeoutMs: 5_000 },
        { maxRetries: 0, initialDelayMs: 0 },
        deps,
      ),
    );
    expect(outcome).toEqual({
      kind: 'noAnswer',
      reason: 'the request is invalid: Invalid URL protocol: the URL must start with `http:` or `https:`.',
      attempts: 1,
    });
  });
});
