/**
 * Bound actions take no body, and many clients send `Content-Type: application/json` on every POST,
 * with `Content-Length: 0` or as an empty chunked stream: each framing of "no body" runs the action.
 * A body that is present and not JSON is still `malformedBody`; routes that need a body say so.
 * Real sockets, so that the framings are exactly what a client sends.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

let t: TestService;
let paging: PagingServer;
let origin: string;

beforeAll(async () => {
  paging = await startPagingServer({ records: 5, pageSize: 10 });
  t = await startTestService({ workers: false });
  await t.service.app.listen({ host: '127.0.0.1', port: 0 });
  origin = `http://127.0.0.1:${(t.service.app.server.address() as AddressInfo).port}`;
  const setup = async (url: string, payload: object) =>
    expect((await t.inject({ method: 'POST', url: `${API}/${url}`, payload })).statusCode).toBe(201);
  await setup('restApiConnections', { code: 'local', baseUrl: paging.origin, maxRetries: 0 });
  await setup('restApiEndpoints', {
    code: 'local.pages',
    connectionCode: 'local',
    path: '/page-number',
    integrationSortingOrder: 10,
    paginationType: 'pageNumber',
    pageParameterName: 'page',
    pageSize: 10,
    responseDataPath: 'data',
  });
});

afterAll(async () => {
  await t?.cleanup();
  await paging?.close();
});

interface Framing {
  readonly name: string;
  readonly headers: Record<string, string>;
  /** Written as the body; `chunked` framings write nothing and end the stream. */
  readonly body: string;
}

const FRAMINGS: Framing[] = [
  { name: 'no body and no Content-Type', headers: { 'content-length': '0' }, body: '' },
  {
    name: 'Content-Type: application/json and Content-Length: 0',
    headers: { 'content-type': 'application/json', 'content-length': '0' },
    body: '',
  },
  {
    name: 'Content-Type: application/json; charset=utf-8 and an empty chunked body',
    headers: { 'content-type': 'application/json; charset=utf-8', 'transfer-encoding': 'chunked' },
    body: '',
  },
];

