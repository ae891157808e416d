/**
 * The service tested the way an attacker or a careless client would: property-based, with requests
 * generated for every operation of its own OpenAPI document (test/helpers/hostile.ts), sent over real
 * sockets to a service on a real SQLite file. For every request:
 *   - no 5xx, and the process stays up (it answers /health at the end);
 *   - an error answer of an API route is exactly `{"error":{"code","message"}}`, with a code that
 *     docs/security.md lists;
 *   - a refused request (4xx) changes nothing in the database;
 *   - every request is answered, none left hanging (the client gives up after 20 s).
 * The same for raw HTTP/1.1 requests with broken framing, lines and headers.
 *
 * CI runs a fixed seed (FUZZ_SEED, default below) and FUZZ_RUNS requests on each database; `npm run
 * fuzz` runs many more with a new seed and prints it, so a failure can be replayed with
 * `FUZZ_SEED=<seed> npm run fuzz`; FUZZ_DATABASE=postgres (or sqlite) runs one database only.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import pg from 'pg';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqliteDatabase } from '../../src/storage/database.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { hostileRequest, operationsOf, rawRequest, type HostileRequest, type Operation } from '../helpers/hostile.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 500);
const RAW_RUNS = Math.max(50, Math.round(RUNS / 4));
const CONSOLE_PASSWORD = 'fuzzer-password-1';
/** FUZZ_DATABASE=sqlite|postgres: one database only (`npm run fuzz` runs both unless told). */
const FUZZ_BACKENDS = BACKENDS.filter((b) => process.env.FUZZ_DATABASE === undefined || b.name === process.env.FUZZ_DATABASE);

/** The error codes docs/security.md lists in its table of error answers. */
function documentedCodes(): Set<string> {
  const text = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/security.md'), 'utf8');
  const start = text.indexOf('## Error answers');
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  return new Set([...section.matchAll(/^\| `([a-zA-Z]+)` \|/gm)].map((m) => m[1]!));
}

const ERROR_CODES_IN_SOURCE = (): string[] => {
  const source = fs.readFileSync(path.resolve(import.meta.dirname, '../../src/core/errors.ts'), 'utf8');
  const union = source.slice(source.indexOf('export type ErrorCode'), source.indexOf(';', source.indexOf('export type ErrorCode')));
  return [...union.matchAll(/'([a-zA-Z]+)'/g)].map((m) => m[1]!);
};

