/**
 * The run API with the real job queue worker thread: the route queues the run and wakes the host;
 * the run executes on the worker thread's own connection, never on this (the HTTP) thread.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { loadConfig } from '../../src/core/config.js';
import { importRunRoutes } from '../../src/import-runs/routes.js';
import { buildServer, type App } from '../../src/http/server.js';
import { createTestAuth, type TestAuth } from '../helpers/auth.js';
import type { QueueHost } from '../../src/job-queue/host.js';
import { startJobQueue } from '../../src/main/job-queue.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { addEndpoint, ENDPOINTS, itemIds, range, setupItems, silentLogger, testBox } from '../helpers/import-fixtures.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';
import { until } from '../helpers/until.js';

const API = '/api/vendor/integrationFramework/v1.0';

let server: PagingServer;
let t: TestDatabase;
let host: QueueHost;
let app: App;
let auth: TestAuth;

beforeAll(async () => {
  server = await startPagingServer({ records: 250, pageSize: 10 });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  t = await openTestDatabase();
  await setupItems(t.db, systemClock, testBox(), server.origin);
  await addEndpoint(t.db, systemClock, 'numbered', ENDPOINTS.pageNumber);
  // A long tick: what runs here runs because the route woke the worker.
  const config = loadConfig({}, { dataDir: t.dir, logLevel: 'silent', schedulerTickMs: 60_000, secretKey: 'import-run-tests' });
  host = await startJobQueue(config, { logger: silentLogger });
  auth = await createTestAuth(t.db.kysely);
  app = await buildServer({
    authenticator: auth.authenticator,
    logger: silentLogger,
    bodyLimitBytes: 1024 * 1024,
    routes: [importRunRoutes({ db: t.db, clock: systemClock, wake: () => host.wake() })],
  });
});
afterEach(async () => {
  await app.close();
  auth.cleanup();
  await host.close();
  await t.cleanup();
});

describe('import runs on the job queue worker thread', () => {
  it('run → 202, then polling importRuns(<id>) shows Completed with every record imported', async () => {
    const res = await app.inject({ headers: auth.headers, method: 'POST', url: `${API}/restApiEndpoints('numbered')/Microsoft.NAV.run` });
    expect(res.statusCode).toBe(202);
    const { runId } = res.json<{ runId: string }>();

    const done = await until(
      async () =>
        (await app.inject({ headers: auth.headers, method: 'GET', url: `${API}/importRuns(${runId})` })).json<{ status: string }>(),
      { holds: (polled) => polled.status === 'Completed' || polled.status === 'Failed', what: `run ${runId} ended` },
    );

    expect(done).toMatchObject({ status: 'Completed', pagesFetched: 26, recordsFetched: 250, insertedCount: 250, stopReason: 'shortPage' });
    expect(itemIds(t.db)).toEqual(range(1, 250));
  });
});
