/**
 * End to end over a real socket, the way a newcomer runs it (`npm start`): `ifw serve --apply
 * examples/customers.yaml` on an empty data directory with no IFW_ADMIN_PASSWORD, the generated
 * administrator password read from what the service printed, then submit, poll until Completed, and
 * read the rows from the target table, all with Basic authentication.
 */
import BetterSqlite3 from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, basicAuth, ROOT, startServer, type ServerProcess } from '../helpers/process.js';

const API = '/api/vendor/integrationFramework/v1.0';
const PASSWORD_LINE = /Its password, shown only this once: (\S+)/;
let dir: string;
let server: ServerProcess;
let admin: { authorization: string };
let password: string;

const start = () => startServer({ IFW_DATA_DIR: dir }, ['--apply', path.join(ROOT, 'examples/customers.yaml')]);

beforeAll(async () => {
  assertBuilt();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-e2e-'));
  server = await start();
  password = PASSWORD_LINE.exec(await server.waitForStderr(PASSWORD_LINE))![1]!;
  admin = basicAuth('admin', password);
});

afterAll(async () => {
  const code = await server?.stop();
  expect(code).toBe(0);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the service over a real socket', () => {
  it('prints the generated administrator password once, to stderr only', () => {
    expect(server.stderr.filter((line) => line.includes(password))).toHaveLength(1);
    expect(server.stderr.filter((line) => PASSWORD_LINE.test(line))).toHaveLength(1);
    expect(server.stderr.join('\n')).toContain('created the administrator user "admin" (permission set SUPER)');
    // The log never holds it.
    expect(server.stdout.join('\n')).not.toContain(password);
  });

  it('refuses API requests without valid credentials', async () => {
    const submit = await fetch(`${server.baseUrl}${API}/bulkImportRequests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ integrationSortingOrder: 10, payload: '[]' }),
    });
    expect(submit.status).toBe(401);
    expect(submit.headers.get('www-authenticate')).toContain('Basic');
    expect(await submit.json()).toMatchObject({ error: { code: 'unauthorized' } });

    expect((await fetch(`${server.baseUrl}${API}/bulkImportRequests`)).status).toBe(401);
    expect((await fetch(`${server.baseUrl}${API}/targetTables('customer')/rows`)).status).toBe(401);
    const wrong = await fetch(`${server.baseUrl}${API}/bulkImportRequests`, { headers: basicAuth('admin', `${password}x`) });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: { code: 'unauthorized', message: 'The user name or password is not valid.' } });
  });

  it('imports a submitted payload into the target table', async () => {
    const payload = fs.readFileSync(path.join(ROOT, 'examples/customers-payload.json'), 'utf8');
    const records = JSON.parse(payload) as { no: string; name: string }[];
    const res = await fetch(`${server.baseUrl}${API}/bulkImportRequests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...admin },
      body: JSON.stringify({ integrationSortingOrder: 10, payload }),
    });
    expect(res.status).toBe(202);
    const { requestId } = (await res.json()) as { requestId: string };

    let polled: { status: string; recordCount: number; processedAt: string | null; errorMessage: string } | undefined;
    for (let i = 0; i < 500; i++) {
      const r = await fetch(`${server.baseUrl}${API}/bulkImportRequests(${requestId})`, { headers: admin });
      expect(r.status).toBe(200);
      polled = (await r.json()) as typeof polled;
      if (polled!.status === 'Completed' || polled!.status === 'Failed') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(polled).toMatchObject({ status: 'Completed', recordCount: records.length, errorMessage: '' });
    expect(polled!.processedAt).not.toBeNull();

    const rows = (await (await fetch(`${server.baseUrl}${API}/targetTables('customer')/rows`, { headers: admin })).json()) as {
      value: { no: string }[];
    };
    expect(rows.value.map((r) => r.no).sort()).toEqual(records.map((r) => r.no.toUpperCase()).sort());

    const db = new BetterSqlite3(path.join(dir, 'ifw.db'), { readonly: true });
    const stored = db.prepare('select * from customer order by no').all() as { no: string; name: string }[];
    db.close();
    expect(stored.map((r) => r.no)).toEqual(records.map((r) => r.no.toUpperCase()).sort());
    expect(stored.map((r) => r.name).sort()).toEqual(records.map((r) => r.name).sort());
  });

  it('serves health checks and the OpenAPI document without credentials', async () => {
    expect((await fetch(`${server.baseUrl}/health/live`)).status).toBe(200);
    const ready = await fetch(`${server.baseUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok', checks: { database: 'ok', jobQueue: 'ok' } });
    const doc = (await (await fetch(`${server.baseUrl}/docs/json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain(`${API}/bulkImportRequests({key})`);
    expect((await fetch(`${server.baseUrl}/docs`, { redirect: 'follow' })).status).toBe(200);
  });

  it('prints no password when restarted on the same data directory, and the first one still works', async () => {
    const first = server;
    expect(await first.stop()).toBe(0);
    // All of the first process's output has been read: the password was in it exactly once.
    expect(first.stderr.filter((line) => PASSWORD_LINE.test(line))).toHaveLength(1);
    expect(first.stdout.join('\n')).not.toContain(password);

    server = await start();
    const res = await fetch(`${server.baseUrl}${API}/bulkImportRequests`, { headers: admin });
    expect(res.status).toBe(200);
    expect(await server.stop()).toBe(0);
    expect(server.stderr.join('\n')).not.toMatch(/password|administrator/i);
    expect(server.stdout.join('\n')).not.toContain(password);
  });
});