async function post(
  url: string,
  framing: Framing,
): Promise<{ status: number; body: { error?: { code: string; message: string } } & Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${origin}${API}/${url}`, { method: 'POST', headers: { ...t.headers, ...framing.headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? {} : JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(framing.body);
  });
}

/** A Pending request, for cancel; workers are off, so it stays Pending. */
async function pendingRequest(): Promise<string> {
  const res = await t.inject({ method: 'POST', url: `${API}/bulkImportRequests`, payload: { integrationSortingOrder: 10, payload: '[]' } });
  return res.json<{ requestId: string }>().requestId;
}

/** A request stuck in Processing, for reset. */
async function processingRequest(): Promise<string> {
  const id = await pendingRequest();
  await sql`update ifw_bulk_import_request set status = 'Processing' where request_id = ${id}`.execute(t.service.db.kysely);
  return id;
}

/** Each action, made ready to succeed, with the success it answers. */
const ACTIONS: { name: string; prepare: () => Promise<string>; status: number; answer: Record<string, unknown> }[] = [
  {
    name: 'bulkImportRequests cancel',
    prepare: async () => `bulkImportRequests(${await pendingRequest()})/Microsoft.NAV.cancel`,
    status: 200,
    answer: { status: 'Cancelled' },
  },
  {
    name: 'bulkImportRequests reset',
    prepare: async () => `bulkImportRequests(${await processingRequest()})/Microsoft.NAV.reset`,
    status: 200,
    answer: { status: 'Pending' },
  },
  {
    name: 'jobQueueEntries setOnHold',
    prepare: () => Promise.resolve("jobQueueEntries('retention-cleanup')/Microsoft.NAV.setOnHold"),
    status: 200,
    answer: { status: 'On Hold' },
  },
  {
    name: 'jobQueueEntries setReady',
    prepare: () => Promise.resolve("jobQueueEntries('retention-cleanup')/Microsoft.NAV.setReady"),
    status: 200,
    answer: { status: 'Ready' },
  },
  {
    name: 'jobQueueEntries runNow',
    prepare: () => Promise.resolve("jobQueueEntries('retention-cleanup')/Microsoft.NAV.runNow"),
    status: 200,
    answer: { id: 'retention-cleanup' },
  },
  {
    name: 'restApiConnections testConnection (saved connection)',
    prepare: () => Promise.resolve("restApiConnections('local')/Microsoft.NAV.testConnection"),
    status: 200,
    answer: { ok: true, status: 200 },
  },
  {
    name: 'restApiEndpoints previewFirstPage (saved endpoint)',
    prepare: () => Promise.resolve("restApiEndpoints('local.pages')/Microsoft.NAV.previewFirstPage"),
    status: 200,
    answer: { ok: true, recordCount: 5 },
  },
  {
    name: 'restApiEndpoints detectPagination (saved endpoint)',
    prepare: () => Promise.resolve("restApiEndpoints('local.pages')/Microsoft.NAV.detectPagination"),
    status: 200,
    answer: { ok: true },
  },
  {
    name: 'restApiEndpoints run',
    prepare: async () => {
      // One run at a time per endpoint: end the previous framing's queued run first.
      await sql`update ifw_import_run set status = 'Cancelled' where status in ('Queued', 'Running')`.execute(t.service.db.kysely);
      return "restApiEndpoints('local.pages')/Microsoft.NAV.run";
    },
    status: 202,
    answer: { status: 'Queued', endpointCode: 'local.pages' },
  },
];

describe('bound actions run with an empty body, however it is framed', () => {
  for (const action of ACTIONS) {
    it.each(FRAMINGS)(`${action.name}: $name`, async (framing) => {
      const res = await post(await action.prepare(), framing);
      expect(res.body.error).toBeUndefined();
      expect(res.status).toBe(action.status);
      expect(res.body).toMatchObject(action.answer);
    });
  }

  it('still refuses a body that is present and not JSON with malformedBody, and changes nothing', async () => {
    const id = await pendingRequest();
    const res = await post(`bulkImportRequests(${id})/Microsoft.NAV.cancel`, {
      name: 'not JSON',
      headers: { 'content-type': 'application/json' },
      body: 'cancel please',
    });
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'malformedBody' } } });
    expect((await t.inject({ url: `${API}/bulkImportRequests(${id})` })).json()).toMatchObject({ status: 'Pending' });
  });

  it('accepts a JSON body on an action that takes none (it is ignored)', async () => {
    const id = await pendingRequest();
    const res = await post(`bulkImportRequests(${id})/Microsoft.NAV.cancel`, {
      name: '{}',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res).toMatchObject({ status: 200, body: { status: 'Cancelled' } });
  });
});

describe('routes that need a body refuse an empty one, saying what to send', () => {
  const NEEDS_BODY: [string, string][] = [
    ['bulkImportRequests', 'The request body is empty; this endpoint needs a JSON object with integrationSortingOrder and payload'],
    ['integrations', 'The request body is empty; this endpoint needs a JSON object with sortingOrder, name and targetTable'],
    ['restApiConnections/Microsoft.NAV.testConnection', 'The request body is empty; this endpoint needs a JSON object with baseUrl'],
    [
      'restApiEndpoints/Microsoft.NAV.previewFirstPage',
      'The request body is empty; this endpoint needs a JSON object with connectionCode and path',
    ],
    [
      'restApiEndpoints/Microsoft.NAV.detectPagination',
      'The request body is empty; this endpoint needs a JSON object with connectionCode and path',
    ],
  ];
  for (const [url, message] of NEEDS_BODY) {
    it.each(FRAMINGS)(`POST ${url}: $name`, async (framing) => {
      const before = (await sql<{ n: number }>`select count(*) as n from ifw_bulk_import_request`.execute(t.service.db.kysely)).rows[0]!.n;
      const res = await post(url, framing);
      expect(res).toEqual({ status: 400, body: { error: { code: 'invalidRequest', message } } });
      const after = (await sql<{ n: number }>`select count(*) as n from ifw_bulk_import_request`.execute(t.service.db.kysely)).rows[0]!.n;
      expect(after).toBe(before);
    });
  }

  it('PATCH with an empty body names the properties it may change', async () => {
    const patch = await t.inject({
      method: 'PATCH',
      url: `${API}/jobQueueEntries('retention-cleanup')`,
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(patch.json()).toEqual({
      error: {
        code: 'invalidRequest',
        message: 'The request body is empty; this endpoint needs a JSON object with one or more of status, recurrenceSeconds',
      },
    });
  });
});
