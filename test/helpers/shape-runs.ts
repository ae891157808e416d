/**
 * For tests that run endpoints of the paging server's shapes through a whole service: a fresh target
 * table and integration per case (so that rows of one case never hide another's), and a run started
 * over the API, waited for, with the table's ids read back.
 */
import { expect } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { applyConfig } from '../../src/declarative-config/apply.js';
import { API, type TestService } from './service.js';
import { until } from './until.js';

/** One admin API call, the answer parsed. */
export async function callApi(t: TestService, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) {
  const res = await t.inject({ method, url: `${API}/${url}`, ...(payload === undefined ? {} : { payload: payload as object }) });
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json() };
}

/** A target table `table` (id integer key, name text) and an insert-mode REST integration onto it. */
export async function itemsIntegration(t: TestService, table: string, sortingOrder: number): Promise<void> {
  await applyConfig(
    t.service.db,
    {
      targetTables: [
        {
          name: table,
          primaryKey: ['id'],
          fields: [
            { name: 'id', type: 'integer' },
            { name: 'name', type: 'text' },
          ],
        },
      ],
      integrations: [
        {
          sortingOrder,
          name: `Items ${table}`,
          type: 'restApi',
          targetTable: table,
          writeMode: 'insert',
          fields: [
            { fieldNo: 1, title: 'Id', sourcePath: 'id' },
            { fieldNo: 2, title: 'Name', sourcePath: 'name' },
          ],
          mappings: [
            { fieldNo: 1, targetField: 'id', required: true },
            { fieldNo: 2, targetField: 'name' },
          ],
        },
      ],
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
