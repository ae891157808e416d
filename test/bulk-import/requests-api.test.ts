import BetterSqlite3 from 'better-sqlite3';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/declarative-config/apply.js';
import { systemClock } from '../../src/core/clock.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const SET = `${API}/bulkImportRequests`;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const customers = JSON.stringify([{ no: 'C001', name: 'Contoso', email: 'info@contoso.example', address: { city: 'Oslo' } }]);

let t: TestService;

beforeAll(async () => {
  t = await startTestService({ workers: false, config: { bodyLimitBytes: 256 * 1024, maxPageSize: 100 } });
  await applyConfig(
    t.service.db,
    {
      integrations: [
        {
          sortingOrder: 20,
          name: 'Closed for bulk',
          type: 'file',
          targetTable: 'customer',
          acceptBulkImportRequests: false,
          fields: [],
          mappings: [],
        },
        {
          sortingOrder: 30,
          name: 'Small payloads',
          type: 'file',
          targetTable: 'customer',
          acceptBulkImportRequests: true,
          maxPayloadSizeKb: 1,
          fields: [{ fieldNo: 1, title: 'No.', sourcePath: 'no' }],
          mappings: [{ fieldNo: 1, targetField: 'no' }],
        },
      ],
    },
    systemClock,
  );
});
afterAll(async () => t.cleanup());

const submit = (body: unknown, headers: Record<string, string> = {}) =>
  t.inject({
    method: 'POST',
    url: SET,
    payload: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });

const countRequests = async () => {
  const row = await t.service.db.kysely
    .selectFrom('ifw_bulk_import_request')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
};

