/**
 * The import run API in process (fastify inject) on a real SQLite file, with the job queue runner in
 * this thread woken by the route as the service's worker thread would be: start a run, poll it until
 * Completed, list runs and a run's pages.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importRunRoutes } from '../../src/import-runs/routes.js';
import { jobQueueRoutes } from '../../src/job-queue/routes.js';
import { buildServer, type App } from '../../src/http/server.js';
import { createTestAuth, type TestAuth } from '../helpers/auth.js';
import { createQueueRunner, type QueueRunner } from '../../src/job-queue/runner.js';
import { updateEndpoint } from '../../src/rest-source/service.js';
import { jobKinds } from '../../src/main/jobs.js';
import { type TestDatabase } from '../helpers/db.js';
import { ENDPOINTS, itemIds, range, runContext, silentLogger, START, type ManualClock } from '../helpers/import-fixtures.js';
import { type PagingServer } from '../helpers/paging-server.js';
import { openRunQueue, usePagingServer } from '../helpers/run-queue.js';
import type { SecretBox } from '../../src/rest-source/secrets.js';
import { until } from '../helpers/until.js';

const API = '/api/vendor/integrationFramework/v1.0';
const config = { leaseSeconds: 300, maxAttempts: 3, retentionDays: 30, schedulerTickMs: 1000 };

let server: PagingServer;
let t: TestDatabase;
let clock: ManualClock;
let runner: QueueRunner;
let app: App;
let auth: TestAuth;
let wakes: number;
let autoRun: boolean;

const pagingServer = usePagingServer();
beforeEach(async () => {
  server = pagingServer();
  let box: SecretBox;
  ({ t, clock, box } = await openRunQueue(server, {
    records: 25,
    pageSize: 10,
    endpoints: { numbered: ENDPOINTS.pageNumber, offsets: ENDPOINTS.offsetLimit },
  }));
  await t.db.kysely.updateTable('ifw_job_queue_entry').set({ next_run_at: START }).execute();
  runner = createQueueRunner({
    db: t.db,
    config,
    clock,
    logger: silentLogger,
    owner: 'runner-1',
    jobs: jobKinds(config, { importSources: runContext(t.db, clock, box).sources }),
  });
  wakes = 0;
  autoRun = true;
  const wake = () => {
    wakes += 1;
    if (autoRun) void runner.wake();
  };
  auth = await createTestAuth(t.db.kysely);
  app = await buildServer({
    authenticator: auth.authenticator,
    logger: silentLogger,
    bodyLimitBytes: 1024 * 1024,
    routes: [importRunRoutes({ db: t.db, clock, wake, maxPageSize: 2 }), jobQueueRoutes({ db: t.db, clock, queue: { wake } })],
  });
});
afterEach(async () => {
  await app.close();
  auth.cleanup();
  await runner.stop();
  await t.cleanup();
});

const run = (code: string) =>
  app.inject({ headers: auth.headers, method: 'POST', url: `${API}/restApiEndpoints('${code}')/Microsoft.NAV.run` });
const get = (url: string) => app.inject({ headers: auth.headers, method: 'GET', url: url.startsWith('http') ? url : `${API}/${url}` });

type RunBody = Record<string, unknown> & { runId: string; status: string; errorMessage: string };

/** Polls importRuns(<id>) until its status is `status`. */
const pollUntil = (runId: string, status: string): Promise<RunBody> =>
  until(async () => (await get(`importRuns(${runId})`)).json<RunBody>(), {
    holds: (polled) => polled.status === status,
    what: `run ${runId} ${status}`,
  });

describe('POST restApiEndpoints(<code>)/Microsoft.NAV.run', () => {
  it('answers 202 with the Queued run and its Location; polling it shows Completed with counts', async () => {
    const res = await run('numbered');

    expect(res.statusCode).toBe(202);
    const queued = res.json();
    expect(queued).toMatchObject({
      '@odata.context': `${API}/$metadata#importRuns/$entity`,
      endpointCode: 'numbered',
      status: 'Queued',
      trigger: 'manual',
      queuedAt: START,
    });
    expect(res.headers.location).toBe(`${API}/importRuns(${queued.runId})`);
    expect(wakes).toBe(1);

    const done = await pollUntil(queued.runId, 'Completed');
    expect(done).toMatchObject({
      runId: queued.runId,
      pagesFetched: 3,
      recordsFetched: 25,
      insertedCount: 25,
      updatedCount: 0,
      skippedCount: 0,
      stopReason: 'shortPage',
      warnings: [],
      errorMessage: '',
      startedAt: START,
      endedAt: START,
      durationMs: 0,
    });
    expect(itemIds(t.db)).toEqual(range(1, 25));
  });

  it('answers 409 while the endpoint has a run Queued', async () => {
    autoRun = false;
    expect((await run('numbered')).statusCode).toBe(202);

    const again = await run('numbered');

    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('conflict');
    expect(again.json().error.message).toContain('a run still in progress is not started twice');
  });

  it('answers 404 for an unknown endpoint', async () => {
    const res = await run('nope');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'notFound', message: "No REST API endpoint with code 'nope'." } });
  });
});

