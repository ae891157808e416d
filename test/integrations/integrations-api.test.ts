import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { AppError } from '../../src/core/errors.js';
import { applyConfig, applyConfigFile } from '../../src/declarative-config/apply.js';
import { integrationRoutes } from '../../src/integrations/routes.js';
import { targetTableRoutes } from '../../src/tables/routes.js';
import { buildServer, type App } from '../../src/http/server.js';
import { createTestAuth, type TestAuth } from '../helpers/auth.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';

const API = '/api/vendor/integrationFramework/v1.0';
const clock = manualClock('2025-01-01T00:00:00Z');
let t: TestDatabase;
let app: App;
let auth: TestAuth;

beforeEach(async () => {
  t = await openTestDatabase();
  const deps = { db: t.db, clock };
  auth = await createTestAuth(t.db.kysely);
  app = await buildServer({
    authenticator: auth.authenticator,
    logger: pino({ level: 'silent' }),
    bodyLimitBytes: 1 << 20,
    routes: [targetTableRoutes(deps), integrationRoutes(deps)],
  });
});
afterEach(async () => {
  await app.close();
  auth.cleanup();
  await t.cleanup();
});

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
async function call(method: Method, path: string, body?: unknown) {
  const res = await app.inject({
    headers: auth.headers,
    method,
    url: `${API}/${path}`,
    ...(body !== undefined ? { payload: body as object } : {}),
  });
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json(), headers: res.headers };
}

const customer = {
  name: 'customer',
  primaryKey: ['no'],
  fields: [
    { name: 'no', type: 'code', maxLength: 20 },
    { name: 'name', type: 'text', maxLength: 100, required: true },
    { name: 'email', type: 'text', maxLength: 80 },
    { name: 'city', type: 'text', maxLength: 30 },
  ],
};
const vendor = {
  name: 'vendor',
  primaryKey: ['no'],
  fields: [
    { name: 'no', type: 'code' },
    { name: 'name', type: 'text' },
  ],
};
const integration = { sortingOrder: 10, name: 'Customers', type: 'file', targetTable: 'customer' };

async function setUpCustomers() {
  expect((await call('POST', 'targetTables', customer)).status).toBe(201);
  expect((await call('POST', 'integrations', integration)).status).toBe(201);
  expect((await call('POST', 'integrations(10)/fields', { fieldNo: 1, title: 'No.', sourcePath: 'no' })).status).toBe(201);
  expect((await call('POST', 'integrations(10)/fields', { fieldNo: 2, title: 'Name', sourcePath: 'name' })).status).toBe(201);
  expect((await call('POST', 'integrations(10)/mappings', { fieldNo: 1, targetField: 'no', required: true })).status).toBe(201);
}

