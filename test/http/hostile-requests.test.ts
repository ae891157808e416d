/**
 * Hostile and careless requests over real sockets: whatever Node's parser, fastify's router or the
 * body parser refuses is answered with `{"error":{"code","message"}}` and changes nothing; input that
 * names a key never reaches an object's prototype; every key that can be created can be managed. On
 * SQLite and on PostgreSQL alike.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype);

/** Writes `raw` on a fresh connection and answers everything the server sends until it closes. */
function rawRequest(port: number, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', (err) => (answer === '' ? reject(err) : resolve(answer)));
    socket.write(raw);
  });
}

function expectErrorAnswer(answer: string, status: number, code: string): void {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  expect(head.split('\r\n')[0]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(head.toLowerCase()).toContain('content-type: application/json');
  const parsed = JSON.parse(body) as { error: { code: string; message: string } };
  expect(Object.keys(parsed)).toEqual(['error']);
  expect(parsed.error.code).toBe(code);
  expect(parsed.error.message.length).toBeGreaterThan(10);
}

describe.each(BACKENDS)('hostile HTTP requests ($name)', { timeout: 60_000 }, (backend) => {
  let fresh: FreshDatabase;
  let t: TestService;
  let base: string;
  let port: number;

  beforeAll(async () => {
    fresh = await backend.fresh();
    t = await startTestService({ workers: false, databaseUrl: fresh.url, config: { host: '127.0.0.1', port: 0 } });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    port = Number(new URL(base).port);
  });

  afterAll(async () => {
    await t?.cleanup();
    await fresh?.cleanup();
  });

  const call = async (method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) => {
    const r = await fetch(`${base}${path}`, { method, headers: { ...t.headers, ...init.headers }, body: init.body });
    const text = await r.text();
    return { status: r.status, text, json: (text === '' ? {} : JSON.parse(text)) as { error?: { code: string; message: string } } };
  };
  const requestCount = async () =>
    Number(
      (
        await t.service.db.kysely
          .selectFrom('ifw_bulk_import_request')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('answers a malformed percent-escape in the URL with 400 and the error body', async () => {
    for (const key of ['%zz', '%ED%A0%80', '%']) {
      const answer = await call('GET', `${API}/bulkImportRequests(${key})`);
      expect(answer.status).toBe(400);
      expect(answer.json.error?.code).toBe('invalidRequest');
      expect(answer.json.error?.message).toMatch(/percent-escape/);
    }
  });

  it('answers a key longer than any resource has with 414 and the error body', async () => {
    const answer = await call('GET', `${API}/applications('${'a'.repeat(3000)}')`);
    expect(answer.status).toBe(414);
    expect(answer.json.error?.code).toBe('invalidRequest');
  });

  it('manages an application whose client id has the documented maximum of 200 characters, escaped or not', async () => {
    const clientId = `a:${'b'.repeat(198)}`;
    expect(
      (await call('POST', `${API}/applications`, { body: JSON.stringify({ clientId }), headers: { 'content-type': 'application/json' } }))
        .status,
    ).toBe(201);
    const key = encodeURIComponent(`'${clientId}'`).replace(/%3A/g, '%3a');
    expect((await call('GET', `${API}/applications(${key})`)).status).toBe(200);
    expect((await call('GET', `${API}/applications('${clientId}')`)).status).toBe(200);
    const patched = await call('PATCH', `${API}/applications('${clientId}')`, {
      body: JSON.stringify({ displayName: 'long' }),
      headers: { 'content-type': 'application/json' },
    });
    expect(patched.status).toBe(200);
    expect((await call('DELETE', `${API}/applications('${clientId}')`)).status).toBe(204);
  });

  it('answers headers over 16 KB with 431 and the error body', async () => {
    const answer = await rawRequest(port, `GET ${API}/integrations HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`);
    expectErrorAnswer(answer, 431, 'invalidRequest');
  });

  it('answers broken HTTP framing with 400 and the error body', async () => {
    expectErrorAnswer(
      await rawRequest(port, `POST ${API}/integrations HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`),
      400,
      'invalidRequest',
    );
    expectErrorAnswer(await rawRequest(port, 'GARBAGE\r\n\r\n'), 400, 'invalidRequest');
  });

  it('answers an unknown Expect header with 417 and the error body', async () => {
    const answer = await rawRequest(port, `GET ${API}/integrations HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nConnection: close\r\n\r\n`);
    expectErrorAnswer(answer, 417, 'invalidRequest');
  });

  it('answers 404 for an unknown path whatever its body or media type', async () => {
    for (const [body, type] of [
      ['{bad', 'application/json'],
      ['x=1', 'application/x-www-form-urlencoded'],
      ['<a/>', 'application/xml'],
    ] as const) {
      const answer = await call('POST', `${API}/noSuchThing`, { body, headers: { 'content-type': type } });
      expect(answer.status).toBe(404);
      expect(answer.json.error?.code).toBe('notFound');
    }
  });

  it('refuses a body with a "__proto__" key by name, as valid JSON it is, and creates nothing', async () => {
    const before = await requestCount();
    const answer = await call('POST', `${API}/bulkImportRequests`, {
      body: '{"integrationSortingOrder":10,"payload":"[]","__proto__":{"admin":true}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(answer.status).toBe(400);
    expect(answer.json.error?.message).toContain('__proto__');
    expect(answer.json.error?.message).not.toMatch(/not valid JSON/);
    expect(await requestCount()).toBe(before);
    // The same body streamed (chunked, as large bodies are read): refused by name too, nothing stored.
    const streamed = await fetch(`${base}${API}/bulkImportRequests`, {
      method: 'POST',
      headers: { ...t.headers, 'content-type': 'application/json' },
      body: new Blob(['{"__proto__":{"integrationSortingOrder":10},', '"payload":"[]"}']).stream(),
      duplex: 'half',
    });
    expect(streamed.status).toBe(400);
    expect(((await streamed.json()) as { error: { message: string } }).error.message).toContain('__proto__');
    expect(await requestCount()).toBe(before);
  });

  it('refuses a payload nested deeper than 256 levels at submit, streamed or not, and stores nothing', async () => {
    const nested = (depth: number) => `${'['.repeat(depth - 1)}[{"no":"D-1","name":"deep"}]${']'.repeat(depth - 1)}`;
    const submit = (payload: string, streamed = false) =>
      fetch(`${base}${API}/bulkImportRequests`, {
        method: 'POST',
        headers: { ...t.headers, 'content-type': 'application/json' },
        body: streamed
          ? new Blob([JSON.stringify({ integrationSortingOrder: 10, payload })]).stream()
          : JSON.stringify({ integrationSortingOrder: 10, payload }),
        duplex: 'half',
      });
    const before = await requestCount();
    for (const [payload, streamed] of [
      [nested(257), false],
      [nested(17_500), false],
      [nested(300), true],
      [`[{"no":"D-2","name":"x","deep":${'['.repeat(20_000)}${']'.repeat(20_000)}}]`, true],
    ] as const) {
      const answer = await submit(payload, streamed);
      expect(answer.status).toBe(400);
      const body = (await answer.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('payloadTooDeep');
      expect(body.error.message).toMatch(/more than 256 levels/);
    }
    expect(await requestCount()).toBe(before);
    // Brackets inside strings are text, not nesting.
    const brackets = await submit(JSON.stringify([{ no: 'D-3', name: '['.repeat(1000) }]));
    expect(brackets.status).toBe(202);
    expect((await submit('[[[{"no":"D-4","name":"three levels"}]]]')).status).toBe(202);
  });

  it('refuses a compressed body with 415 instead of reading it as plain JSON, and stores nothing', async () => {
    const before = await requestCount();
    const answer = await call('POST', `${API}/bulkImportRequests`, {
      body: JSON.stringify({ integrationSortingOrder: 10, payload: '[]' }),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(answer.status).toBe(415);
    expect(answer.json.error?.code).toBe('unsupportedMediaType');
    expect(await requestCount()).toBe(before);
    const identity = await call('POST', `${API}/bulkImportRequests`, {
      body: JSON.stringify({ integrationSortingOrder: 10, payload: '[]' }),
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
    });
    expect(identity.status).toBe(202);
  });

  it('refuses query options on every API route of the OpenAPI document that declares none', async () => {
    const doc = (await (await fetch(`${base}/docs/json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { in: string }[] }>>;
    };
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      const get = item.get;
      if (get === undefined || !path.startsWith(API) || path.includes('{')) continue;
      if ((get.parameters ?? []).some((p) => p.in === 'query')) continue;
      const answer = await call('GET', `${path}?$filter=${encodeURIComponent('name eq 1')}`);
      expect(answer.status, path).toBe(400);
      expect(answer.json.error?.code, path).toBe('invalidQuery');
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('refuses every Object.prototype name as a $filter property or $orderby, with 400', async () => {
    for (const name of PROTOTYPE_NAMES) {
      for (const url of [
        `${API}/bulkImportRequests?$filter=${encodeURIComponent(`${name} eq 1`)}`,
        `${API}/importRuns?$filter=${encodeURIComponent(`${name} eq 1`)}`,
        `${API}/targetTables('customer')/rows?$filter=${encodeURIComponent(`${name} eq 1`)}`,
        `${API}/targetTables('customer')/rows?$orderby=${encodeURIComponent(name)}`,
        `${API}/bulkImportRequests?$orderby=${encodeURIComponent(name)}`,
      ]) {
        const answer = await call('GET', url);
        expect(answer.status, url).toBe(400);
        expect(answer.json.error?.code, url).toBe('invalidQuery');
      }
    }
  });
});