describe('GET importRuns', () => {
  /** A Completed run of `numbered`, then Queued runs of `offsets` and `numbered`, a second apart. */
  async function threeRuns(): Promise<string[]> {
    autoRun = false;
    const queueRun = async (code: string): Promise<string> => {
      const { runId } = (await run(code)).json<RunBody>();
      clock.advance(1000);
      return runId;
    };
    const first = await queueRun('numbered');
    await runner.wake();
    return [first, await queueRun('offsets'), await queueRun('numbered')];
  }

  it('lists runs newest first, $filter on status and endpointCode, pages through @odata.nextLink', async () => {
    const [first, second, third] = await threeRuns();

    const all = (await get('importRuns')).json();
    expect(all.value.map((r: { runId: string }) => r.runId)).toEqual([third, second]);
    const next = (await get(all['@odata.nextLink'])).json();
    expect(next.value.map((r: { runId: string }) => r.runId)).toEqual([first]);
    expect(next['@odata.nextLink']).toBeUndefined();

    const queued = (await get(`importRuns?$filter=status eq 'Queued' and endpointCode eq 'numbered'`)).json();
    expect(queued.value.map((r: { runId: string }) => r.runId)).toEqual([third]);
    const completed = (await get(`importRuns?$filter=status eq 'Completed'&$orderby=queuedAt asc`)).json();
    expect(completed.value).toMatchObject([{ runId: first, endpointCode: 'numbered', status: 'Completed' }]);
  });

  it('answers 400 for an unknown status or property in $filter', async () => {
    expect((await get(`importRuns?$filter=status eq 'Done'`)).statusCode).toBe(400);
    expect((await get(`importRuns?$filter=colour eq 'red'`)).statusCode).toBe(400);
  });
});

describe('GET importRuns(<runId>) and its pages', () => {
  it('lists the pages of a run with URL and record count, paged', async () => {
    const { runId } = (await run('numbered')).json();
    await pollUntil(runId, 'Completed');

    const first = (await get(`importRuns(${runId})/pages`)).json();
    expect(first.value).toEqual([
      { pageNo: 1, url: `${server.origin}/page-number?page=1`, recordsFetched: 10 },
      { pageNo: 2, url: `${server.origin}/page-number?page=2`, recordsFetched: 10 },
    ]);
    // The next link keeps the key as the caller wrote it: importRuns(<id>)/pages, not the routed form.
    expect(first['@odata.nextLink']).toContain(`/importRuns(${runId})/pages?`);
    const rest = (await get(first['@odata.nextLink'])).json();
    expect(rest.value).toEqual([{ pageNo: 3, url: `${server.origin}/page-number?page=3`, recordsFetched: 5 }]);
  });

  it('answers 404 for an unknown or malformed runId', async () => {
    expect((await get('importRuns(0198f3a2-0000-7000-8000-000000000000)')).statusCode).toBe(404);
    expect((await get('importRuns(not-a-guid)')).statusCode).toBe(404);
    expect((await get('importRuns(not-a-guid)/pages')).statusCode).toBe(404);
  });

  it('shows a failed run with the page, the URL and why', async () => {
    server.setFaults([{ kind: 'status', page: 2, status: 400, times: 1 }]);
    const { runId } = (await run('numbered')).json();

    const failed = await pollUntil(runId, 'Failed');
    expect(failed.errorMessage).toContain(`page 2 (GET ${server.origin}/page-number?page=2)`);
    expect(failed).toMatchObject({ pagesFetched: 1, insertedCount: 0 });
    expect(itemIds(t.db)).toEqual([]);
  });
});

describe('scheduled endpoints in the job queue API', () => {
  it('shows the entry endpoint:<code> and lets an administrator put it On Hold', async () => {
    await updateEndpoint(t.db, 'numbered', { scheduleSeconds: 300 }, clock);

    const entry = (await get(`jobQueueEntries('endpoint:numbered')`)).json();
    expect(entry).toMatchObject({
      id: 'endpoint:numbered',
      kind: 'endpointImport',
      description: 'Import from REST API endpoint numbered',
      status: 'Ready',
      recurrenceSeconds: 300,
    });

    const held = await app.inject({
      headers: auth.headers,
      method: 'POST',
      url: `${API}/jobQueueEntries('endpoint:numbered')/Microsoft.NAV.setOnHold`,
    });
    expect(held.json()).toMatchObject({ status: 'On Hold' });
  });
});