describe('targetTables', () => {
  it('creates a table with POST, lists it and reads it by quoted or bare key', async () => {
    const created = await call('POST', 'targetTables', customer);
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`${API}/targetTables('customer')`);
    expect(created.body).toMatchObject({ '@odata.context': `${API}/$metadata#targetTables/$entity`, name: 'customer', primaryKey: ['no'] });

    const list = await call('GET', 'targetTables');
    expect(list.body).toMatchObject({ '@odata.context': `${API}/$metadata#targetTables`, value: [{ name: 'customer' }] });
    expect((await call('GET', "targetTables('customer')")).body.fields).toHaveLength(4);
    expect((await call('GET', 'targetTables(customer)')).status).toBe(200);
    const sqlTable = t.db.sqlite.prepare("select name from sqlite_master where type = 'table' and name = 'customer'").get();
    expect(sqlTable).toEqual({ name: 'customer' });
  });

  it('answers 409 to POST for a table that exists', async () => {
    await call('POST', 'targetTables', customer);
    expect(await call('POST', 'targetTables', customer)).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
  });

  it('declares idempotently with PUT: created, then unchanged, then updated with the added field', async () => {
    const first = await call('PUT', "targetTables('customer')", customer);
    expect(first).toMatchObject({ status: 201, body: { name: 'customer', change: { result: 'created' } } });
    const again = await call('PUT', "targetTables('customer')", customer);
    expect(again).toMatchObject({ status: 200, body: { change: { result: 'unchanged', addedFields: [] } } });
    const wider = await call('PUT', "targetTables('customer')", {
      ...customer,
      fields: [...customer.fields, { name: 'country', type: 'code' }],
    });
    expect(wider).toMatchObject({ status: 200, body: { change: { result: 'updated', addedFields: ['country'] } } });
  });

  it('takes the name from the key in PUT and refuses a body naming another table', async () => {
    const { name: _, ...withoutName } = customer;
    expect((await call('PUT', "targetTables('customer')", withoutName)).status).toBe(201);
    const other = await call('PUT', "targetTables('customer')", { ...customer, name: 'client' });
    expect(other).toMatchObject({ status: 400, body: { error: { code: 'invalidRequest' } } });
  });

  it('refuses an incompatible redeclaration with 409 naming the field', async () => {
    await call('PUT', "targetTables('customer')", customer);
    const res = await call('PUT', "targetTables('customer')", {
      ...customer,
      fields: customer.fields.map((f) => (f.name === 'email' ? { ...f, type: 'integer', maxLength: undefined } : f)),
    });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('incompatibleChange');
    expect(res.body.error.message).toContain('field "email": its type cannot change from text to integer');
  });

  it('refuses invalid declarations with 400 and a clear message', async () => {
    const res = await call('POST', 'targetTables', { ...customer, fields: [...customer.fields, { name: 'x', type: 'varchar' }] });
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'invalidRequest' } } });
    expect(res.body.error.message).toContain('fields[4].type: "varchar" is not a field type');
    const relation = await call('POST', 'targetTables', {
      ...customer,
      fields: [...customer.fields, { name: 'country', type: 'code', relation: { table: 'country', field: 'code' } }],
    });
    expect(relation.status).toBe(400);
    expect(relation.body.error.message).toContain('no target table "country" is declared');
  });

  it('refuses unknown properties with 400 but accepts OData annotations', async () => {
    expect((await call('POST', 'targetTables', { ...customer, colour: 'blue' })).status).toBe(400);
    expect((await call('POST', 'targetTables', { ...customer, fields: [{ ...customer.fields[0], length: 3 }] })).status).toBe(400);
    expect((await call('POST', 'targetTables', { ...customer, '@odata.context': 'x' })).status).toBe(201);
  });

  it('deletes a table with 204 and then answers 404', async () => {
    await call('POST', 'targetTables', customer);
    expect((await call('DELETE', "targetTables('customer')")).status).toBe(204);
    expect(await call('GET', "targetTables('customer')")).toMatchObject({ status: 404, body: { error: { code: 'notFound' } } });
    expect((await call('DELETE', "targetTables('customer')")).status).toBe(404);
  });

  it('refuses deleting a table an integration uses', async () => {
    await setUpCustomers();
    expect(await call('DELETE', "targetTables('customer')")).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
  });
});

