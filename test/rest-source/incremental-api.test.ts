/**
 * Incremental endpoints through the API: the cursor field settings are saved and answered with the
 * bookmark; unknown template variables are refused naming the variable and the field; an
 * administrator sets and resets the bookmark with Microsoft.NAV.setCursor and resetCursor; an answer
 * sent back as it is (read-only properties included) changes nothing.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { manualClock } from '../../src/core/clock.js';
import { applyConfigFile } from '../../src/declarative-config/apply.js';
import { buildServer, type App } from '../../src/http/server.js';
import { findActiveRun } from '../../src/import-runs/queue-run.js';
import { cursorRoutes } from '../../src/rest-source/cursor-routes.js';
import { DEFAULT_OUTBOUND_POLICY } from '../../src/rest-source/outbound-policy.js';
import { restApiRoutes } from '../../src/rest-source/routes.js';
import { createTestAuth, type TestAuth } from '../helpers/auth.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { secretBoxFor } from '../helpers/secret-boxes.js';

const API = '/api/vendor/integrationFramework/v1.0';
const EXAMPLE = path.resolve(import.meta.dirname, '../../examples/customers.yaml');
const clock = manualClock('2026-11-26T12:00:00Z');
let t: TestDatabase;
let app: App;
let auth: TestAuth;

beforeEach(async () => {
  t = await openTestDatabase();
  await applyConfigFile(t.db, EXAMPLE, clock); // integration 10
  const box = secretBoxFor('incremental-api');
  auth = await createTestAuth(t.db.kysely);
  app = await buildServer({
    authenticator: auth.authenticator,
    logger: pino({ level: 'silent' }),
    bodyLimitBytes: 1 << 20,
    routes: [
      restApiRoutes({ db: t.db, clock, secrets: box, outbound: DEFAULT_OUTBOUND_POLICY, activeRunOf: findActiveRun }),
      cursorRoutes({ db: t.db, clock }),
    ],
  });
  expect((await call('POST', 'restApiConnections', { code: 'crm', baseUrl: 'https://api.example.com/v1' })).status).toBe(201);
});
afterEach(async () => {
  await app.close();
  auth.cleanup();
  await t.cleanup();
});

async function call(method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) {
  const res = await app.inject({
    headers: auth.headers,
    method,
    url: `${API}/${url}`,
    ...(body === undefined ? {} : { payload: body as object }),
  });
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json<Record<string, unknown>>() };
}

const incremental = {
  code: 'changes',
  connectionCode: 'crm',
  path: 'customers/changed-since/{{lastSuccessfulRun.startedAt|date}}',
  queryParameters: { updated_since: '{{cursor}}' },
  headers: { 'X-Since': '{{cursor|unix}}' },
  integrationSortingOrder: 10,
  cursorField: 'meta.updated_at',
  cursorFieldLookback: '5m',
};

describe('incremental endpoint settings', () => {
  it('saves the cursor field settings and answers them with the bookmark; an answer sent back changes nothing', async () => {
    const created = await call('POST', 'restApiEndpoints', incremental);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      cursorField: 'meta.updated_at',
      cursorFieldType: 'dateTime',
      cursorFieldInitialValue: null,
      cursorFieldLookback: '5m',
      cursorValue: null,
      cursorUpdatedAt: null,
      lastSuccessfulRunStartedAt: null,
    });
    const { '@odata.context': _context, ...answer } = created.body!;
    const patched = await call('PATCH', "restApiEndpoints('changes')", answer);
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual(created.body);
  });

  it.each([
    ['path', { path: 'customers/{{since}}' }, 'path: unknown template variable {{since}}'],
    [
      'a query parameter',
      { queryParameters: { since: '{{lastRun.startedAt}}' } },
      'queryParameters.since: unknown template variable {{lastRun.startedAt}}',
    ],
    ['a header', { headers: { 'X-Since': '{{cursor|epoch}}' } }, 'headers.X-Since: unknown format "epoch" in {{cursor|epoch}}'],
    [
      'the body',
      { method: 'POST', body: '{"after":"{{cursors}}"}' },
      'body: unknown template variable {{cursors}}; use {{lastSuccessfulRun.startedAt}} or {{cursor}}',
    ],
    ['{{cursor}} without a cursor field', { cursorField: null, cursorFieldLookback: null }, '{{cursor}} needs a cursor field'],
    [
      'a variable in a query parameter name',
      { queryParameters: { '{{cursor}}': 'x' } },
      'queryParameters.{{cursor}}: template variables are rendered in query parameter values, not in their names',
    ],
    ['a lookback that is no duration', { cursorFieldLookback: '5 minutes' }, 'cursorFieldLookback: "5 minutes" is not a duration'],
    [
      'an initial value of another type',
      { cursorFieldType: 'number', headers: {}, cursorFieldLookback: 5, cursorFieldInitialValue: 'soon' },
      'cursorFieldInitialValue: "soon" is not a number',
    ],
    ['an unknown type', { cursorFieldType: 'text' }, 'cursorFieldType: "text" is not allowed; use one of dateTime, number'],
    [
      'a lookback without a cursor field',
      { cursorField: null, queryParameters: {}, headers: {} },
      'cursorFieldLookback: is used only with a cursorField',
    ],
  ])('refuses %s with a 400 naming the field', async (_what, change, message) => {
    const answer = await call('POST', 'restApiEndpoints', { ...incremental, ...change });
    expect(answer.status).toBe(400);
    expect((answer.body as { error: { code: string; message: string } }).error).toMatchObject({ code: 'invalidRequest' });
    expect((answer.body as { error: { message: string } }).error.message).toContain(message);
    expect((await call('GET', "restApiEndpoints('changes')")).status).toBe(404);
  });
});

describe('ifw apply', () => {
  it('declares an incremental endpoint from YAML (a number lookback as a YAML number), idempotently', async () => {
    const file = path.join(t.dir, 'incremental.yaml');
    fs.writeFileSync(
      file,
      [
        'restApiEndpoints:',
        '  - code: by-id',
        '    connectionCode: crm',
        '    path: "customers?after={{cursor}}"',
        '    headers: { X-Since: "{{lastSuccessfulRun.startedAt|unix}}" }',
        '    integrationSortingOrder: 10',
        '    cursorField: id',
        '    cursorFieldType: number',
        '    cursorFieldInitialValue: 100',
        '    cursorFieldLookback: 5',
        '',
      ].join('\n'),
    );
    expect((await applyConfigFile(t.db, file, clock)).restApiEndpoints).toEqual([{ code: 'by-id', result: 'created', changes: [] }]);
    expect((await call('GET', "restApiEndpoints('by-id')")).body).toMatchObject({
      cursorField: 'id',
      cursorFieldType: 'number',
      cursorFieldInitialValue: '100',
      cursorFieldLookback: '5',
    });
    expect((await applyConfigFile(t.db, file, clock)).restApiEndpoints).toEqual([{ code: 'by-id', result: 'unchanged', changes: [] }]);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('{{cursor}}', '{{cursor|date}}'));
    await expect(applyConfigFile(t.db, file, clock)).rejects.toThrow(
      'restApiEndpoints[0].path: {{cursor|date}}: a number cursor is sent as it is; formats (|iso, |date, |unix) are for date-time cursors',
    );
  });
});

describe('setCursor and resetCursor', () => {
  it('sets the bookmark (normalised), resets it, and refuses a value of another type or an endpoint without a cursor field', async () => {
    await call('POST', 'restApiEndpoints', incremental);
    clock.advance(1000);
    const set = await call('POST', "restApiEndpoints('changes')/Microsoft.NAV.setCursor", { value: '2026-11-20T10:00:00+01:00' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ code: 'changes', cursorValue: '2026-11-20T09:00:00Z', cursorUpdatedAt: '2026-11-26T12:00:01.000Z' });
    expect((await call('GET', "restApiEndpoints('changes')")).body).toMatchObject({ cursorValue: '2026-11-20T09:00:00Z' });
    expect((await call('GET', 'restApiEndpoints')).body!.value).toMatchObject([{ code: 'changes', cursorValue: '2026-11-20T09:00:00Z' }]);

    const bad = await call('POST', "restApiEndpoints('changes')/Microsoft.NAV.setCursor", { value: 'next week' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      error: { code: 'invalidRequest', message: expect.stringContaining('value: "next week" is not a date-time') },
    });

    const reset = await call('POST', "restApiEndpoints('changes')/Microsoft.NAV.resetCursor");
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ cursorValue: null });

    // Changing the cursor field clears the bookmark: it followed another field.
    await call('POST', "restApiEndpoints('changes')/Microsoft.NAV.setCursor", { value: '2026-11-20' });
    expect((await call('PATCH', "restApiEndpoints('changes')", { cursorField: 'updated' })).body).toMatchObject({ cursorValue: null });

    await call('POST', 'restApiEndpoints', { code: 'plain', connectionCode: 'crm', path: 'customers', integrationSortingOrder: 10 });
    const none = await call('POST', "restApiEndpoints('plain')/Microsoft.NAV.resetCursor");
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ error: { message: expect.stringContaining("'plain' has no cursorField") } });
    expect((await call('POST', "restApiEndpoints('missing')/Microsoft.NAV.setCursor", { value: '1' })).status).toBe(404);
  });
});
