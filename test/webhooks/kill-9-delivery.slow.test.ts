/**
 * kill -9 of `ifw serve` between the commit that ends a request and the delivery of its event: after a
 * restart the event is still delivered, signed (verified with the `standardwebhooks` package), once by
 * id. Twice: with the delivery entry On Hold while the request ends (the event waits in the outbox),
 * and with the process killed while its POST is held open by a slow receiver (no answer was ever read).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../src/webhooks/model.js';
import { assertBuilt, basicAuth, runIfw, startServer, type ServerProcess } from '../helpers/process.js';
import { until } from '../helpers/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const API = '/api/vendor/integrationFramework/v1.0';
const ADMIN_PASSWORD = 'webhook-crash-administrator';
const admin = basicAuth('admin', ADMIN_PASSWORD);
const ENTRY = `${API}/jobQueueEntries('webhook-delivery')`;

const config = `
targetTables:
  - name: hook_row
    primaryKey: [key]
    fields:
      - { name: key, type: code, maxLength: 40 }
integrations:
  - sortingOrder: 40
    name: Hook rows
    type: file
    targetTable: hook_row
    acceptBulkImportRequests: true
    writeMode: upsert
    fields:
      - { fieldNo: 1, title: Key, sourcePath: key, columnType: standard }
    mappings:
      - { fieldNo: 1, targetField: key }
`;

let dir: string;
let env: NodeJS.ProcessEnv;
let receiver: WebhookReceiver;
const secret = newWebhookSecret();
const running: ServerProcess[] = [];

async function call(
  server: ServerProcess,
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${server.baseUrl}${url}`, {
    method,
    headers: { ...admin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

async function start(): Promise<ServerProcess> {
  const server = await startServer(env);
  running.push(server);
  return server;
}

async function submitAndWaitCompleted(server: ServerProcess, key: string): Promise<string> {
  const submitted = await call(server, 'POST', `${API}/bulkImportRequests`, {
    integrationSortingOrder: 40,
    payload: JSON.stringify([{ key }]),
  });
  expect(submitted.status).toBe(202);
  const requestId = submitted.json.requestId as string;
  await until(async () => (await call(server, 'GET', `${API}/bulkImportRequests(${requestId})`)).json.status === 'Completed', {
    what: `request ${requestId} Completed`,
  });
  return requestId;
}

const eventsOf = (requestId: string) =>
  receiver.events.filter((e) => (e.body as { data: { requestId?: string } }).data.requestId === requestId);

beforeAll(async () => {
  assertBuilt();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-hook-crash-'));
  env = {
    IFW_DATA_DIR: dir,
    IFW_ADMIN_PASSWORD: ADMIN_PASSWORD,
    IFW_SCHEDULER_TICK_MS: '50',
    IFW_LOG_LEVEL: 'info',
    IFW_LEASE_SECONDS: '2',
  };
  fs.writeFileSync(path.join(dir, 'hooks.yaml'), config);
  const applied = await runIfw(['apply', path.join(dir, 'hooks.yaml')], env);
  expect(applied.code, applied.stderr).toBe(0);
  receiver = await startWebhookReceiver(secret);
});

afterAll(async () => {
  for (const server of running) await server.stop('SIGKILL').catch(() => undefined);
  await receiver?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('kill -9 between the commit that ends a request and its delivery', { timeout: 120_000 }, () => {
  it('delivers the event after a restart: from the outbox, and again after a POST cut short', async () => {
    let server = await start();
    const hook = await call(server, 'POST', `${API}/webhooks`, { integrationSortingOrder: 40, url: receiver.url, secret });
    expect(hook.status).toBe(201);

    // 1. The event is committed with the request, and the process dies before any delivery.
    expect((await call(server, 'POST', `${ENTRY}/Microsoft.NAV.setOnHold`)).status).toBe(200);
    const first = await submitAndWaitCompleted(server, 'A');
    const pending = await call(server, 'GET', `${API}/webhookDeliveries?$filter=subjectId eq '${first}'`);
    expect(pending.json.value).toMatchObject([{ status: 'Pending', attempts: 0 }]);
    server.child.kill('SIGKILL');
    await server.stop();
    expect(receiver.events).toEqual([]);

    server = await start();
    expect((await call(server, 'POST', `${ENTRY}/Microsoft.NAV.setReady`)).status).toBe(200);
    await until(() => eventsOf(first).length > 0, { what: 'the event of the first request after the restart' });

    // 2. The process dies while its POST is held open by a slow receiver: no answer was read.
    receiver.delayMs = 60_000;
    const second = await submitAndWaitCompleted(server, 'B');
    await until(() => receiver.inFlight() > 0, { what: 'the delivery of the second request on its way' });
    server.child.kill('SIGKILL');
    await server.stop();
    receiver.delayMs = 0;
    expect(eventsOf(second)).toEqual([]);

    server = await start();
    await until(() => eventsOf(second).length > 0, { what: 'the event of the second request after the restart' });

    expect(receiver.refused).toEqual([]);
    expect(eventsOf(first).map((e) => e.type)).toEqual(['bulkImportRequest.completed']);
    expect(eventsOf(second).map((e) => e.type)).toEqual(['bulkImportRequest.completed']);
    const log = await call(server, 'GET', `${API}/webhookDeliveries?$filter=subjectId eq '${second}'`);
    expect(log.json.value).toMatchObject([{ status: 'Delivered', attempts: 1 }]);
    expect(new Set(receiver.events.map((e) => e.id)).size).toBe(receiver.events.length);
    await server.stop();
  });
});