describe('integrations', () => {
  it('creates an integration with defaults, lists it and reads it by sorting order', async () => {
    await call('POST', 'targetTables', customer);
    const created = await call('POST', 'integrations', integration);
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`${API}/integrations(10)`);
    const expected = {
      sortingOrder: 10,
      name: 'Customers',
      type: 'file',
      targetTable: 'customer',
      recordsPath: '',
      acceptBulkImportRequests: false,
      maxPayloadSizeKb: null,
      writeMode: 'insert',
      onRecordError: 'fail',
    };
    expect(created.body).toEqual({ '@odata.context': `${API}/$metadata#integrations/$entity`, ...expected });
    expect((await call('GET', 'integrations')).body).toEqual({ '@odata.context': `${API}/$metadata#integrations`, value: [expected] });
    expect((await call('GET', 'integrations(10)')).body).toMatchObject(expected);
  });

  it('refuses a duplicate sorting order with 409', async () => {
    await call('POST', 'targetTables', customer);
    await call('POST', 'integrations', integration);
    const res = await call('POST', 'integrations', { ...integration, name: 'Other' });
    expect(res).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
    expect(res.body.error.message).toContain('sortingOrder 10 already exists');
  });

  it('refuses invalid settings with 400 naming the property', async () => {
    await call('POST', 'targetTables', customer);
    const cases: [object, string][] = [
      [{ ...integration, sortingOrder: 0 }, 'sortingOrder: must be a whole number from 1'],
      [{ ...integration, name: ' ' }, 'name: must not be empty'],
      [{ ...integration, type: 'soap' }, 'type: "soap" is not allowed; use one of restApi, file'],
      [{ ...integration, targetTable: 'nothing' }, 'targetTable: no target table "nothing" is declared'],
      [{ ...integration, recordsPath: 'data..items' }, 'recordsPath: invalid path'],
      [{ ...integration, maxPayloadSizeKb: 0 }, 'maxPayloadSizeKb: must be between 1 and 1048576'],
      [{ ...integration, writeMode: 'merge' }, 'writeMode: "merge" is not allowed; use one of insert, update, upsert'],
      [{ ...integration, onRecordError: 'ignore' }, 'onRecordError: "ignore" is not allowed'],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', 'integrations', body);
      expect(res.status, message).toBe(400);
      expect(res.body.error.message).toContain(message);
    }
    expect((await call('GET', 'integrations')).body.value).toEqual([]);
  });

  it('refuses unknown properties and wrong types with 400', async () => {
    await call('POST', 'targetTables', customer);
    expect((await call('POST', 'integrations', { ...integration, colour: 'blue' })).status).toBe(400);
    expect((await call('POST', 'integrations', { ...integration, sortingOrder: '10' })).status).toBe(400);
    expect((await call('POST', 'integrations', { ...integration, sortingOrder: 1.5 })).status).toBe(400);
  });

  it('answers 404 for an unknown or malformed key', async () => {
    expect(await call('GET', 'integrations(99)')).toMatchObject({ status: 404, body: { error: { code: 'notFound' } } });
    expect(await call('GET', 'integrations(abc)')).toMatchObject({ status: 404, body: { error: { code: 'notFound' } } });
    expect((await call('PATCH', 'integrations(abc)', { name: 'x' })).status).toBe(404);
    expect((await call('DELETE', 'integrations(99)')).status).toBe(404);
    expect((await call('GET', 'integrations(99)/fields')).status).toBe(404);
    expect((await call('POST', 'integrations(99)/fields', { fieldNo: 1, title: 'No.', sourcePath: 'no' })).status).toBe(404);
  });

  it('changes only the given settings with PATCH', async () => {
    await setUpCustomers();
    const res = await call('PATCH', 'integrations(10)', { acceptBulkImportRequests: true, maxPayloadSizeKb: 512, writeMode: 'upsert' });
    expect(res).toMatchObject({
      status: 200,
      body: { name: 'Customers', acceptBulkImportRequests: true, maxPayloadSizeKb: 512, writeMode: 'upsert' },
    });
    expect((await call('PATCH', 'integrations(10)', { maxPayloadSizeKb: null })).body.maxPayloadSizeKb).toBeNull();
    expect((await call('GET', 'integrations(10)')).body).toMatchObject({
      acceptBulkImportRequests: true,
      maxPayloadSizeKb: null,
      writeMode: 'upsert',
    });
  });

  it('accepts a GET answer sent back with PATCH', async () => {
    await setUpCustomers();
    const current = (await call('GET', 'integrations(10)')).body;
    expect((await call('PATCH', 'integrations(10)', { ...current, name: 'Customers (CRM)' })).body.name).toBe('Customers (CRM)');
  });

  it('refuses changing the sorting order with PATCH', async () => {
    await setUpCustomers();
    const res = await call('PATCH', 'integrations(10)', { sortingOrder: 11 });
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'invalidRequest' } } });
  });

  it('refuses pointing an integration at a table that lacks its mapped fields', async () => {
    await setUpCustomers();
    await call('POST', 'targetTables', vendor);
    await call('POST', 'integrations(10)/mappings', { fieldNo: 2, targetField: 'name' });
    expect((await call('PATCH', 'integrations(10)', { targetTable: 'vendor' })).status).toBe(200);
    await call('POST', 'integrations(10)/fields', { fieldNo: 3, title: 'E-Mail', sourcePath: 'email' });
    await call('PATCH', 'integrations(10)', { targetTable: 'customer' });
    await call('POST', 'integrations(10)/mappings', { fieldNo: 3, targetField: 'email' });
    const res = await call('PATCH', 'integrations(10)', { targetTable: 'vendor' });
    expect(res).toMatchObject({ status: 409, body: { error: { code: 'incompatibleChange' } } });
    expect(res.body.error.message).toContain('table "vendor" has no field for mapping(s) field 3 → "email"');
    expect((await call('GET', 'integrations(10)')).body.targetTable).toBe('customer');
  });

  it('deletes an integration with its fields and mappings', async () => {
    await setUpCustomers();
    expect((await call('DELETE', 'integrations(10)')).status).toBe(204);
    expect((await call('GET', 'integrations(10)')).status).toBe(404);
    const count = (table: string) => (t.db.sqlite.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    expect([count('ifw_integration_field'), count('ifw_integration_mapping')]).toEqual([0, 0]);
  });

  it('refuses deleting an integration while a bulk import request for it is Pending or Processing', async () => {
    await setUpCustomers();
    t.db.sqlite
      .prepare(
        "insert into ifw_bulk_import_request (request_id, integration_sorting_order, payload, status, submitted_at) values (?, 10, '[]', ?, '2025-01-01T00:00:00Z')",
      )
      .run('00000000-0000-4000-8000-000000000001', 'Processing');
    const res = await call('DELETE', 'integrations(10)');
    expect(res).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
    expect(res.body.error.message).toContain('Pending or Processing');
    t.db.sqlite.prepare("update ifw_bulk_import_request set status = 'Completed'").run();
    expect((await call('DELETE', 'integrations(10)')).status).toBe(204);
  });
});

