/**
 * REST API imports through the whole service, as an administrator drives them: configure a
 * connection and an endpoint over the admin API, start a run, poll it until Completed (the real job
 * queue thread does the work), read the rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/declarative-config/apply.js';
import { systemClock } from '../../src/core/clock.js';
import { API, startTestService, type TestService } from '../helpers/service.js';
import { until } from '../helpers/until.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';

let t: TestService;
let server: PagingServer;

beforeAll(async () => {
  server = await startPagingServer({ records: 95, pageSize: 10 });
  t = await startTestService({ workers: true, config: { secretKey: 'service-test-key' } });
  await applyConfig(
    t.service.db,
    {
      targetTables: [
        {
          name: 'item',
          primaryKey: ['id'],
          fields: [
            { name: 'id', type: 'integer' },
            { name: 'name', type: 'text', maxLength: 20, required: true },
          ],
        },
      ],
      integrations: [
        {
          sortingOrder: 80,
          name: 'Items from the paging API',
          type: 'restApi',
          targetTable: 'item',
          writeMode: 'upsert',
          fields: [
            { fieldNo: 1, title: 'Id', sourcePath: 'id' },
            { fieldNo: 2, title: 'Name', sourcePath: 'name' },
          ],
          mappings: [
            { fieldNo: 1, targetField: 'id' },
            { fieldNo: 2, targetField: 'name' },
          ],
        },
      ],
    },
    systemClock,
  );
});

afterAll(async () => {
  await t.cleanup();
  await server.close();
});

const call = async (method: 'GET' | 'POST' | 'DELETE' | 'PATCH', url: string, payload?: unknown) => {
  const res = await t.inject({ method, url: `${API}/${url}`, ...(payload === undefined ? {} : { payload: payload as object }) });
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json(), headers: res.headers };
};

describe('REST API imports through the service', () => {
  it('configures an Offset/Limit endpoint, runs it on the job queue and lands every record once', async () => {
    const connection = await call('POST', 'restApiConnections', {
      code: 'paging',
      baseUrl: server.origin,
      authType: 'bearer',
      token: 's3cret-token',
    });
    expect(connection.status, JSON.stringify(connection.body)).toBe(201);
    expect(JSON.stringify(connection.body)).not.toContain('s3cret-token');
    expect(connection.body.tokenIsSet).toBe(true);

    const endpoint = await call('POST', 'restApiEndpoints', {
      code: 'items',
      connectionCode: 'paging',
      path: '/offset-limit',
      integrationSortingOrder: 80,
      paginationType: 'offsetLimit',
      offsetParameterName: 'offset',
      limitParameterName: 'limit',
      pageSize: 10,
      responseDataPath: 'results.items',
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);

    const started = await call('POST', "restApiEndpoints('items')/Microsoft.NAV.run");
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const runId = started.body.runId as string;
    expect(started.headers.location).toContain(runId);

    const run = await until(async () => (await call('GET', `importRuns(${runId})`)).body as Record<string, unknown>, {
      holds: (body) => ['Completed', 'Failed'].includes(body.status as string),
      what: `run ${runId} ended`,
    });
    expect(run).toMatchObject({ status: 'Completed', pagesFetched: 10, recordsFetched: 95, stopReason: 'shortPage' });

    const rows = await call('GET', "targetTables('item')/rows?$top=200");
    expect(rows.body.value.map((r: { id: number }) => r.id)).toEqual(Array.from({ length: 95 }, (_, i) => i + 1));
    expect(server.requests.every((r) => r.headers.authorization === 'Bearer s3cret-token')).toBe(true);

    const pages = await call('GET', `importRuns(${runId})/pages`);
    expect(pages.body.value.map((p: { recordsFetched: number }) => p.recordsFetched)).toEqual([10, 10, 10, 10, 10, 10, 10, 10, 10, 5]);
  });

  it('keeps processing bulk import requests while a REST import waits on a slow API', async () => {
    // Page 2 of the offset-limit route hangs (the connection's timeout is far off) until the server drops it; no retries.
    expect((await call('PATCH', "restApiConnections('paging')", { timeoutMs: 60_000, maxRetries: 0 })).status).toBe(200);
    server.setFaults([{ kind: 'hang', page: 2, times: 1 }]);
    const started = await call('POST', "restApiEndpoints('items')/Microsoft.NAV.run");
    expect(started.status).toBe(202);
    await until(async () => (await call('GET', `importRuns(${started.body.runId})`)).body as { pagesFetched: number }, {
      holds: (run) => run.pagesFetched === 1,
      what: 'page 1 fetched',
    });

    const submitted = await call('POST', 'bulkImportRequests', { integrationSortingOrder: 10, payload: '[{"no":"Q1","name":"Quick"}]' });
    expect(submitted.status).toBe(202);
    await until(async () => (await call('GET', `bulkImportRequests(${submitted.body.requestId})`)).body as { status: string }, {
      holds: (body) => body.status === 'Completed',
      what: 'the bulk import request Completed',
    });
    // Completed while the REST import still waits on page 2: the two lanes do not hold each other up.
    expect((await call('GET', `importRuns(${started.body.runId})`)).body).toMatchObject({ status: 'Running', pagesFetched: 1 });
    server.dropHung();

    const failed = await until(
      async () => (await call('GET', `importRuns(${started.body.runId})`)).body as { status: string; errorMessage: string },
      { holds: (body) => body.status === 'Failed', what: 'the run Failed' },
    );
    expect(failed.errorMessage).toMatch(/^page 2 \(GET .*\/offset-limit\?offset=10&limit=10\):/);
    server.setFaults([]);
  });

  it('refuses to delete an integration that an endpoint feeds', async () => {
    const res = await call('DELETE', 'integrations(80)');
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain('"items"');
  });

  it('documents the REST API entity sets in the OpenAPI document', async () => {
    const doc = (await t.inject({ url: '/docs/json' })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([`${API}/restApiConnections`, `${API}/restApiEndpoints({key})`, `${API}/importRuns({key})`]),
    );
  });
});