describe.each(FUZZ_BACKENDS)('hostile requests over every route of the OpenAPI document ($name)', { timeout: 30 * 60_000 }, (backend) => {
  let t: TestService;
  let database: FreshDatabase;
  let reader: pg.Client | undefined;
  let base: string;
  let port: number;
  let remote: http.Server;
  let ops: Operation[];
  let validKeys: string[];
  let session: Record<string, string>;
  const agent = new Agent({ connections: 4, headersTimeout: 20_000, bodyTimeout: 20_000 });
  const codes = documentedCodes();

  beforeAll(async () => {
    // A REST API on this machine for the connection the requests may probe (nothing leaves it).
    remote = http.createServer((_req, res) => res.end('{"data":[]}'));
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    const remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;

    database = await backend.fresh();
    t = await startTestService({ workers: false, databaseUrl: database.url, config: { host: '127.0.0.1', port: 0 } });
    if (backend.name === 'postgres') {
      reader = new pg.Client({ connectionString: database.url });
      await reader.connect();
    }
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    port = Number(new URL(base).port);
    const call = async (method: string, url: string, body?: unknown) => {
      const r = await fetch(`${base}${API}/${url}`, {
        method,
        headers: { ...t.headers, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(r.status, `${method} ${url}`).toBeLessThan(300);
      return (await r.json()) as Record<string, unknown>;
    };
    await call('POST', 'users', { userName: 'fuzzer', password: CONSOLE_PASSWORD, permissionSets: ['SUPER'] });
    await call('POST', 'restApiConnections', { code: 'LOCAL', baseUrl: remoteUrl });
    await call('POST', 'restApiEndpoints', { code: 'LOCAL-ITEMS', connectionCode: 'LOCAL', path: '/items', integrationSortingOrder: 10 });
    const submitted = await call('POST', 'bulkImportRequests', { integrationSortingOrder: 10, payload: '[{"no":"C1","name":"One"}]' });
    const entries = (await call('GET', 'jobQueueEntries')).value as { id: string }[];
    validKeys = [
      '10',
      '1',
      "'customer'",
      "'LOCAL'",
      "'LOCAL-ITEMS'",
      "'admin'",
      String(submitted.requestId),
      ...entries.slice(0, 2).map((e) => e.id),
      '0198f3a2-0000-7000-8000-000000000000',
    ];
    session = await signInToConsole();
    const doc = (await (await fetch(`${base}/docs/json`)).json()) as Parameters<typeof operationsOf>[0];
    ops = operationsOf(doc);
    console.log(`fuzz (${backend.name}) seed=${SEED} runs=${RUNS} raw runs=${RAW_RUNS} operations=${ops.length}`);
  });

  /** Signs in to the console as the SUPER user `fuzzer`: the session cookie and the CSRF token its pages carry. */
  async function signInToConsole(): Promise<Record<string, string>> {
    const form = await fetch(`${base}/login`);
    const loginCookie = form.headers.getSetCookie()[0]!.split(';')[0]!;
    const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const signed = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: loginCookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: token, userName: 'fuzzer', password: CONSOLE_PASSWORD, next: '/' }).toString(),
    });
    expect(signed.status).toBe(303);
    const cookie = signed.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .find((c) => c.startsWith('ifw_session='))!;
    const home = await (await fetch(`${base}/`, { headers: { cookie } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(home)![1]!;
    return { cookie, 'x-csrf-token': csrf };
  }

  afterAll(async () => {
    await agent.close();
    await reader?.end();
    await t?.cleanup();
    await database?.cleanup();
    await new Promise<void>((resolve) => remote?.close(() => resolve()));
  });

  /**
   * Every table's rows, hashed: what "nothing changed" compares. When a console session was last seen
   * moves on with every page it asks for, refused or not, so that column is left out.
   */
  const snapshot = async (): Promise<string> => {
    const hash = createHash('sha256');
    if (reader === undefined) {
      const sqlite = (t.service.db as SqliteDatabase).sqlite;
      const tables = sqlite.prepare("select name from sqlite_master where type = 'table' order by name").pluck().all() as string[];
      for (const table of tables) {
        hash.update(table);
        const columns = table === 'ifw_console_session' ? 'token_hash, user_id, security_stamp, csrf_token, created_at, expires_at' : '*';
        for (const row of sqlite.prepare(`select ${columns} from "${table}"`).raw().iterate())
          hash.update(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
      }
      return hash.digest('hex');
    }
    const tables = await reader.query<{ name: string }>(
      "select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1",
    );
    for (const { name } of tables.rows) {
      hash.update(name);
      const rows = await reader.query<{ row: string }>(`select (to_jsonb(t) - 'last_seen_at')::text as row from "${name}" t order by 1`);
      for (const { row } of rows.rows) hash.update(row);
    }
    return hash.digest('hex');
  };

  async function send(req: HostileRequest): Promise<{ status: number; contentType: string; text: string }> {
    const answer = await request(`${base}${req.url}`, {
      method: req.method as 'GET',
      headers: req.headers,
      body: req.body,
      dispatcher: agent,
    });
    const text = await answer.body.text();
    return { status: answer.statusCode, contentType: String(answer.headers['content-type'] ?? ''), text };
  }

  it('lists every error code the service can answer with in docs/security.md', () => {
    expect([...codes].sort()).toEqual(ERROR_CODES_IN_SOURCE().sort());
  });

  it('never answers 5xx, answers errors in the error shape with a documented code, changes nothing when it refuses', async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(hostileRequest(ops, { authorization: t.headers.authorization, session, validKeys }), async (req) => {
        const before = await snapshot();
        const answer = await send(req);
        seen.set(answer.status, (seen.get(answer.status) ?? 0) + 1);
        const what = `${req.method} ${req.url.slice(0, 200)} (${req.operation}) → ${answer.status} ${answer.text.slice(0, 300)}`;
        expect(answer.status, what).toBeLessThan(500);
        if (answer.status < 400) return;
        expect(await snapshot(), `${what}: a refused request changed the database`).toBe(before);
        if (!req.url.startsWith(API) && !answer.contentType.startsWith('application/json')) return; // a console page answers in HTML
        expect(answer.contentType, what).toMatch(/^application\/json/);
        const body = JSON.parse(answer.text) as { error: Record<string, unknown> };
        expect(Object.keys(body), what).toEqual(['error']);
        expect(Object.keys(body.error).sort(), what).toEqual(['code', 'message']);
        expect(codes.has(String(body.error.code)), `${what}: undocumented code`).toBe(true);
        expect(typeof body.error.message === 'string' && body.error.message.length > 0, what).toBe(true);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    console.log(`fuzz answers by status: ${JSON.stringify(Object.fromEntries([...seen].sort((a, b) => a[0] - b[0])))}`);
    // The generated requests reach past authentication and validation, not only into 400s.
    expect([...seen.keys()].filter((s) => s < 300).length).toBeGreaterThan(0);
    expect(seen.get(404) ?? 0).toBeGreaterThan(0);
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });

  it('answers raw requests with broken framing, lines and headers below 500 and in the error shape', async () => {
    const paths = ['/health', `${API}/bulkImportRequests`, `${API}/integrations(10)`, `${API}/targetTables('customer')/rows`, '/login'];
    await fc.assert(
      fc.asyncProperty(rawRequest(paths, t.headers.authorization), async (raw) => {
        const answer = await rawExchange(port, raw);
        const statusLine = answer.split('\r\n')[0] ?? '';
        const what = `${JSON.stringify(raw.slice(0, 200))} → ${answer.slice(0, 300)}`;
        if (answer === '') return; // the server may close a connection whose request it cannot read at all
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
        expect(status, what).toBeLessThan(500);
        const [head = '', body = ''] = answer.split('\r\n\r\n');
        if (status >= 400 && /content-type: application\/json/i.test(head) && body !== '') {
          const parsed = JSON.parse(body.trim()) as { error?: { code: string } };
          expect(codes.has(parsed.error?.code ?? ''), what).toBe(true);
        }
      }),
      { seed: SEED, numRuns: RAW_RUNS, endOnFailure: true },
    );
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });
});

/** Writes `raw` on a fresh connection and answers what the server sends until it closes (at most 5 s). */
function rawExchange(port: number, raw: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(done, 5000);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', done);
    socket.on('error', done);
    socket.write(raw, 'utf8');
  });
}
