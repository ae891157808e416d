/**
 * A client program as a user of the service writes it: types generated from the OpenAPI document
 * (`npx openapi-typescript http://127.0.0.1:8080/docs/json -o api.ts`, imported as `./api.js`), calls
 * made with openapi-fetch. test/http/typed-client.slow.test.ts generates api.ts from a running service next
 * to a copy of this file, type-checks both (any type error fails it) and runs the two walkthroughs
 * against the service. docs/bulk-import.md and docs/rest-api.md show the same program.
 *
 * This folder is left out of the project's type check and lint (api.ts exists only while the test runs).
 */
import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const API = '/api/vendor/integrationFramework/v1.0';
export type Client = ReturnType<typeof createClient<paths>>;

/** `baseUrl` is the service (http://127.0.0.1:8080); `authorization` a Basic or Bearer header value. */
export function connect(baseUrl: string, authorization: string): Client {
  return createClient<paths>({ baseUrl, headers: { authorization } });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The README walkthrough: submit two customers to integration 10, poll until the request ends, read the rows. */
export async function bulkImportWalkthrough(client: Client) {
  // 1. Submit: 202 with the requestId.
  const customers = [
    { no: 'C001', name: 'Contoso', email: 'info@contoso.example', address: { city: 'Oslo' } },
    { no: 'C002', name: 'Fabrikam', address: { city: 'Lyon' } },
  ];
  const submitted = await client.POST(`${API}/bulkImportRequests`, {
    body: { integrationSortingOrder: 10, payload: JSON.stringify(customers) },
  });
  if (submitted.error) throw new Error(`submit: ${submitted.error.error.message}`);
  const { requestId } = submitted.data;

  // 2. Poll until Completed or Failed.
  for (let attempt = 0; ; attempt++) {
    const polled = await client.GET(`${API}/bulkImportRequests({key})`, { params: { path: { key: requestId } } });
    if (polled.error) throw new Error(`poll: ${polled.error.error.message}`);
    const { status, recordCount, errorMessage } = polled.data;
    if (status === 'Completed' || status === 'Failed') {
      // 3. The rows are in the target table (a string key is quoted, as OData writes it).
      const rows = await client.GET(`${API}/targetTables({key})/rows`, { params: { path: { key: "'customer'" } } });
      if (rows.error) throw new Error(`rows: ${rows.error.error.message}`);
      return { requestId, status, recordCount, errorMessage, rows: rows.data.value };
    }
    if (attempt > 600) throw new Error(`request ${requestId} is still ${status}`);
    await pause(50);
  }
}

/**
 * The REST walkthrough: a table and an integration (fields and mappings inline), a connection to the
 * API at `apiOrigin` and a Page Number endpoint on it, a run, polled until it ends, its pages, the rows.
 */
export async function restWalkthrough(client: Client, apiOrigin: string) {
  const table = await client.POST(`${API}/targetTables`, {
    body: {
      name: 'item',
      primaryKey: ['id'],
      fields: [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'text', maxLength: 20, required: true },
      ],
    },
  });
  if (table.error) throw new Error(`table: ${table.error.error.message}`);
  const integration = await client.POST(`${API}/integrations`, {
    body: {
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
        { fieldNo: 1, targetField: 'id', required: true },
        { fieldNo: 2, targetField: 'name' },
      ],
    },
  });
  if (integration.error) throw new Error(`integration: ${integration.error.error.message}`);
  const connection = await client.POST(`${API}/restApiConnections`, {
    body: { code: 'paging', baseUrl: apiOrigin, authType: 'bearer', token: 'api-token' },
  });
  if (connection.error) throw new Error(`connection: ${connection.error.error.message}`);
  const endpoint = await client.POST(`${API}/restApiEndpoints`, {
    body: {
      code: 'items',
      connectionCode: 'paging',
      path: '/page-number',
      integrationSortingOrder: 80,
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      pageSize: 10,
      responseDataPath: 'data',
    },
  });
  if (endpoint.error) throw new Error(`endpoint: ${endpoint.error.error.message}`);

  // Run it: 202 with the runId; poll the run until it ends.
  const started = await client.POST(`${API}/restApiEndpoints({key})/Microsoft.NAV.run`, { params: { path: { key: "'items'" } } });
  if (started.error) throw new Error(`run: ${started.error.error.message}`);
  const { runId } = started.data;
  for (let attempt = 0; ; attempt++) {
    const polled = await client.GET(`${API}/importRuns({key})`, { params: { path: { key: runId } } });
    if (polled.error) throw new Error(`poll: ${polled.error.error.message}`);
    const run = polled.data;
    if (run.status === 'Completed' || run.status === 'Failed') {
      const pages = await client.GET(`${API}/importRuns({key})/pages`, { params: { path: { key: runId } } });
      if (pages.error) throw new Error(`pages: ${pages.error.error.message}`);
      const rows = await client.GET(`${API}/targetTables({key})/rows`, {
        params: { path: { key: "'item'" }, query: { $orderby: 'id', $top: '1000' } },
      });
      if (rows.error) throw new Error(`rows: ${rows.error.error.message}`);
      return { run, pages: pages.data.value, rows: rows.data.value };
    }
    if (attempt > 600) throw new Error(`run ${runId} is still ${run.status}`);
    await pause(50);
  }
}
