/**
 * Completion notifications on both databases: the events of every ending of a bulk import request
 * (Completed, Failed, Cancelled) and of an import run (Completed, Failed, Cancelled), written with the ending and
 * delivered afterwards, signed as a receiver using the `standardwebhooks` package verifies them; a
 * receiver that is down for hours gets every event exactly once by id once it is back (the clock moved,
 * not waited for); the delivery log and its redelivery, retention, the test event, and the write-only secret.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/core/logger.js';
import { createMetrics } from '../../src/core/metrics.js';
import { completeRequest } from '../../src/bulk-import/complete-request.js';
import { failRequest } from '../../src/bulk-import/fail-request.js';
import { runRetentionCleanup } from '../../src/bulk-import/retention.js';
import { completeRun } from '../../src/import-runs/complete-run.js';
import { failRunWithoutStore } from '../../src/import-runs/open-run-store.js';
import { createStagedRecordsTable } from '../../src/import-runs/postgres/staged-records.js';
import { connectionOf, onClient } from '../../src/storage/connection.js';
import { DEFAULT_OUTBOUND_POLICY } from '../../src/rest-source/outbound-policy.js';
import { deliverDueWebhooks } from '../../src/webhooks/deliver.js';
import { MAX_ATTEMPTS, newWebhookSecret, RETRY_SCHEDULE_MS } from '../../src/webhooks/model.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { insertRequest } from '../helpers/queue-fixtures.js';
import { API, startTestService, type TestService } from '../helpers/service.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const silent = createLogger({ logLevel: 'silent' });
const OWNER = 'test-worker';

describe.each(BACKENDS)('webhooks on $name', (backend) => {
  let fresh: FreshDatabase | undefined;
  let t: TestService;
  let receiver: WebhookReceiver;
  let webhookId: string;
  const secret = newWebhookSecret();
  const metrics = createMetrics();
  let offsetMs = 0;

  beforeAll(async () => {
    if (backend.skip) return;
    // SQLite: the test service's own file; PostgreSQL: a fresh database.
    if (backend.name === 'postgres') fresh = await backend.fresh();
    t = await startTestService(backend.name === 'postgres' ? { databaseUrl: fresh!.url } : {});
    receiver = await startWebhookReceiver(secret);
    const created = await t.inject({
      method: 'POST',
      url: `${API}/webhooks`,
      payload: { integrationSortingOrder: 10, url: receiver.url, secret, description: 'ops' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({
      integrationSortingOrder: 10,
      endpointCode: null,
      url: receiver.url,
      enabled: true,
      secretIsSet: true,
    });
    expect(created.body).not.toContain(secret);
    webhookId = created.json<{ webhookId: string }>().webhookId;
  });

  afterAll(async () => {
    if (backend.skip) return;
    await receiver?.close();
    await t?.cleanup();
    await fresh?.cleanup();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  /** Runs the delivery as its job queue entry does, `offsetMs` after real now (Date itself moved, so the receiver's timestamp check agrees). */
  async function deliver(advanceMs = 0): Promise<number> {
    offsetMs += advanceMs;
    const now = Date.now() + offsetMs;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(now);
    try {
      return await deliverDueWebhooks({
        db: t.service.db,
        clock: () => new Date(),
        logger: silent,
        secrets: () => t.service.secrets,
        outbound: DEFAULT_OUTBOUND_POLICY,
        metrics,
      });
    } finally {
      vi.useRealTimers();
    }
  }

  const at = () => new Date(Date.now() + offsetMs);

  async function processingRequest(): Promise<string> {
    return insertRequest(t.service.db, {
      integrationSortingOrder: 10,
      status: 'Processing',
      submittedAt: at().toISOString(),
      leaseOwner: OWNER,
      leaseExpiresAt: new Date(at().getTime() + 60_000).toISOString(),
      attempts: 1,
    });
  }

  async function runningRun(endpointCode: string): Promise<string> {
    const runId = crypto.randomUUID();
    const now = at().toISOString();
    await t.service.db
      .insertInto('ifw_import_run')
      .values({
        run_id: runId,
        endpoint_code: endpointCode,
        integration_sorting_order: 10,
        trigger: 'manual',
        status: 'Running',
        queued_at: now,
        started_at: now,
        ended_at: null,
        lease_owner: OWNER,
        lease_expires_at: new Date(at().getTime() + 60_000).toISOString(),
        attempts: 1,
      })
      .execute();
    return runId;
  }

  async function deliveries(subjectId: string) {
    const res = await t.inject({ method: 'GET', url: `${API}/webhookDeliveries?$filter=subjectId eq '${subjectId}'` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{
      value: { deliveryId: string; status: string; attempts: number; eventType: string; lastError: string; nextAttemptAt: string | null }[];
    }>().value;
  }

  const eventsAbout = (id: string) =>
    receiver.events.filter((e) => Object.values((e.body as { data: Record<string, unknown> }).data).includes(id));

  it.skipIf(backend.skip)('sends a signed event for each ending of a request and a run, written with the ending', async () => {
    const db = t.service.db;
    const completed = await processingRequest();
    const failed = await processingRequest();
    const cancelled = await insertRequest(db, { integrationSortingOrder: 10, submittedAt: at().toISOString() });
    const runDone = await runningRun('contacts');
    const runFailed = await runningRun('orders');

    const args = { owner: OWNER, now: at() };
    expect(
      await completeRequest(connectionOf(db as never), {
        ...args,
        requestId: completed,
        recordCount: 3,
        inserted: 2,
        updated: 1,
        skipped: 0,
      }),
    ).toBe(true);
    expect(await failRequest(connectionOf(db as never), { ...args, requestId: failed, errorMessage: 'record 1: name is required' })).toBe(
      true,
    );
    const cancel = await t.inject({ method: 'POST', url: `${API}/bulkImportRequests(${cancelled})/Microsoft.NAV.cancel` });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const runArgs = {
      ...args,
      durationMs: 5,
      inserted: 4,
      updated: 0,
      skipped: 0,
      stopReason: 'singlePage' as const,
      stopDetail: '',
      warnings: [],
      errorMessage: '',
    };
    if (db.dialect === 'sqlite') expect(completeRun(db, { ...runArgs, runId: runDone })).toBe(true);
    else {
      const client = await db.pool.connect();
      try {
        await createStagedRecordsTable(onClient(client));
        expect(await completeRun(onClient(client), { ...runArgs, runId: runDone })).toBe(true);
      } finally {
        client.release();
      }
    }
    expect(
      await failRunWithoutStore(db, { ...args, runId: runFailed, durationMs: 5, errorMessage: 'page 2: the service answered 500' }),
    ).toBe(true);
    // One active run per endpoint: the cancelled one starts once the completed one has ended.
    const runCancelled = await runningRun('contacts');
    const cancelRun = await t.inject({ method: 'POST', url: `${API}/importRuns(${runCancelled})/Microsoft.NAV.cancel` });
    expect(cancelRun.statusCode, cancelRun.body).toBe(200);

    // Written with the ending, delivered later: nothing has been sent yet.
    expect(receiver.events).toEqual([]);
    for (const id of [completed, failed, cancelled, runDone, runFailed, runCancelled])
      expect((await deliveries(id)).map((d) => d.status)).toEqual(['Pending']);
    // A status write that finds the lease gone changes nothing and writes no event.
    expect(
      await completeRequest(connectionOf(db as never), {
        ...args,
        requestId: completed,
        recordCount: 3,
        inserted: 2,
        updated: 1,
        skipped: 0,
      }),
    ).toBe(false);

    expect(await deliver()).toBe(6);
    expect(receiver.refused).toEqual([]);
    const typeOf = (id: string) => eventsAbout(id).map((e) => e.type);
    expect(typeOf(completed)).toEqual(['bulkImportRequest.completed']);
    expect(typeOf(failed)).toEqual(['bulkImportRequest.failed']);
    expect(typeOf(cancelled)).toEqual(['bulkImportRequest.cancelled']);
    expect(typeOf(runDone)).toEqual(['importRun.completed']);
    expect(typeOf(runFailed)).toEqual(['importRun.failed']);
    expect(typeOf(runCancelled)).toEqual(['importRun.cancelled']);
    expect(eventsAbout(completed)[0]!.body).toMatchObject({
      type: 'bulkImportRequest.completed',
      data: { requestId: completed, integrationSortingOrder: 10, status: 'Completed', recordCount: 3, inserted: 2, updated: 1, skipped: 0 },
    });
    expect(eventsAbout(failed)[0]!.body).toMatchObject({ data: { status: 'Failed', errorMessage: 'record 1: name is required' } });
    expect(eventsAbout(runFailed)[0]!.body).toMatchObject({ data: { runId: runFailed, endpointCode: 'orders', status: 'Failed' } });
    // The event's id is the delivery's: what a receiver de-duplicates on.
    const [delivery] = await deliveries(completed);
    expect(delivery).toMatchObject({ status: 'Delivered', attempts: 1, lastError: '', nextAttemptAt: null });
    expect(eventsAbout(completed)[0]!.id).toBe(delivery!.deliveryId);
    expect(await deliver()).toBe(0);
  });

  it.skipIf(backend.skip)('a receiver down for hours gets every event exactly once by id when it is back', async () => {
    receiver.events.length = 0;
    receiver.mode = 'unavailable';
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await processingRequest();
      await completeRequest(connectionOf(t.service.db), {
        requestId: id,
        owner: OWNER,
        now: at(),
        recordCount: 1,
        inserted: 1,
        updated: 0,
        skipped: 0,
      });
      ids.push(id);
    }
    expect(await deliver()).toBe(3);
    const [first] = await deliveries(ids[0]!);
    expect(first).toMatchObject({ status: 'Pending', attempts: 1 });
    expect(first!.lastError).toMatch(/503/);
    // Not due before its backoff has passed.
    expect(await deliver(RETRY_SCHEDULE_MS[0]! - 1000)).toBe(0);
    receiver.mode = 'reset';
    expect(await deliver(1000)).toBe(3);
    expect((await deliveries(ids[0]!))[0]).toMatchObject({ status: 'Pending', attempts: 2 });
    receiver.mode = 'unavailable';
    expect(await deliver(RETRY_SCHEDULE_MS[1])).toBe(3);
    expect(receiver.events).toEqual([]);
    // Back after two hours more; every event arrives once, and nothing more is sent afterwards.
    receiver.mode = 'up';
    expect(await deliver(RETRY_SCHEDULE_MS[2]! + RETRY_SCHEDULE_MS[3]!)).toBe(3);
    expect(await deliver(36_000_000)).toBe(0);
    const byId = new Map<string, number>();
    for (const e of receiver.events) byId.set(e.id, (byId.get(e.id) ?? 0) + 1);
    expect([...byId.values()]).toEqual([1, 1, 1]);
    expect(receiver.events.map((e) => (e.body as { data: { requestId: string } }).data.requestId).sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await deliveries(id))[0]).toMatchObject({ status: 'Delivered', attempts: 4 });
    const counted = await metrics.registry.getSingleMetricAsString('ifw_webhook_deliveries_total');
    expect(counted).toMatch(/outcome="retrying"} 9/);
  });

  it.skipIf(backend.skip)('gives up after the last attempt; a redelivery sends the same id and body again', async () => {
    receiver.events.length = 0;
    receiver.mode = 'unavailable';
    const id = await processingRequest();
    await failRequest(connectionOf(t.service.db), { requestId: id, owner: OWNER, now: at(), errorMessage: 'bad' });
    for (let i = 0; i < MAX_ATTEMPTS; i++) expect(await deliver(i === 0 ? 0 : RETRY_SCHEDULE_MS[i - 1]!)).toBe(1);
    const [gaveUp] = await deliveries(id);
    expect(gaveUp).toMatchObject({ status: 'Failed', attempts: MAX_ATTEMPTS, nextAttemptAt: null });
    expect(await deliver(36_000_000)).toBe(0);

    receiver.mode = 'up';
    const again = await t.inject({ method: 'POST', url: `${API}/webhookDeliveries('${gaveUp!.deliveryId}')/Microsoft.NAV.redeliver` });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ status: 'Pending', attempts: 0 });
    // The redelivery is due at real now, which the moved clock has long passed.
    expect(await deliver()).toBe(1);
    expect(receiver.events.map((e) => e.id)).toEqual([gaveUp!.deliveryId]);
    expect(receiver.events[0]!.body).toMatchObject({ type: 'bulkImportRequest.failed', data: { requestId: id, errorMessage: 'bad' } });
  });

  it.skipIf(backend.skip)('obeys the outbound rules: no redirect followed, the deny list refuses the address', async () => {
    receiver.events.length = 0;
    const redirecting = http.createServer((_req, res) => res.writeHead(302, { location: receiver.url }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hooks`;
      const hook = await t.inject({ method: 'POST', url: `${API}/webhooks`, payload: { integrationSortingOrder: 10, url, secret } });
      const id = hook.json<{ webhookId: string }>().webhookId;
      const test = await t.inject({ method: 'POST', url: `${API}/webhooks(${id})/Microsoft.NAV.sendTestEvent` });
      expect(await deliver()).toBe(1);
      const after = (
        await t.inject({ method: 'GET', url: `${API}/webhookDeliveries('${test.json<{ deliveryId: string }>().deliveryId}')` })
      ).json<{ status: string; lastStatus: number; lastError: string }>();
      expect(after).toMatchObject({ status: 'Pending', lastStatus: 302 });
      expect(after.lastError).toMatch(/redirects are not followed/);
      expect(receiver.events).toEqual([]);
      await t.inject({ method: 'DELETE', url: `${API}/webhooks(${id})` });

      // The deny list refuses the receiver's address, checked where the connection is made.
      const denied = await t.inject({ method: 'POST', url: `${API}/webhooks(${webhookId})/Microsoft.NAV.sendTestEvent` });
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() + offsetMs);
      try {
        const deny = { deny: [{ address: '127.0.0.0', prefix: 8, family: 'ipv4' as const }], allow: [] };
        expect(
          await deliverDueWebhooks({
            db: t.service.db,
            clock: () => new Date(),
            logger: silent,
            secrets: () => t.service.secrets,
            outbound: deny,
          }),
        ).toBe(1);
      } finally {
        vi.useRealTimers();
      }
      const refused = (
        await t.inject({ method: 'GET', url: `${API}/webhookDeliveries('${denied.json<{ deliveryId: string }>().deliveryId}')` })
      ).json<{ status: string; lastStatus: number | null; lastError: string }>();
      expect(refused).toMatchObject({ status: 'Pending', lastStatus: null });
      expect(refused.lastError).toMatch(/deny list/);
      expect(receiver.events).toEqual([]);
      await t.service.db.deleteFrom('ifw_webhook_delivery').execute();
    } finally {
      redirecting.closeAllConnections();
      await new Promise((resolve) => redirecting.close(resolve));
    }
  });

  it.skipIf(backend.skip)('a webhook goes with the integration it belongs to', async () => {
    const integration = await t.inject({ method: 'GET', url: `${API}/integrations(10)` });
    expect(integration.statusCode, integration.body).toBe(200);
    const { targetTable } = integration.json<{ targetTable: string }>();
    const created = await t.inject({
      method: 'POST',
      url: `${API}/integrations`,
      payload: { sortingOrder: 77, name: 'Short-lived', type: 'file', targetTable },
    });
    expect(created.statusCode, created.body).toBe(201);
    const hook = await t.inject({
      method: 'POST',
      url: `${API}/webhooks`,
      payload: { integrationSortingOrder: 77, url: receiver.url, secret },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const id = hook.json<{ webhookId: string }>().webhookId;
    expect((await t.inject({ method: 'DELETE', url: `${API}/integrations(77)` })).statusCode).toBe(204);
    expect((await t.inject({ method: 'GET', url: `${API}/webhooks(${id})` })).statusCode).toBe(404);
    // The other webhooks stay.
    expect((await t.inject({ method: 'GET', url: `${API}/webhooks(${webhookId})` })).statusCode).toBe(200);
  });

  it.skipIf(backend.skip)('retention deletes deliveries done long ago, never a Pending one', async () => {
    const db = t.service.db;
    receiver.mode = 'up';
    await t.inject({ method: 'POST', url: `${API}/webhooks(${webhookId})/Microsoft.NAV.sendTestEvent` });
    expect(await deliver()).toBe(1);
    const before = await db.selectFrom('ifw_webhook_delivery').select(['delivery_id', 'status']).execute();
    expect(before.some((d) => d.status === 'Delivered')).toBe(true);
    const pending = await processingRequest();
    receiver.mode = 'unavailable';
    await completeRequest(connectionOf(db), {
      requestId: pending,
      owner: OWNER,
      now: at(),
      recordCount: 0,
      inserted: 0,
      updated: 0,
      skipped: 0,
    });
    await runRetentionCleanup(db, { now: new Date(at().getTime() + 31 * 86_400_000), retentionDays: 30 });
    const left = await db.selectFrom('ifw_webhook_delivery').select(['subject_id', 'status']).execute();
    expect(left).toEqual([{ subject_id: pending, status: 'Pending' }]);
    await db.deleteFrom('ifw_webhook_delivery').execute();
    receiver.mode = 'up';
  });

  it.skipIf(backend.skip)('sends a test event; the secret is write-only and bad input is refused', async () => {
    receiver.events.length = 0;
    receiver.mode = 'up';
    const sent = await t.inject({ method: 'POST', url: `${API}/webhooks(${webhookId})/Microsoft.NAV.sendTestEvent` });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json()).toMatchObject({ eventType: 'webhook.test', subjectKind: 'test', subjectId: null, status: 'Pending' });
    expect(await deliver()).toBe(1);
    expect(receiver.events).toMatchObject([{ type: 'webhook.test', body: { data: { webhookId } } }]);

    const read = await t.inject({ method: 'GET', url: `${API}/webhooks(${webhookId})` });
    expect(read.json()).toMatchObject({ secretIsSet: true });
    expect(read.body).not.toContain(secret.slice(6));
    const stored = await t.service.db
      .selectFrom('ifw_webhook')
      .select('secret')
      .where('webhook_id', '=', webhookId)
      .executeTakeFirstOrThrow();
    expect(stored.secret).not.toContain(secret.slice(6));

    const refused = async (payload: Record<string, unknown>, pattern: RegExp) => {
      const before = await t.service.db.selectFrom('ifw_webhook').select('webhook_id').execute();
      const res = await t.inject({ method: 'POST', url: `${API}/webhooks`, payload });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json<{ error: { message: string } }>().error.message).toMatch(pattern);
      expect(res.body).not.toContain(secret.slice(6));
      expect(await t.service.db.selectFrom('ifw_webhook').select('webhook_id').execute()).toEqual(before);
    };
    await refused({ integrationSortingOrder: 10, url: 'ftp://example.com/', secret }, /http/);
    await refused({ integrationSortingOrder: 10, url: 'https://user:pw@example.com/', secret }, /credentials/);
    await refused({ integrationSortingOrder: 10, url: 'https://example.com/', secret: 'not-a-secret' }, /secret/);
    await refused({ url: 'https://example.com/', secret }, /exactly one/);
    await refused({ integrationSortingOrder: 999, url: 'https://example.com/', secret }, /999/);
    await refused({ endpointCode: 'nope', url: 'https://example.com/', secret }, /nope/);

    const changed = await t.inject({ method: 'PATCH', url: `${API}/webhooks(${webhookId})`, payload: { enabled: false } });
    expect(changed.json()).toMatchObject({ enabled: false });
    const listed = await t.inject({ method: 'GET', url: `${API}/webhooks?$filter=integrationSortingOrder eq 10` });
    expect(listed.json<{ value: unknown[] }>().value).toHaveLength(1);
    // A disabled webhook is told of nothing.
    const id = await processingRequest();
    await completeRequest(connectionOf(t.service.db), {
      requestId: id,
      owner: OWNER,
      now: at(),
      recordCount: 0,
      inserted: 0,
      updated: 0,
      skipped: 0,
    });
    expect(await deliveries(id)).toEqual([]);
    expect((await t.inject({ method: 'GET', url: `${API}/webhookDeliveries('nope')` })).statusCode).toBe(404);
  });
});
