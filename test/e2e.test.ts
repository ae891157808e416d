/**
 * End to end over a real socket, the way a newcomer runs it: apply the example config with the CLI,
 * start `ifw serve`, submit, poll until Completed, then read the rows from the target table.
 */
import BetterSqlite3 from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, ROOT, runIfw, startServer, type ServerProcess } from './helpers/process.js';

const API = '/api/vendor/integrationFramework/v1.0';
let dir: string;
let server: ServerProcess;

beforeAll(async () => {
  assertBuilt();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-e2e-'));
  const applied = await runIfw(['apply', path.join(ROOT, 'examples/customers.yaml')], { IFW_DATA_DIR: dir });
  expect(applied.code, applied.stderr).toBe(0);
  server = await startServer({ IFW_DATA_DIR: dir });
});

afterAll(async () => {
  const code = await server?.stop();
  expect(code).toBe(0);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the service over a real socket', () => {
  it('imports a submitted payload into the target table', async () => {
    const payload = fs.readFileSync(path.join(ROOT, 'examples/customers-payload.json'), 'utf8');
    const records = JSON.parse(payload) as { no: string; name: string }[];
    const res = await fetch(`${server.baseUrl}${API}/bulkImportRequests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ integrationSortingOrder: 10, payload }),
    });
    expect(res.status).toBe(202);
    const { requestId } = (await res.json()) as { requestId: string };

    let polled: { status: string; recordCount: number; processedAt: string | null; errorMessage: string } | undefined;
    for (let i = 0; i < 500; i++) {
      const r = await fetch(`${server.baseUrl}${API}/bulkImportRequests(${requestId})`);
      polled = (await r.json()) as typeof polled;
      if (polled!.status === 'Completed' || polled!.status === 'Failed') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(polled).toMatchObject({ status: 'Completed', recordCount: records.length, errorMessage: '' });
    expect(polled!.processedAt).not.toBeNull();

    const db = new BetterSqlite3(path.join(dir, 'ifw.db'), { readonly: true });
    const rows = db.prepare('select * from customer order by no').all() as { no: string; name: string }[];
    db.close();
    expect(rows.map((r) => r.no)).toEqual(records.map((r) => r.no.toUpperCase()).sort());
    expect(rows.map((r) => r.name).sort()).toEqual(records.map((r) => r.name).sort());
  });

  it('serves health checks and the OpenAPI document', async () => {
    expect((await fetch(`${server.baseUrl}/health/live`)).status).toBe(200);
    const ready = await fetch(`${server.baseUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok', checks: { database: 'ok', jobQueue: 'ok' } });
    const doc = (await (await fetch(`${server.baseUrl}/docs/json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain(`${API}/bulkImportRequests({key})`);
    expect((await fetch(`${server.baseUrl}/docs`, { redirect: 'follow' })).status).toBe(200);
  });
});