describe('integration fields', () => {
  it('adds, lists, reads, changes and deletes fields; deleting a field deletes its mapping', async () => {
    await setUpCustomers();
    expect((await call('GET', 'integrations(10)/fields')).body).toMatchObject({
      '@odata.context': `${API}/$metadata#integrations(10)/fields`,
      value: [
        { fieldNo: 1, sourcePath: 'no' },
        { fieldNo: 2, sourcePath: 'name' },
      ],
    });
    expect((await call('GET', 'integrations(10)/fields(1)')).body).toEqual({
      '@odata.context': `${API}/$metadata#integrations(10)/fields/$entity`,
      integrationSortingOrder: 10,
      fieldNo: 1,
      title: 'No.',
      sourcePath: 'no',
      columnType: 'standard',
      constantValue: null,
    });
    expect((await call('PATCH', 'integrations(10)/fields(2)', { sourcePath: '$.customer.name' })).body.sourcePath).toBe('$.customer.name');
    expect((await call('DELETE', 'integrations(10)/fields(1)')).status).toBe(204);
    expect((await call('GET', 'integrations(10)/fields(1)')).status).toBe(404);
    expect((await call('GET', 'integrations(10)/mappings(1)')).status).toBe(404);
  });

  it('stores a constant column with its value and no source path', async () => {
    await setUpCustomers();
    const res = await call('POST', 'integrations(10)/fields', {
      fieldNo: 5,
      title: 'City',
      columnType: 'constant',
      constantValue: 'Oslo',
      sourcePath: 'ignored',
    });
    expect(res.body).toMatchObject({ columnType: 'constant', constantValue: 'Oslo', sourcePath: '' });
    const standard = await call('PATCH', 'integrations(10)/fields(5)', { columnType: 'standard', sourcePath: 'address.city' });
    expect(standard.body).toMatchObject({ columnType: 'standard', constantValue: null, sourcePath: 'address.city' });
  });

  it('refuses invalid fields with 400 and a duplicate number with 409', async () => {
    await setUpCustomers();
    const cases: [object, string][] = [
      [{ fieldNo: 3, title: 'City' }, 'sourcePath: a standard column says where its value sits'],
      [{ fieldNo: 3, title: 'City', columnType: 'constant' }, 'constantValue: a constant column needs the value'],
      [{ fieldNo: 3, title: '', sourcePath: 'city' }, 'title: must not be empty'],
      [{ fieldNo: -1, title: 'City', sourcePath: 'city' }, 'fieldNo: must be a whole number from 1'],
      [{ fieldNo: 3, title: 'City', sourcePath: 'lines[*].city' }, 'sourcePath: invalid path "lines[*].city"'],
      [{ fieldNo: 3, title: 'City', sourcePath: 'city', columnType: 'formula' }, 'columnType: "formula" is not allowed'],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', 'integrations(10)/fields', body);
      expect(res.status, message).toBe(400);
      expect(res.body.error.message).toContain(message);
    }
    expect((await call('POST', 'integrations(10)/fields', { fieldNo: 1, title: 'Again', sourcePath: 'no' })).status).toBe(409);
    expect((await call('POST', 'integrations(10)/fields', { fieldNo: 3, title: 'City', sourcePath: 'city', extra: 1 })).status).toBe(400);
    expect((await call('GET', 'integrations(10)/fields(x)')).status).toBe(404);
    expect((await call('PATCH', 'integrations(10)/fields(9)', { title: 'x' })).status).toBe(404);
  });
});

