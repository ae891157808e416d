/**
 * For tests that run endpoints of the paging server's shapes through a whole service: the service (with
 * its job queue) and the paging server with a bearer-token connection to it, a fresh target table and
 * integration per case (so that rows of one case never hide another's), and a run started over the API,
 * waited for, with the table's ids read back.
 */
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { applyConfig } from '../../src/declarative-config/apply.js';
import { PAGED_CONTACTS, startPagingServer, type PagingServer } from './paging-server.js';
import { API, startTestService, type TestService } from './service.js';
import { until } from './until.js';

/** One admin API call, the answer parsed. */
export async function callApi(t: TestService, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) {
  const res = await t.inject({ method, url: `${API}/${url}`, ...(payload === undefined ? {} : { payload: payload as object }) });
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json() };
}

/**
 * A target table `table` (id integer key, name text) and a REST integration onto it, as PAGED_CONTACTS
 * but in insert mode: a record fetched twice fails the run instead of being written over.
 */
export async function itemsIntegration(t: TestService, table: string, sortingOrder: number): Promise<void> {
  await applyConfig(
    t.service.db,
    {
      targetTables: [{ ...PAGED_CONTACTS.table, name: table }],
      integrations: [{ ...PAGED_CONTACTS.integration, sortingOrder, name: `Items ${table}`, targetTable: table, writeMode: 'insert' }],
    },
    systemClock,
  );
}

/** Runs endpoint `code` on the job queue and answers the ended run and the ids in `table`, sorted. */
export async function runAndRead(t: TestService, code: string, table: string): Promise<{ run: Record<string, unknown>; ids: number[] }> {
  const started = await callApi(t, 'POST', `restApiEndpoints('${code}')/Microsoft.NAV.run`);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  const runId = started.body.runId as string;
  const run = await until(async () => (await callApi(t, 'GET', `importRuns(${runId})`)).body as Record<string, unknown>, {
    holds: (body) => ['Completed', 'Failed'].includes(body.status as string),
    what: `run ${runId} ended`,
  });
  const rows = await callApi(t, 'GET', `targetTables('${table}')/rows?$top=200`);
  return { run, ids: (rows.body.value as { id: number }[]).map((r) => r.id).sort((a, b) => a - b) };
}

export interface ShapeService {
  readonly t: TestService;
  readonly server: PagingServer;
  readonly call: (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => ReturnType<typeof callApi>;
  /**
   * Endpoint `<codePrefix><no>` on the connection, as `endpoint` says, onto a fresh table `<prefix>_<no>`
   * and integration `firstSortingOrder + no`; `no` counts the cases.
   */
  readonly freshEndpoint: (codePrefix: string, endpoint: Record<string, unknown>) => Promise<{ code: string; table: string }>;
}

/**
 * The file's service and paging server (23 records in pages of 5, reset before each test) with the
 * connection `connection` to it (bearer `token`), started before its tests and stopped after them.
 */
export function shapeService(connection: string, token: string, tablePrefix: string, firstSortingOrder: number): ShapeService {
  let t: TestService | undefined;
  let server: PagingServer | undefined;
  let no = 0;
  beforeAll(async () => {
    server = await startPagingServer({ records: 23, pageSize: 5 });
    t = await startTestService({ workers: true, config: { secretKey: `${connection}-test-key` } });
    const created = await callApi(t, 'POST', 'restApiConnections', {
      code: connection,
      baseUrl: server.origin,
      authType: 'bearer',
      token,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });
  afterAll(async () => {
    await t?.cleanup();
    await server?.close();
  });
  beforeEach(() => server!.reset({ records: 23, pageSize: 5 }));
  return {
    get t() {
      return t!;
    },
    get server() {
      return server!;
    },
    call: (method, url, payload) => callApi(t!, method, url, payload),
    freshEndpoint: async (codePrefix, endpoint) => {
      no++;
      const table = `${tablePrefix}_${no}`;
      const sortingOrder = firstSortingOrder + no;
      await itemsIntegration(t!, table, sortingOrder);
      const code = `${codePrefix}${no}`;
      const created = await callApi(t!, 'POST', 'restApiEndpoints', {
        code,
        connectionCode: connection,
        integrationSortingOrder: sortingOrder,
        ...endpoint,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return { code, table };
    },
  };
}