describe('POST bulkImportRequests', () => {
  it('answers 202 with requestId, status Pending and submittedAt, after the row is committed', async () => {
    const before = Date.now();
    const res = await submit({ integrationSortingOrder: 10, payload: customers });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['requestId', 'status', 'submittedAt']);
    expect(body.requestId).toMatch(GUID);
    expect(body.status).toBe('Pending');
    expect(new Date(body.submittedAt).toISOString()).toBe(body.submittedAt);
    expect(new Date(body.submittedAt).getTime()).toBeGreaterThanOrEqual(before - 5);
    expect(res.headers.location).toBe(`${SET}(${body.requestId})`);

    // Another connection to the same file sees the row: it was committed before the answer.
    const other = new BetterSqlite3(path.join(t.dir, 'ifw.db'), { readonly: true });
    const row = other.prepare('select status, payload from ifw_bulk_import_request where request_id = ?').get(body.requestId) as {
      status: string;
      payload: string;
    };
    other.close();
    expect(row).toEqual({ status: 'Pending', payload: customers });
  });

  it('accepts OData annotations in the body', async () => {
    const res = await submit({ '@odata.type': '#Microsoft.NAV.bulkImportRequest', integrationSortingOrder: 10, payload: '[]' });
    expect(res.statusCode).toBe(202);
  });

  const refusals: [string, unknown, number, string][] = [
    ['a body that is not JSON', '{"integrationSortingOrder": 10, "payload": ', 400, 'malformedBody'],
    ['an empty body', '', 400, 'invalidRequest'],
    ['a body without payload', { integrationSortingOrder: 10 }, 400, 'invalidRequest'],
    ['a body without integrationSortingOrder', { payload: '[]' }, 400, 'invalidRequest'],
    ['an integrationSortingOrder that is a string', { integrationSortingOrder: '10', payload: '[]' }, 400, 'invalidRequest'],
    ['an integrationSortingOrder that is not whole', { integrationSortingOrder: 10.5, payload: '[]' }, 400, 'invalidRequest'],
    ['a payload that is an object, not a string', { integrationSortingOrder: 10, payload: [] }, 400, 'invalidRequest'],
    ['an unknown property', { integrationSortingOrder: 10, payload: '[]', extra: 1 }, 400, 'invalidRequest'],
    ['a JSON array body', [1, 2], 400, 'invalidRequest'],
    ['a payload that is not a JSON text', { integrationSortingOrder: 10, payload: 'not json' }, 400, 'payloadNotJson'],
    ['a payload that is a truncated JSON text', { integrationSortingOrder: 10, payload: '[{"no":"C1"' }, 400, 'payloadNotJson'],
    ['an unknown integrationSortingOrder', { integrationSortingOrder: 999, payload: '[]' }, 400, 'unknownIntegration'],
    ['an integration that does not accept bulk requests', { integrationSortingOrder: 20, payload: '[]' }, 400, 'bulkImportNotEnabled'],
    [
      'a payload over the integration Max Payload Size',
      { integrationSortingOrder: 30, payload: JSON.stringify('x'.repeat(1100)) },
      413,
      'payloadTooLarge',
    ],
    [
      'a body over the service body limit',
      { integrationSortingOrder: 10, payload: JSON.stringify('x'.repeat(300 * 1024)) },
      413,
      'bodyTooLarge',
    ],
  ];

  it.each(refusals)('refuses %s with %i %s and stores nothing', async (_what, body, status, code) => {
    const before = await countRequests();
    const res = await submit(body);
    expect(res.statusCode).toBe(status);
    const error = res.json().error;
    expect(error.code).toBe(code);
    expect(typeof error.message).toBe('string');
    expect(error.message.length).toBeGreaterThan(10);
    expect(Object.keys(res.json())).toEqual(['error']);
    expect(await countRequests()).toBe(before);
  });

  it('refuses a body that is not declared as JSON with 415', async () => {
    const res = await submit(JSON.stringify({ integrationSortingOrder: 10, payload: '[]' }), { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(415);
    expect(res.json().error.code).toBe('unsupportedMediaType');
  });

  it('accepts a payload of exactly Max Payload Size and refuses one byte more', async () => {
    const exact = JSON.stringify('x'.repeat(1024 - 2));
    expect(Buffer.byteLength(exact)).toBe(1024);
    expect((await submit({ integrationSortingOrder: 30, payload: exact })).statusCode).toBe(202);
    const over = JSON.stringify('x'.repeat(1024 - 1));
    expect((await submit({ integrationSortingOrder: 30, payload: over })).statusCode).toBe(413);
  });

  it('measures Max Payload Size in UTF-8 bytes', async () => {
    const multiByte = JSON.stringify('é'.repeat(600)); // 1202 bytes, 602 characters
    const res = await submit({ integrationSortingOrder: 30, payload: multiByte });
    expect(res.statusCode).toBe(413);
  });
});

describe('GET bulkImportRequests(<id>)', () => {
  it('answers the spec fields for a known request', async () => {
    const { requestId, submittedAt } = (await submit({ integrationSortingOrder: 10, payload: customers })).json();
    const res = await t.inject({ url: `${SET}(${requestId})` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      '@odata.context': `${API}/$metadata#bulkImportRequests/$entity`,
      requestId,
      integrationSortingOrder: 10,
      status: 'Pending',
      submittedAt,
      processedAt: null,
      recordCount: 0,
      errorMessage: '',
    });
  });

  it('accepts the id quoted, as OData clients may write it', async () => {
    const { requestId } = (await submit({ integrationSortingOrder: 10, payload: customers })).json();
    const res = await t.inject({ url: `${SET}('${requestId}')` });
    expect(res.statusCode).toBe(200);
    expect(res.json().requestId).toBe(requestId);
  });

  it.each([
    ['an unknown id', `${SET}(0f8fad5b-d9cb-469f-a165-70867728950e)`],
    ['a malformed id', `${SET}(not-a-guid)`],
    ['an empty key', `${SET}()`],
    ['an unclosed key', `${SET}(0f8fad5b-d9cb-469f-a165-70867728950e`],
    ['a key with a path segment after it', `${SET}(0f8fad5b-d9cb-469f-a165-70867728950e)/nothing`],
  ])('answers 404 for %s', async (_what, url) => {
    const res = await t.inject({ url });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('notFound');
  });
});

describe('administrator actions', () => {
  it('cancels a Pending request, and refuses to cancel it twice', async () => {
    const { requestId } = (await submit({ integrationSortingOrder: 10, payload: customers })).json();
    const res = await t.inject({ method: 'POST', url: `${SET}(${requestId})/Microsoft.NAV.cancel` });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('Cancelled');
    expect(res.json().errorMessage).toBe('Cancelled by an administrator.');
    const again = await t.inject({ method: 'POST', url: `${SET}(${requestId})/Microsoft.NAV.cancel` });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('invalidStatusTransition');
  });

  it('cancels and resets a Processing request', async () => {
    const db = t.service.db.kysely;
    const a = (await submit({ integrationSortingOrder: 10, payload: customers })).json().requestId as string;
    const b = (await submit({ integrationSortingOrder: 10, payload: customers })).json().requestId as string;
    await db
      .updateTable('ifw_bulk_import_request')
      .set({ status: 'Processing', lease_owner: 'worker-x', lease_expires_at: '2000-01-01T00:00:00.000Z', attempts: 2 })
      .where('request_id', 'in', [a, b])
      .execute();

    const reset = await t.inject({ method: 'POST', url: `${SET}(${a})/Microsoft.NAV.reset` });
    expect(reset.statusCode).toBe(200);
    expect(reset.json().status).toBe('Pending');
    const row = await db.selectFrom('ifw_bulk_import_request').selectAll().where('request_id', '=', a).executeTakeFirstOrThrow();
    expect([row.lease_owner, row.lease_expires_at, row.attempts]).toEqual([null, null, 0]);

    const cancel = await t.inject({ method: 'POST', url: `${SET}(${b})/Microsoft.NAV.cancel` });
    expect(cancel.statusCode).toBe(200);
    expect(cancel.json().status).toBe('Cancelled');
  });

  it('refuses to reset a request that is not Processing', async () => {
    const { requestId } = (await submit({ integrationSortingOrder: 10, payload: customers })).json();
    const res = await t.inject({ method: 'POST', url: `${SET}(${requestId})/Microsoft.NAV.reset` });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('invalidStatusTransition');
  });

  it('answers 404 for actions on an unknown request', async () => {
    const res = await t.inject({ method: 'POST', url: `${SET}(0f8fad5b-d9cb-469f-a165-70867728950e)/Microsoft.NAV.cancel` });
    expect(res.statusCode).toBe(404);
  });
});

describe('errors never leak as 500', () => {
  it.each([
    ['GET', `${API}/nothingHere`],
    ['DELETE', SET],
    ['GET', `${SET}?$filter=status%20eq`],
    ['GET', `${SET}?$top=-1`],
    ['GET', `${SET}?$unknown=1`],
    ['PUT', `${SET}(0f8fad5b-d9cb-469f-a165-70867728950e)`],
  ])('%s %s answers a 4xx error body', async (method, url) => {
    const res = await t.inject({ method: method as 'GET', url });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.json().error.code).toEqual(expect.any(String));
  });
});
