/**
 * The spec's "Request stays Pending a long time / Job queue processor not running", seen working with
 * real processes on PostgreSQL: two API processes (`ifw serve --no-workers`) and one `ifw worker`,
 * with short heartbeat and dead times set by configuration. The worker is killed with -9: within the
 * dead time it shows Dead (API and the console's Workers page), a request submitted meanwhile stays
 * Pending, the "job queue processor not running" alarm appears on the dashboard (a browser) and
 * `/health/queue` answers 503 on both API processes, while `/health/ready` stays 200. A new worker
 * clears it: the request is imported, the alarm goes, `/health/queue` answers 200. Both API
 * processes' `/metrics` report the same queue depth throughout, read from the database.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, CHROMIUM, screenshot, signIn } from '../helpers/browser.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { assertBuilt, basicAuth, startServer, startWorker, stopAll, type ServerProcess, type WorkerProcess } from '../helpers/process.js';
import { EXAMPLE_CONFIG } from '../helpers/service.js';
import { until } from '../helpers/until.js';

const API = '/api/vendor/integrationFramework/v1.0';
const ADMIN_PASSWORD = 'workers-alarm-administrator';
const admin = basicAuth('admin', ADMIN_PASSWORD);
const postgres = BACKENDS.find((b) => b.name === 'postgres')!;
const runs = !postgres.skip && browserAvailable();

let dir: string;
let database: FreshDatabase | undefined;
let env: NodeJS.ProcessEnv;
const apis: ServerProcess[] = [];
const workers: WorkerProcess[] = [];
let browser: Browser | undefined;

const get = async (base: string, url: string): Promise<{ status: number; body: string }> => {
  const res = await fetch(`${base}${url}`, { headers: admin });
  return { status: res.status, body: await res.text() };
};
const workersOf = async (base: string) =>
  (JSON.parse((await get(base, `${API}/workers`)).body) as { value: { pid: number; status: string }[] }).value;
const queueStatus = async (base: string) => (await fetch(`${base}/health/queue`)).status;
const pendingIn = async (base: string): Promise<number> => {
  const line = (await get(base, '/metrics')).body.split('\n').find((l) => l.startsWith('ifw_queue_requests{status="Pending"} '));
  return Number(line?.split(' ')[1]);
};

describe.skipIf(!runs)('a worker killed with -9 while the API runs on', () => {
  beforeAll(async () => {
    assertBuilt();
    database = await postgres.fresh();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-workers-'));
    env = {
      IFW_DATA_DIR: dir,
      IFW_DATABASE_URL: database.url,
      IFW_ADMIN_PASSWORD: ADMIN_PASSWORD,
      IFW_SCHEDULER_TICK_MS: '100',
      IFW_WORKER_HEARTBEAT_SECONDS: '1',
      IFW_WORKER_DEAD_SECONDS: '3',
      IFW_PENDING_ALARM_SECONDS: '1',
    };
    apis.push(await startServer(env, ['--no-workers', '--apply', EXAMPLE_CONFIG]));
    apis.push(await startServer(env, ['--no-workers']));
    workers.push(await startWorker(env));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await stopAll([...apis, ...workers]);
    await database?.cleanup();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('shows the worker Dead, raises the alarm (dashboard, /health/queue 503) and clears it when a worker starts', async () => {
    const [a, b] = apis.map((p) => p.baseUrl) as [string, string];
    const first = workers[0]!;
    await until(async () => (await workersOf(a)).some((w) => w.pid === first.pid && w.status === 'Alive'), { what: 'the worker Alive' });
    expect(await queueStatus(a)).toBe(200);

    first.child.kill('SIGKILL');
    await first.closed;
    // Dead within the configured time (3 s without a heartbeat), as both API processes see it.
    for (const base of [a, b]) {
      await until(async () => (await workersOf(base)).find((w) => w.pid === first.pid)?.status === 'Dead', {
        what: 'the killed worker shown Dead',
        timeoutMs: 10_000,
      });
    }

    const submitted = await fetch(`${a}${API}/bulkImportRequests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...admin },
      body: JSON.stringify({ integrationSortingOrder: 10, payload: JSON.stringify([{ no: 'K1', name: 'Killed worker' }]) }),
    });
    expect(submitted.status).toBe(202);
    const { requestId } = (await submitted.json()) as { requestId: string };

    // Pending for longer than IFW_PENDING_ALARM_SECONDS with no live worker: 503 on both API processes.
    for (const base of [a, b]) await until(async () => (await queueStatus(base)) === 503, { what: '/health/queue 503', timeoutMs: 10_000 });
    const check = JSON.parse((await get(a, '/health/queue')).body) as { checks: { processor: string } };
    expect(check.checks.processor).toMatch(/^Request stays Pending a long time: 1 request Pending/);
    expect((await fetch(`${a}/health/ready`)).status).toBe(200);
    // The queue depth is the database's: the same from both processes.
    expect(await pendingIn(a)).toBe(1);
    expect(await pendingIn(b)).toBe(1);

    const page = await (await browser!.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await signIn(page, b, 'admin', ADMIN_PASSWORD);
    await page.goto(`${b}/`);
    const alarm = page.locator('#alarms [data-alarm="processorNotRunning"]');
    await alarm.waitFor();
    expect(await alarm.textContent()).toMatch(/Job queue processor not running/);
    await page
      .getByRole('alert')
      .getByText(/Request stays Pending a long time/)
      .waitFor();
    await screenshot(page, 'dashboard-processor-not-running');
    await page.goto(`${b}/workers`);
    await page
      .locator(`tr[data-status="Dead"]`)
      .filter({ hasText: `pid ${first.pid}` })
      .waitFor();
    await screenshot(page, 'workers-dead');

    // A worker starts: it imports the request, and the alarm clears everywhere.
    workers.push(await startWorker(env));
    await until(
      async () => (JSON.parse((await get(a, `${API}/bulkImportRequests(${requestId})`)).body) as { status: string }).status === 'Completed',
      { what: 'the request Completed by the new worker' },
    );
    for (const base of [a, b]) await until(async () => (await queueStatus(base)) === 200, { what: '/health/queue 200' });
    expect(await pendingIn(a)).toBe(0);
    expect(await pendingIn(b)).toBe(0);
    await page.goto(`${b}/`);
    expect(await page.locator('#alarms [data-alarm="processorNotRunning"]').count()).toBe(0);
    await page.goto(`${b}/workers`);
    await page
      .locator('tr[data-status="Alive"]')
      .filter({ hasText: `pid ${workers[1]!.pid}` })
      .waitFor();
  }, 120_000);
});