describe('integration mappings', () => {
  it('maps, lists, reads, changes and deletes mappings', async () => {
    await setUpCustomers();
    const created = await call('POST', 'integrations(10)/mappings', { fieldNo: 2, targetField: 'name' });
    expect(created).toMatchObject({ status: 201, body: { integrationSortingOrder: 10, fieldNo: 2, targetField: 'name', required: false } });
    expect(created.headers.location).toBe(`${API}/integrations(10)/mappings(2)`);
    expect((await call('GET', 'integrations(10)/mappings')).body.value).toEqual([
      { integrationSortingOrder: 10, fieldNo: 1, targetField: 'no', required: true },
      { integrationSortingOrder: 10, fieldNo: 2, targetField: 'name', required: false },
    ]);
    expect((await call('PATCH', 'integrations(10)/mappings(2)', { required: true })).body.required).toBe(true);
    expect((await call('GET', 'integrations(10)/mappings(2)')).body.required).toBe(true);
    expect((await call('DELETE', 'integrations(10)/mappings(2)')).status).toBe(204);
    expect((await call('GET', 'integrations(10)/mappings(2)')).status).toBe(404);
    expect((await call('GET', 'integrations(10)/fields(2)')).status).toBe(200);
  });

  it('refuses a mapping to an unknown target field with 400', async () => {
    await setUpCustomers();
    const res = await call('POST', 'integrations(10)/mappings', { fieldNo: 2, targetField: 'Name' });
    expect(res).toMatchObject({ status: 400, body: { error: { code: 'invalidRequest' } } });
    expect(res.body.error.message).toContain('targetField: table "customer" has no field "Name"; did you mean "name"?');
  });

  it('refuses a mapping of a field the integration does not have with 400', async () => {
    await setUpCustomers();
    const res = await call('POST', 'integrations(10)/mappings', { fieldNo: 7, targetField: 'city' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('fieldNo: integration 10 has no field 7');
  });

  it('refuses a second mapping of a field or of a target field with 409', async () => {
    await setUpCustomers();
    expect((await call('POST', 'integrations(10)/mappings', { fieldNo: 1, targetField: 'city' })).status).toBe(409);
    const taken = await call('POST', 'integrations(10)/mappings', { fieldNo: 2, targetField: 'no' });
    expect(taken).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
    expect(taken.body.error.message).toContain('"no" already receives field 1');
    await call('POST', 'integrations(10)/mappings', { fieldNo: 2, targetField: 'name' });
    expect((await call('PATCH', 'integrations(10)/mappings(2)', { targetField: 'no' })).status).toBe(409);
  });
});

describe('integrations with their fields and mappings in one call', () => {
  const fields = [
    { fieldNo: 1, title: 'No.', sourcePath: 'no' },
    { fieldNo: 2, title: 'Name', sourcePath: 'name' },
    { fieldNo: 3, title: 'City', sourcePath: 'address.city' },
  ];
  const mappings = [
    { fieldNo: 1, targetField: 'no', required: true },
    { fieldNo: 2, targetField: 'name' },
  ];
  const stored = {
    fields: fields.map((f) => ({ ...f, columnType: 'standard', constantValue: null })),
    mappings: mappings.map((m) => ({ required: false, ...m })),
  };

  it('creates an integration with inline fields and mappings, answering them as stored', async () => {
    await call('POST', 'targetTables', customer);
    const created = await call('POST', 'integrations', { ...integration, acceptBulkImportRequests: true, fields, mappings });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`${API}/integrations(10)`);
    expect(created.body).toMatchObject({ sortingOrder: 10, acceptBulkImportRequests: true, ...stored });
    expect((await call('GET', 'integrations(10)/fields')).body.value).toEqual(
      stored.fields.map((f) => ({ integrationSortingOrder: 10, ...f })),
    );
    expect((await call('GET', 'integrations(10)/mappings')).body.value).toEqual(
      stored.mappings.map((m) => ({ integrationSortingOrder: 10, ...m })),
    );
    // The plain entity, as before, when no list was sent.
    expect(Object.keys((await call('GET', 'integrations(10)')).body)).not.toContain('fields');
  });

  it('creates nothing when a field or mapping is wrong, with the message ifw apply gives', async () => {
    await call('POST', 'targetTables', customer);
    const cases: [object, string][] = [
      [{ fields: [{ fieldNo: 1, title: 'No.' }] }, 'fields[0].sourcePath: a standard column says where its value sits'],
      [{ fields, mappings: [{ fieldNo: 2, targetField: 'Name' }] }, 'mappings[0].targetField: table "customer" has no field "Name"'],
      [{ fields, mappings: [{ fieldNo: 7, targetField: 'city' }] }, 'mappings[0].fieldNo: integration 10 has no field 7'],
      [{ fields: [fields[0], fields[0]] }, 'fields[1].fieldNo: field 1 is listed twice (also [0])'],
      [{ fields, mappings: [...mappings, { fieldNo: 3, targetField: 'no' }] }, 'mappings[2].targetField: "no" already receives field 1'],
    ];
    for (const [lists, message] of cases) {
      const body = { ...integration, ...lists };
      const res = await call('POST', 'integrations', body);
      expect(res.status, message).toBe(400);
      expect(res.body.error).toEqual({ code: 'invalidRequest', message: expect.stringContaining(message) as unknown });
      const applied = await applyConfig(t.db, { integrations: [body] }, clock).catch((err: unknown) => err);
      expect(applied).toBeInstanceOf(AppError);
      expect((applied as AppError).message).toBe(`integrations[0].${res.body.error.message}`);
    }
    expect((await call('GET', 'integrations')).body.value).toEqual([]);
    const count = (table: string) => (t.db.sqlite.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    expect([count('ifw_integration_field'), count('ifw_integration_mapping')]).toEqual([0, 0]);
  });

  it('replaces the fields with PATCH, taking the mappings of fields left out with them', async () => {
    await call('POST', 'targetTables', customer);
    await call('POST', 'integrations', { ...integration, fields, mappings });
    const res = await call('PATCH', 'integrations(10)', {
      name: 'Customers (CRM)',
      fields: [fields[0], { fieldNo: 4, title: 'E-Mail', sourcePath: 'email' }],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Customers (CRM)', writeMode: 'insert' });
    expect(res.body.fields.map((f: { fieldNo: number }) => f.fieldNo)).toEqual([1, 4]);
    expect(res.body.mappings).toEqual([{ fieldNo: 1, targetField: 'no', required: true }]);
    expect((await call('GET', 'integrations(10)/mappings')).body.value).toHaveLength(1);
  });

  it('replaces the mappings with PATCH; a mapping must name a field the integration has', async () => {
    await call('POST', 'targetTables', customer);
    await call('POST', 'integrations', { ...integration, fields, mappings });
    const res = await call('PATCH', 'integrations(10)', { mappings: [{ fieldNo: 3, targetField: 'city' }, mappings[0]] });
    expect(res.status).toBe(200);
    expect(res.body.mappings).toEqual([
      { fieldNo: 3, targetField: 'city', required: false },
      { fieldNo: 1, targetField: 'no', required: true },
    ]);
    expect(res.body.fields).toHaveLength(3);
    expect((await call('GET', 'integrations(10)/mappings')).body.value.map((m: { fieldNo: number }) => m.fieldNo)).toEqual([1, 3]);

    const unknown = await call('PATCH', 'integrations(10)', { mappings: [{ fieldNo: 9, targetField: 'email' }] });
    expect(unknown).toMatchObject({ status: 400, body: { error: { code: 'invalidRequest' } } });
    expect(unknown.body.error.message).toBe('mappings[0].fieldNo: integration 10 has no field 9; create the field first');
    // Fields and mappings in one PATCH: the mapping may name a field the same body adds.
    const both = await call('PATCH', 'integrations(10)', {
      fields: [...fields, { fieldNo: 9, title: 'E-Mail', sourcePath: 'email' }],
      mappings: [mappings[0], { fieldNo: 9, targetField: 'email' }],
    });
    expect(both.status).toBe(200);
    expect(both.body.mappings.map((m: { targetField: string }) => m.targetField)).toEqual(['no', 'email']);
  });

  it('changes nothing when one part of a PATCH is refused', async () => {
    await call('POST', 'targetTables', customer);
    await call('POST', 'integrations', { ...integration, fields, mappings });
    const res = await call('PATCH', 'integrations(10)', {
      name: 'Renamed',
      fields: [fields[0]],
      mappings: [{ fieldNo: 2, targetField: 'name' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('mappings[0].fieldNo: integration 10 has no field 2; create the field first');
    expect((await call('GET', 'integrations(10)')).body.name).toBe('Customers');
    expect((await call('GET', 'integrations(10)/fields')).body.value).toHaveLength(3);
    expect((await call('GET', 'integrations(10)/mappings')).body.value).toHaveLength(2);
  });

  it('takes its own answer back as a PATCH and reports it unchanged', async () => {
    await call('POST', 'targetTables', customer);
    const created = (await call('POST', 'integrations', { ...integration, fields, mappings })).body;
    const again = await call('PATCH', 'integrations(10)', created);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...created, '@odata.context': `${API}/$metadata#integrations/$entity` });
  });

  it('creates the documented example of docs/integrations.md in one call', async () => {
    const doc = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/integrations.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### One call'));
    const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)![1]!) as Record<string, unknown>;
    await call('POST', 'targetTables', customer);
    const res = await call('POST', 'integrations', example);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ acceptBulkImportRequests: true, fields: example.fields, mappings: example.mappings });
  });
});

describe('the type of an integration', () => {
  it('is optional and defaults to file; restApi and file are kept as sent and nothing else is taken', async () => {
    await call('POST', 'targetTables', customer);
    const { type: _, ...untyped } = integration;
    expect((await call('POST', 'integrations', untyped)).body.type).toBe('file');
    expect((await call('PATCH', 'integrations(10)', { type: 'restApi' })).body.type).toBe('restApi');
    expect((await call('PATCH', 'integrations(10)', { name: 'Renamed' })).body.type).toBe('restApi');
    const refused = await call('PATCH', 'integrations(10)', { type: 'soap' });
    expect(refused.body.error.message).toBe('type: "soap" is not allowed; use one of restApi, file');
  });
});

describe('Accept Bulk Import Requests needs at least one mapping', () => {
  const refusal = (n: number) =>
    `acceptBulkImportRequests: integration ${n} has no mappings, so every bulk import request would be accepted and then fail; map at least one field (mappings) first, or leave acceptBulkImportRequests off`;

  it('refuses creating an integration that accepts bulk requests without mappings, by the API and by ifw apply alike', async () => {
    await call('POST', 'targetTables', customer);
    for (const lists of [{}, { fields: [{ fieldNo: 1, title: 'No.', sourcePath: 'no' }] }, { fields: [], mappings: [] }]) {
      const body = { ...integration, acceptBulkImportRequests: true, ...lists };
      expect(await call('POST', 'integrations', body)).toEqual({
        status: 400,
        body: { error: { code: 'invalidRequest', message: refusal(10) } },
        headers: expect.anything() as unknown,
      });
      const applied = await applyConfig(t.db, { integrations: [body] }, clock).catch((err: unknown) => err);
      expect((applied as AppError).message).toBe(`integrations[0].${refusal(10)}`);
    }
    expect((await call('GET', 'integrations')).body.value).toEqual([]);
  });

  it('refuses switching it on while the integration has no mappings, then takes it once one exists', async () => {
    await call('POST', 'targetTables', customer);
    await call('POST', 'integrations', integration);
    await call('POST', 'integrations(10)/fields', { fieldNo: 1, title: 'No.', sourcePath: 'no' });
    const refused = await call('PATCH', 'integrations(10)', { acceptBulkImportRequests: true });
    expect(refused).toMatchObject({ status: 400, body: { error: { code: 'invalidRequest', message: refusal(10) } } });
    expect((await call('GET', 'integrations(10)')).body.acceptBulkImportRequests).toBe(false);

    await call('POST', 'integrations(10)/mappings', { fieldNo: 1, targetField: 'no' });
    expect((await call('PATCH', 'integrations(10)', { acceptBulkImportRequests: true })).body.acceptBulkImportRequests).toBe(true);
  });

  it('refuses removing the last mapping while it is on: by DELETE of the mapping or its field, or by a PATCH list', async () => {
    await setUpCustomers();
    await call('PATCH', 'integrations(10)', { acceptBulkImportRequests: true });
    const mapping = await call('DELETE', 'integrations(10)/mappings(1)');
    expect(mapping).toMatchObject({ status: 400, body: { error: { code: 'invalidRequest' } } });
    expect(mapping.body.error.message).toBe(
      'Integration 10 accepts bulk import requests and the mapping of field 1 is its last mapping: without mappings every bulk import request would be accepted and then fail. Map another field first, or switch acceptBulkImportRequests off.',
    );
    const field = await call('DELETE', 'integrations(10)/fields(1)');
    expect(field.status).toBe(400);
    expect(field.body.error.message).toContain('Integration 10 accepts bulk import requests and field 1 holds its last mapping');
    expect(await call('PATCH', 'integrations(10)', { mappings: [] })).toMatchObject({
      status: 400,
      body: { error: { message: refusal(10) } },
    });
    expect((await call('PATCH', 'integrations(10)', { fields: [{ fieldNo: 2, title: 'Name', sourcePath: 'name' }] })).status).toBe(400);
    expect((await call('GET', 'integrations(10)/mappings')).body.value).toHaveLength(1);

    // Another mapping first, or the setting off: then the mapping can go.
    await call('POST', 'integrations(10)/mappings', { fieldNo: 2, targetField: 'name' });
    expect((await call('DELETE', 'integrations(10)/mappings(1)')).status).toBe(204);
    await call('PATCH', 'integrations(10)', { acceptBulkImportRequests: false });
    expect((await call('DELETE', 'integrations(10)/fields(2)')).status).toBe(204);
  });

  it('examples/customers.yaml, which npm start applies, still applies as written', async () => {
    const report = await applyConfigFile(t.db, path.resolve(import.meta.dirname, '../../examples/customers.yaml'), clock);
    expect(report.integrations).toEqual([{ sortingOrder: 10, name: 'Customers', result: 'created', changes: [] }]);
    expect((await call('GET', 'integrations(10)')).body.acceptBulkImportRequests).toBe(true);
  });
});
