/** The job queue admin API, in process (fastify inject) on a real SQLite file. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { SETTABLE_ENTRY_STATUSES } from '../../src/job-queue/model.js';
import { jobQueueRoutes } from '../../src/job-queue/routes.js';
import { buildServer, type App } from '../../src/http/server.js';
import { createTestAuth, type TestAuth } from '../helpers/auth.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { entryRow, silentLogger } from '../helpers/queue-fixtures.js';

const API = '/api/vendor/integrationFramework/v1.0';

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  anyOf?: SchemaNode[];
  const?: unknown;
  enum?: unknown[];
}
interface Operation {
  summary?: string;
  description?: string;
  requestBody?: { content: Record<string, { schema: SchemaNode }> };
}
interface OpenApi {
  paths: Record<string, { patch?: Operation; post?: Operation }>;
}
const PROCESSOR = `${API}/jobQueueEntries('bulk-import-processor')`;
const clock = manualClock('2025-03-01T10:00:00.000Z');

let t: TestDatabase;
let app: App;
let auth: TestAuth;
let wakes: number;

beforeEach(async () => {
  clock.set('2025-03-01T10:00:00.000Z');
  t = await openTestDatabase();
  await t.db.kysely.updateTable('ifw_job_queue_entry').set({ next_run_at: '2025-03-01T10:00:00.000Z' }).execute();
  wakes = 0;
  const queue = { wake: () => void (wakes += 1) };
  auth = await createTestAuth(t.db.kysely);
  app = await buildServer({
    authenticator: auth.authenticator,
    logger: silentLogger,
    bodyLimitBytes: 1024 * 1024,
    routes: [jobQueueRoutes({ db: t.db, clock, queue })],
  });
});
afterEach(async () => {
  await app.close();
  auth.cleanup();
  await t.cleanup();
});

const patch = (url: string, payload: unknown) => app.inject({ headers: auth.headers, method: 'PATCH', url, payload: payload as object });
const action = (name: string, key = "'bulk-import-processor'") =>
  app.inject({ headers: auth.headers, method: 'POST', url: `${API}/jobQueueEntries(${key})/Microsoft.NAV.${name}` });

describe('GET jobQueueEntries', () => {
  it('lists the entries with their schedule', async () => {
    const res = await app.inject({ headers: auth.headers, method: 'GET', url: `${API}/jobQueueEntries` });

    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body['@odata.context']).toBe(`${API}/$metadata#jobQueueEntries`);
    expect(body.value).toEqual([
      {
        id: 'bulk-import-processor',
        description: 'VENDOR IF Bulk Import Processor',
        kind: 'bulkImportProcessor',
        status: 'Ready',
        recurrenceSeconds: 60,
        nextRunAt: '2025-03-01T10:00:00.000Z',
        lastRunAt: null,
        lastEndedAt: null,
        lastError: '',
      },
      expect.objectContaining({ id: 'import-run-processor', kind: 'importRunProcessor', recurrenceSeconds: 60 }),
      expect.objectContaining({ id: 'retention-cleanup', kind: 'retentionCleanup', recurrenceSeconds: 3600 }),
      expect.objectContaining({ id: 'webhook-delivery', kind: 'webhookDelivery', recurrenceSeconds: 5 }),
    ]);
  });

  it('reads one entry by its quoted key', async () => {
    const res = await app.inject({ headers: auth.headers, method: 'GET', url: PROCESSOR });

    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      '@odata.context': `${API}/$metadata#jobQueueEntries/$entity`,
      id: 'bulk-import-processor',
      status: 'Ready',
    });
  });

  it('answers 404 for an unknown entry or a malformed key', async () => {
    for (const url of [`${API}/jobQueueEntries('nope')`, `${API}/jobQueueEntries/bulk-import-processor`, `${API}/jobQueueEntries('')`]) {
      const res = await app.inject({ headers: auth.headers, method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error.code).toBe('notFound');
    }
  });
});

describe('PATCH jobQueueEntries', () => {
  it('puts an entry On Hold and Ready again, waking the queue on Ready', async () => {
    const held = await patch(PROCESSOR, { status: 'On Hold' });
    expect(held.statusCode).toBe(200);
    expect(held.json().status).toBe('On Hold');
    expect(wakes).toBe(0);

    const ready = await patch(PROCESSOR, { status: 'Ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().status).toBe('Ready');
    expect(wakes).toBe(1);
  });

  it('changes the interval, bringing the next run forward when it gets shorter', async () => {
    await t.db.kysely.updateTable('ifw_job_queue_entry').set({ next_run_at: '2025-03-01T11:00:00.000Z' }).execute();

    const res = await patch(PROCESSOR, { recurrenceSeconds: 120 });

    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ recurrenceSeconds: 120, nextRunAt: '2025-03-01T10:02:00.000Z' });
  });

  it('refuses In Process and Error, which only the job queue sets, with 400 like any status it does not offer', async () => {
    for (const status of ['In Process', 'Error']) {
      const res = await patch(PROCESSOR, { status });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalidRequest' });
    }
    expect((await entryRow(t.db, 'bulk-import-processor')).status).toBe('Ready');
  });

  it('offers in its OpenAPI schema exactly the statuses it accepts: Ready and On Hold', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json<OpenApi>();
    const body = doc.paths[`${API}/jobQueueEntries({key})`]!.patch!.requestBody!.content['application/json']!.schema;
    const offered = (body.properties!.status!.anyOf ?? []).map((s) => s.const ?? s.enum?.[0]);
    expect(offered).toEqual([...SETTABLE_ENTRY_STATUSES]);
    for (const status of offered) expect((await patch(PROCESSOR, { status })).statusCode, String(status)).toBe(200);
  });

  it('refuses an unknown status, an out-of-range interval and unknown properties with 400', async () => {
    for (const body of [
      { status: 'Paused' },
      { recurrenceSeconds: 0 },
      { recurrenceSeconds: 86_401 },
      { recurrenceSeconds: 1.5 },
      { colour: 'red' },
    ]) {
      const res = await patch(PROCESSOR, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('invalidRequest');
    }
  });

  it('answers 404 for an unknown entry', async () => {
    const res = await patch(`${API}/jobQueueEntries('nope')`, { status: 'On Hold' });
    expect(res.statusCode).toBe(404);
  });
});

describe('bound actions', () => {
  it('setOnHold and setReady change the status; setReady wakes the queue', async () => {
    const held = await action('setOnHold');
    expect(held.statusCode).toBe(200);
    expect(held.json().status).toBe('On Hold');

    const ready = await action('setReady');
    expect(ready.statusCode).toBe(200);
    expect(ready.json().status).toBe('Ready');
    expect(wakes).toBe(1);
  });

  it('runNow says in its OpenAPI description that it answers before the run, and how to see the result', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json<OpenApi>();
    const runNow = doc.paths[`${API}/jobQueueEntries({key})/Microsoft.NAV.runNow`]!.post!;
    expect(runNow.summary).toContain('answers before it runs');
    expect(runNow.description).toContain('not after it ran');
    expect(runNow.description).toContain('lastEndedAt');
  });

  it('runNow makes the entry due now and wakes the queue', async () => {
    await t.db.kysely.updateTable('ifw_job_queue_entry').set({ next_run_at: '2025-03-01T11:00:00.000Z' }).execute();
    clock.advance(5000);

    const res = await action('runNow', "'retention-cleanup'");

    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: 'retention-cleanup', nextRunAt: '2025-03-01T10:00:05.000Z' });
    expect(wakes).toBe(1);
  });

  it('runNow on an entry On Hold answers 409 and changes nothing', async () => {
    await action('setOnHold');

    const res = await action('runNow');

    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('invalidStatusTransition');
    expect(wakes).toBe(0);
  });

  it('answers 404 for an action on an unknown entry', async () => {
    expect((await action('runNow', "'nope'")).statusCode).toBe(404);
    expect((await action('setReady', "'nope'")).statusCode).toBe(404);
  });
});
