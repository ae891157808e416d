/**
 * Processing on PostgreSQL end to end, through the real service objects and the real `ifw worker`
 * process: submit → Completed with rows in the target table, Failed with its message, On Hold,
 * cancel and reset; LISTEN/NOTIFY waking an idle worker of another service (another pool, as another
 * host would have) although its scheduler ticks only once an hour; and
 * `ifw worker` stopping with exit code 0 on SIGTERM.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { assertBuilt, startWorker } from '../helpers/process.js';
import { API, startTestService, type TestService } from '../helpers/service.js';
import { until } from '../helpers/until.js';
import { queueHadItsTurn } from '../helpers/queue-fixtures.js';

const postgres = BACKENDS.find((b) => b.name === 'postgres')!;
const SET = `${API}/bulkImportRequests`;
const HOUR = 3_600_000;
const ENTRY = `${API}/jobQueueEntries('bulk-import-processor')`;

const customers = (...records: object[]) => ({ integrationSortingOrder: 10, payload: JSON.stringify(records) });

async function submit(t: TestService, body: object): Promise<string> {
  const res = await t.inject({ method: 'POST', url: SET, payload: body });
  expect(res.statusCode, res.body).toBe(202);
  return res.json<{ requestId: string }>().requestId;
}

async function poll(t: TestService, requestId: string): Promise<{ status: string; errorMessage: string; recordCount: number }> {
  return (await t.inject({ method: 'GET', url: `${SET}(${requestId})` })).json();
}

const ended = (t: TestService, requestId: string, timeoutMs?: number) =>
  until(() => poll(t, requestId), {
    holds: (r) => r.status !== 'Pending' && r.status !== 'Processing',
    what: `request ${requestId} ended`,
    timeoutMs,
  });

async function rows(t: TestService): Promise<string[]> {
  const res = await t.inject({ method: 'GET', url: `${API}/targetTables('customer')/rows?$top=100` });
  return res
    .json<{ value: { no: string }[] }>()
    .value.map((r) => r.no)
    .sort();
}

describe.skipIf(postgres.skip)('processing on PostgreSQL', () => {
  describe('one service with workers (createService)', () => {
    let fresh: FreshDatabase;
    let t: TestService;
    beforeAll(async () => {
      fresh = await postgres.fresh();
      t = await startTestService({ databaseUrl: fresh.url, workers: true });
    });
    afterAll(async () => {
      await t?.cleanup();
      await fresh?.cleanup();
    });

    it('imports a submission: Completed, the rows in the target table', async () => {
      const id = await submit(t, customers({ no: 'C001', name: 'Contoso', address: { city: 'Oslo' } }, { no: 'C002', name: 'Fabrikam' }));
      expect(await ended(t, id)).toMatchObject({ status: 'Completed', recordCount: 2, errorMessage: '' });
      expect(await rows(t)).toEqual(['C001', 'C002']);
    });

    it('fails a payload that breaks a rule, with its message, writing nothing', async () => {
      const id = await submit(t, customers({ no: 'C010', name: 'Fine' }, { no: 'C011' }));
      const result = await ended(t, id);
      expect(result).toMatchObject({ status: 'Failed', recordCount: 0 });
      expect(result.errorMessage).toMatch(/record 2: field "name" is required/);
      expect(await rows(t)).not.toContain('C010');
    });

    it('honours On Hold, cancels a Pending request, resets a stuck Processing one, and processes once Ready', async () => {
      expect((await t.inject({ method: 'POST', url: `${ENTRY}/Microsoft.NAV.setOnHold` })).statusCode).toBe(200);
      const cancelled = await submit(t, customers({ no: 'C020', name: 'Never' }));
      const waiting = await submit(t, customers({ no: 'C021', name: 'Later' }));
      // A request whose worker died, with a lease far from expiring.
      const stuck = await submit(t, customers({ no: 'C022', name: 'Stuck' }));
      await t.service.db.kysely
        .updateTable('ifw_bulk_import_request')
        .set({ status: 'Processing', lease_owner: 'dead-host:1:loop1:x', lease_expires_at: '2999-01-01T00:00:00.000Z', attempts: 1 })
        .where('request_id', '=', stuck)
        .execute();
      // The queue has its turn: nothing is claimed while On Hold.
      await queueHadItsTurn(t.service.db, () => t.service.queue?.wake());
      expect((await poll(t, waiting)).status).toBe('Pending');

      expect((await t.inject({ method: 'POST', url: `${SET}(${cancelled})/Microsoft.NAV.cancel` })).statusCode).toBe(200);
      expect((await t.inject({ method: 'POST', url: `${SET}(${stuck})/Microsoft.NAV.reset` })).statusCode).toBe(200);
      expect((await poll(t, stuck)).status).toBe('Pending');
      expect((await t.inject({ method: 'POST', url: `${ENTRY}/Microsoft.NAV.setReady` })).statusCode).toBe(200);

      expect(await ended(t, waiting)).toMatchObject({ status: 'Completed' });
      expect(await ended(t, stuck)).toMatchObject({ status: 'Completed' });
      expect((await poll(t, cancelled)).status).toBe('Cancelled');
      const r = await rows(t);
      expect(r).toEqual(expect.arrayContaining(['C021', 'C022']));
      expect(r).not.toContain('C020');
    });
  });

  describe('an API-only service and a worker in another service (LISTEN/NOTIFY)', () => {
    let fresh: FreshDatabase;
    let api: TestService;
    let worker: TestService;
    beforeAll(async () => {
      fresh = await postgres.fresh();
      api = await startTestService({ databaseUrl: fresh.url, workers: false });
      // Ticks once an hour: within the test's time, only a notification can start it.
      worker = await startTestService({ databaseUrl: fresh.url, workers: true, applyExample: false, config: { schedulerTickMs: HOUR } });
      // Its start-up drain (nothing Pending) is over, and the loops wait, once the queue has had its turn.
      await queueHadItsTurn(worker.service.db, () => worker.service.queue?.wake());
    });
    afterAll(async () => {
      await api?.cleanup();
      await worker?.cleanup();
      await fresh?.cleanup();
    });

    it('a submission through the API service is picked up by the idle worker, woken by the notification (its tick is an hour away)', async () => {
      for (const no of ['N1', 'N2', 'N3']) {
        const id = await submit(api, customers({ no, name: `Notified ${no}` }));
        // From the 202 (the commit): the NOTIFY, the worker's claim, the import, and the poll that sees it.
        expect(await ended(api, id)).toMatchObject({ status: 'Completed' });
      }
    });
    it('readiness says when wake-ups are degraded: the LISTEN connection dropped and is reconnecting; then ok, and notifications work again', async () => {
      const wakeups = async (): Promise<{ status: number; wakeups: string | undefined }> => {
        const res = await worker.inject({ method: 'GET', url: '/health/ready' });
        return { status: res.statusCode, wakeups: res.json<{ checks: Record<string, string> }>().checks.wakeups };
      };
      expect(await wakeups()).toEqual({ status: 200, wakeups: 'ok' });
      // The API-only service does not listen, and says nothing about it.
      expect(
        (await api.inject({ method: 'GET', url: '/health/ready' })).json<{ checks: Record<string, string> }>().checks.wakeups,
      ).toBeUndefined();

      const admin = new pg.Client({ connectionString: fresh.url });
      await admin.connect();
      try {
        const { rowCount } = await admin.query(
          `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like 'LISTEN %'`,
        );
        expect(rowCount).toBe(1);
      } finally {
        await admin.end();
      }
      const degraded = await until(wakeups, { holds: (now) => now.wakeups?.startsWith('degraded') === true, what: 'wake-ups degraded' });
      // Still ready: requests are processed, at the scheduler tick.
      expect(degraded).toEqual({
        status: 200,
        wakeups: 'degraded: the LISTEN connection is reconnecting; workers start at their scheduler tick meanwhile',
      });
      await until(wakeups, { holds: (now) => now.wakeups === 'ok', what: 'wake-ups ok again' });

      // Picked up long before the worker's hourly tick: the new LISTEN connection hears the notification.
      const id = await submit(api, customers({ no: 'N9', name: 'After the reconnect' }));
      expect(await ended(api, id)).toMatchObject({ status: 'Completed' });
    });
  });

  describe('`ifw worker` as a process', () => {
    let fresh: FreshDatabase;
    let api: TestService;
    let dir: string;
    beforeAll(async () => {
      assertBuilt();
      fresh = await postgres.fresh();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-worker-'));
      api = await startTestService({ databaseUrl: fresh.url, workers: false });
    });
    afterAll(async () => {
      await api?.cleanup();
      await fresh?.cleanup();
      if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('processes submissions with two claim loops and exits 0 on SIGTERM', async () => {
      const worker = await startWorker({ IFW_DATABASE_URL: fresh.url, IFW_DATA_DIR: dir, IFW_LOG_LEVEL: 'info' }, ['--concurrency', '2']);
      try {
        const ids = await Promise.all(['W1', 'W2', 'W3', 'W4'].map((no) => submit(api, customers({ no, name: `Worker ${no}` }))));
        for (const id of ids) expect(await ended(api, id)).toMatchObject({ status: 'Completed' });
        expect(await rows(api)).toEqual(['W1', 'W2', 'W3', 'W4']);
      } finally {
        expect(await worker.stop('SIGTERM')).toBe(0);
      }
      expect(worker.stdout.some((l) => l.includes('shutting down the workers'))).toBe(true);
    });
  });
});
