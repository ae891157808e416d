import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { applyConfigFile } from '../../src/declarative-config/apply.js';
import { restApiRoutes } from '../../src/rest-source/routes.js';
import { buildServer, type App } from '../../src/http/server.js';
import { createTestAuth, type TestAuth } from '../helpers/auth.js';
import { findActiveRun, queueRun } from '../../src/import-runs/queue-run.js';
import { updateIntegration } from '../../src/integrations/service.js';
import { getEntry } from '../../src/job-queue/entries.js';
import { createSecretBox, type SecretBox } from '../../src/rest-source/secrets.js';
import { DEFAULT_OUTBOUND_POLICY } from '../../src/rest-source/outbound-policy.js';
import { loadConnection } from '../../src/rest-source/store.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { secretBoxFor } from '../helpers/secret-boxes.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';

const API = '/api/vendor/integrationFramework/v1.0';
const EXAMPLE = path.resolve(import.meta.dirname, '../../examples/customers.yaml');
const clock = manualClock('2025-01-01T00:00:00Z');
let t: TestDatabase;
let box: SecretBox;
let app: App;
let auth: TestAuth;

beforeEach(async () => {
  t = await openTestDatabase();
  await applyConfigFile(t.db, EXAMPLE, clock); // integration 10
  box = secretBoxFor('routes-test-key');
  auth = await createTestAuth(t.db.kysely);
  app = await buildServer({
    authenticator: auth.authenticator,
    logger: pino({ level: 'silent' }),
    bodyLimitBytes: 1 << 20,
    routes: [restApiRoutes({ db: t.db, clock, secrets: box, outbound: DEFAULT_OUTBOUND_POLICY, activeRunOf: findActiveRun })],
  });
});
afterEach(async () => {
  await app.close();
  auth.cleanup();
  await t.cleanup();
});

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
async function call(method: Method, url: string, body?: unknown) {
  const res = await app.inject({
    headers: auth.headers,
    method,
    url: `${API}/${url}`,
    ...(body !== undefined ? { payload: body as object } : {}),
  });
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json(), text: res.body, headers: res.headers };
}

const PASSWORD = 'pa55-w0rd-never-shown';
const crm = { code: 'crm', baseUrl: 'https://api.example.com/v1', authType: 'basic', username: 'svc', password: PASSWORD };
const customers = {
  code: 'crm.customers',
  connectionCode: 'crm',
  path: 'customers',
  integrationSortingOrder: 10,
  paginationType: 'pageNumber',
  pageParameterName: 'page',
  pageSize: 100,
  responseDataPath: 'data',
};
const storedSecrets = () =>
  (t.db.sqlite.prepare('select secrets from ifw_rest_connection where code = ?').get('crm') as { secrets: string | null }).secrets;

describe('restApiConnections', () => {
  it('creates a connection; no answer ever carries a secret, only …IsSet flags', async () => {
    const created = await call('POST', 'restApiConnections', crm);
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`${API}/restApiConnections('crm')`);
    expect(created.body).toEqual({
      '@odata.context': `${API}/$metadata#restApiConnections/$entity`,
      code: 'crm',
      baseUrl: 'https://api.example.com/v1',
      authType: 'basic',
      username: 'svc',
      passwordIsSet: true,
      tokenIsSet: false,
      apiKeyName: null,
      apiKeyIn: null,
      apiKeyIsSet: false,
      tokenUrl: null,
      clientId: null,
      clientSecretIsSet: false,
      scope: null,
      headers: {},
      queryParameters: {},
      timeoutMs: 30000,
      maxRetries: 3,
      initialDelayMs: 500,
    });
    const read = await call('GET', "restApiConnections('crm')");
    const list = await call('GET', 'restApiConnections');
    const patched = await call('PATCH', "restApiConnections('crm')", { timeoutMs: 5000 });
    for (const answer of [created, read, list, patched]) {
      expect(answer.text).not.toContain(PASSWORD);
      expect(answer.text).not.toContain('"password"');
    }
    expect(list.body.value).toHaveLength(1);
    expect(patched.body).toMatchObject({ timeoutMs: 5000, passwordIsSet: true });
  });

  it('stores the secrets sealed, never as plain text', async () => {
    await call('POST', 'restApiConnections', crm);
    const sealed = storedSecrets();
    expect(sealed).toMatch(/^v1:/);
    expect(sealed).not.toContain(PASSWORD);
    expect(JSON.stringify(t.db.sqlite.prepare('select * from ifw_rest_connection').all())).not.toContain(PASSWORD);
    expect((await loadConnection(t.db, 'crm', box)).auth).toEqual({ type: 'basic', username: 'svc', password: PASSWORD });
  });

  it('keeps a secret a PATCH leaves out, replaces one it sends, and refuses to clear a required one', async () => {
    await call('POST', 'restApiConnections', crm);
    expect((await call('PATCH', "restApiConnections('crm')", { username: 'other' })).status).toBe(200);
    expect((await loadConnection(t.db, 'crm', box)).auth).toEqual({ type: 'basic', username: 'other', password: PASSWORD });

    expect((await call('PATCH', "restApiConnections('crm')", { password: 'new' })).body.passwordIsSet).toBe(true);
    expect((await loadConnection(t.db, 'crm', box)).auth).toMatchObject({ password: 'new' });

    const cleared = await call('PATCH', "restApiConnections('crm')", { password: null });
    expect(cleared.status).toBe(400);
    expect(cleared.body.error.message).toBe('password: cannot be cleared: basic authentication needs a password (it may be empty: "")');
  });

  it('switches the auth type, dropping the old settings and secrets', async () => {
    await call('POST', 'restApiConnections', crm);
    const refused = await call('PATCH', "restApiConnections('crm')", { authType: 'bearer' });
    expect(refused).toMatchObject({
      status: 400,
      body: { error: { code: 'invalidRequest', message: 'token: bearer authentication needs a token' } },
    });
    const switched = await call('PATCH', "restApiConnections('crm')", { authType: 'bearer', token: 'tok' });
    expect(switched.body).toMatchObject({ authType: 'bearer', username: null, passwordIsSet: false, tokenIsSet: true });
    expect((await loadConnection(t.db, 'crm', box)).auth).toEqual({ type: 'bearer', token: 'tok' });
    const none = await call('PATCH', "restApiConnections('crm')", { authType: 'none' });
    expect(none.body).toMatchObject({ authType: 'none', tokenIsSet: false });
    expect(storedSecrets()).toBeNull();
  });

  it('re-enters secrets sealed under a lost key by sending them again', async () => {
    await call('POST', 'restApiConnections', crm);
    const otherKey = createSecretBox({ secretKey: 'a different key', dataDir: t.dir });
    const other = await buildServer({
      authenticator: auth.authenticator,
      logger: pino({ level: 'silent' }),
      bodyLimitBytes: 1 << 20,
      routes: [restApiRoutes({ db: t.db, clock, secrets: otherKey, outbound: DEFAULT_OUTBOUND_POLICY, activeRunOf: findActiveRun })],
    });
    try {
      const kept = await other.inject({
        headers: auth.headers,
        method: 'PATCH',
        url: `${API}/restApiConnections('crm')`,
        payload: { timeoutMs: 1000 },
      });
      expect(kept.statusCode).toBe(500);
      expect(kept.json().error.message).toContain(
        'stored secrets cannot be decrypted: IFW_SECRET_KEY differs from the key they were saved with',
      );
      const resent = await other.inject({
        headers: auth.headers,
        method: 'PATCH',
        url: `${API}/restApiConnections('crm')`,
        payload: { password: 'again' },
      });
      expect(resent.statusCode).toBe(200);
      expect((await loadConnection(t.db, 'crm', otherKey)).auth).toMatchObject({ password: 'again' });
    } finally {
      await other.close();
    }
  });

  it('answers 400 for invalid settings, naming the property', async () => {
    const ftp = await call('POST', 'restApiConnections', { ...crm, baseUrl: 'ftp://files.example.com' });
    expect(ftp).toMatchObject({
      status: 400,
      body: { error: { code: 'invalidRequest', message: 'baseUrl: must be an http or https URL, not ftp' } },
    });
    const userinfo = await call('POST', 'restApiConnections', { ...crm, baseUrl: 'https://me:pw@api.example.com' });
    expect(userinfo.body.error.message).toBe(
      'baseUrl: must not carry credentials (user:password@); set them in the authentication settings',
    );
    const unknown = await call('POST', 'restApiConnections', { ...crm, secret: 'x' });
    expect(unknown).toMatchObject({ status: 400, body: { error: { code: 'invalidRequest' } } });
    expect(unknown.body.error.message).toContain('unknown property "secret"');
  });

  it('refuses a second connection with the same code and a change of code', async () => {
    await call('POST', 'restApiConnections', crm);
    expect(await call('POST', 'restApiConnections', crm)).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
    expect((await call('PATCH', "restApiConnections('crm')", { code: 'crm2' })).body.error.message).toBe(
      'code: cannot change from "crm" to "crm2"; create a new one instead',
    );
  });

  it('answers 404 for unknown codes and malformed keys', async () => {
    for (const [method, url] of [
      ['GET', "restApiConnections('nope')"],
      ['PATCH', "restApiConnections('nope')"],
      ['DELETE', "restApiConnections('nope')"],
      ['POST', "restApiConnections('nope')/Microsoft.NAV.testConnection"],
      ['GET', 'restApiConnections()'],
    ] as const) {
      const res = await call(method, url, method === 'PATCH' ? {} : undefined);
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(res.body.error.code).toBe('notFound');
    }
  });

  it('refuses to delete a connection its endpoints use, and deletes it once they are gone', async () => {
    await call('POST', 'restApiConnections', crm);
    await call('POST', 'restApiEndpoints', customers);
    const refused = await call('DELETE', "restApiConnections('crm')");
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
    expect(refused.body.error.message).toBe(
      "REST API connection 'crm' is used by endpoint(s) 'crm.customers'; delete them or move them to another connection first.",
    );
    expect((await call('DELETE', "restApiEndpoints('crm.customers')")).status).toBe(204);
    expect((await call('DELETE', "restApiConnections('crm')")).status).toBe(204);
    expect((await call('GET', "restApiConnections('crm')")).status).toBe(404);
  });

  it('refuses a connection change that would break its endpoints', async () => {
    await call('POST', 'restApiConnections', crm);
    await call('POST', 'restApiEndpoints', { ...customers, path: 'https://api.example.com/v2/customers' });
    const moved = await call('PATCH', "restApiConnections('crm')", { baseUrl: 'https://crm.example.org/v1', password: PASSWORD });
    expect(moved.status).toBe(409);
    expect(moved.body.error.message).toContain(
      "REST API endpoint 'crm.customers' would no longer be valid with this connection: path: is on https://api.example.com",
    );
  });
});

describe('restApiEndpoints', () => {
  beforeEach(async () => {
    expect((await call('POST', 'restApiConnections', crm)).status).toBe(201);
  });

  it('creates, reads, lists and deletes an endpoint', async () => {
    const created = await call('POST', 'restApiEndpoints', customers);
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`${API}/restApiEndpoints('crm.customers')`);
    expect(created.body).toEqual({
      '@odata.context': `${API}/$metadata#restApiEndpoints/$entity`,
      code: 'crm.customers',
      connectionCode: 'crm',
      path: 'customers',
      method: 'GET',
      headers: {},
      queryParameters: {},
      body: null,
      integrationSortingOrder: 10,
      paginationType: 'pageNumber',
      nextLinkJsonPath: null,
      pageParameterName: 'page',
      offsetParameterName: null,
      limitParameterName: null,
      pageSize: 100,
      maxPages: 100,
      responseDataPath: 'data',
      allowCrossOrigin: false,
      parametersIn: 'query',
      hasMoreJsonPath: null,
      totalCountJsonPath: null,
      stopOnEmptyPage: false,
      cursorFrom: null,
      cursorJsonPath: null,
      cursorResponseHeader: null,
      cursorParameterName: null,
      cursorInitialValue: null,
      scheduleSeconds: null,
      responseActions: [],
      sessionCookies: false,
      cursorField: null,
      cursorFieldType: null,
      cursorFieldInitialValue: null,
      cursorFieldLookback: null,
      cursorValue: null,
      cursorUpdatedAt: null,
      lastSuccessfulRunStartedAt: null,
      recordsFoundBy: `Response Data Path "data" (the integration's records path is blank)`,
    });
    expect((await call('GET', "restApiEndpoints('crm.customers')")).body).toEqual(created.body);
    expect((await call('GET', 'restApiEndpoints')).body.value).toHaveLength(1);
    expect((await call('DELETE', "restApiEndpoints('crm.customers')")).status).toBe(204);
    expect((await call('GET', "restApiEndpoints('crm.customers')")).status).toBe(404);
  });

  it('keeps response actions and session cookies, answers them, and refuses actions the rules do not allow, changing nothing', async () => {
    const actions = [
      { status: 410, action: 'skip' },
      { status: 404, action: 'stop' },
    ];
    const created = await call('POST', 'restApiEndpoints', { ...customers, responseActions: actions, sessionCookies: true });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      responseActions: [
        { status: 404, action: 'stop' },
        { status: 410, action: 'skip' },
      ],
      sessionCookies: true,
    });
    const refusals: [unknown, string][] = [
      [[{ status: 401, action: 'stop' }], 'responseActions: 401 Unauthorized cannot stop or skip'],
      [[{ status: 503, action: 'skip' }], 'responseActions: 503 Service Unavailable cannot stop or skip'],
      [
        [
          { status: 404, action: 'stop' },
          { status: 404, action: 'stop' },
        ],
        'responseActions: 404 is listed twice',
      ],
      [[{ status: 404, action: 'ignore' }], 'responseActions: the action of 404 must be stop or skip, got "ignore"'],
    ];
    for (const [responseActions, message] of refusals) {
      const res = await call('PATCH', "restApiEndpoints('crm.customers')", { responseActions });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(message);
    }
    // Switching to Next Link keeps the actions, so its skip is refused until it goes.
    const toNextLink = await call('PATCH', "restApiEndpoints('crm.customers')", { paginationType: 'nextLink', nextLinkJsonPath: 'next' });
    expect(toNextLink.status).toBe(400);
    expect(toNextLink.body.error.message).toContain(
      'responseActions: 410 skip: Next Link pagination finds the next page in the page itself',
    );
    expect((await call('GET', "restApiEndpoints('crm.customers')")).body).toEqual({ ...created.body });
    const cleared = await call('PATCH', "restApiEndpoints('crm.customers')", { responseActions: null, sessionCookies: false });
    expect(cleared.body).toMatchObject({ responseActions: [], sessionCookies: false });
  });

  it('refuses Page Number without Page Size, Page Parameter Name or a Response Data Path that is set', async () => {
    const unset =
      'responseDataPath: Page Number pagination needs a Response Data Path to count records: the path of the record array (e.g. "data" or "value"), ' +
      `or "" (blank, also "$") when the records are the response root or where the integration's records path says`;
    const cases: [Record<string, unknown>, string][] = [
      [{ pageSize: undefined }, 'pageSize: Page Number pagination needs a Page Size'],
      [{ pageParameterName: undefined }, 'pageParameterName: Page Number pagination needs a Page Parameter Name'],
      [{ responseDataPath: undefined }, unset],
      [{ responseDataPath: null }, unset],
    ];
    for (const [change, message] of cases) {
      const res = await call('POST', 'restApiEndpoints', { ...customers, ...change });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalidRequest');
      expect(res.body.error.message).toContain(message);
    }
  });

  it('refuses an unknown connection or integration', async () => {
    expect((await call('POST', 'restApiEndpoints', { ...customers, connectionCode: 'nope' })).body.error.message).toBe(
      'connectionCode: no REST API connection "nope"; create it first',
    );
    expect((await call('POST', 'restApiEndpoints', { ...customers, integrationSortingOrder: 99 })).body.error.message).toBe(
      'integrationSortingOrder: no integration with sortingOrder 99; create it first',
    );
  });

  it('accepts a blank Response Data Path as the root array for every type ("$" too), and tells it from one not set', async () => {
    const byType: Record<string, Record<string, unknown>> = {
      none: { paginationType: 'none' },
      nextLink: { paginationType: 'nextLink', nextLinkJsonPath: 'next' },
      pageNumber: { paginationType: 'pageNumber', pageParameterName: 'page', pageSize: 100 },
      offsetLimit: { paginationType: 'offsetLimit', offsetParameterName: 'offset', limitParameterName: 'limit', pageSize: 100 },
    };
    for (const [type, settings] of Object.entries(byType)) {
      for (const blank of ['', '$']) {
        const code = `${type}${blank === '' ? '.blank' : '.dollar'}`;
        const created = await call('POST', 'restApiEndpoints', {
          code,
          connectionCode: 'crm',
          path: 'x',
          integrationSortingOrder: 10,
          ...settings,
          responseDataPath: blank,
        });
        expect(created.status, code).toBe(201);
        expect(created.body.responseDataPath, code).toBe(blank);
        expect(created.body.recordsFoundBy, code).toBe(
          "the response root (the integration's records path and Response Data Path are blank)",
        );
        // What GET answers, PATCH takes back.
        const { status } = await call('PATCH', `restApiEndpoints('${code}')`, (await call('GET', `restApiEndpoints('${code}')`)).body);
        expect(status, code).toBe(200);
      }
    }
    // Not set: None and Next Link read it as blank; Page Number and Offset/Limit refuse it, also when the type changes.
    const unset = await call('POST', 'restApiEndpoints', { code: 'unset', connectionCode: 'crm', path: 'x', integrationSortingOrder: 10 });
    expect(unset.body).toMatchObject({ paginationType: 'none', responseDataPath: null });
    const toPages = await call('PATCH', "restApiEndpoints('unset')", byType.pageNumber);
    expect(toPages).toMatchObject({ status: 400, body: { error: { code: 'invalidRequest' } } });
    expect(toPages.body.error.message).toMatch(/^responseDataPath: Page Number pagination needs a Response Data Path to count records/);
    const blanked = await call('PATCH', "restApiEndpoints('unset')", { ...byType.pageNumber, responseDataPath: '' });
    expect(blanked.body).toMatchObject({ paginationType: 'pageNumber', responseDataPath: '' });
    expect((await call('PATCH', "restApiEndpoints('unset')", { responseDataPath: null })).status).toBe(400);
  });

  it('keeps the settings of the other pagination types when the type changes, and uses them when it changes back', async () => {
    const url = "restApiEndpoints('crm.customers')";
    const link = { paginationType: 'nextLink', nextLinkJsonPath: '@odata.nextLink', allowCrossOrigin: true, responseDataPath: 'value' };
    expect((await call('POST', 'restApiEndpoints', { ...customers, pageParameterName: undefined, ...link })).status).toBe(201);

    // Spec 7: "set the type temporarily".
    const none = await call('PATCH', url, { paginationType: 'none' });
    expect(none.body).toMatchObject({ paginationType: 'none', nextLinkJsonPath: '@odata.nextLink', allowCrossOrigin: true });
    const stored = t.db.sqlite.prepare('select pagination, pagination_kept from ifw_rest_endpoint where code = ?');
    expect(stored.get('crm.customers')).toEqual({
      pagination: JSON.stringify({ type: 'none', maxPages: 100, pageSize: 100, responseDataPath: 'value' }),
      pagination_kept: JSON.stringify({ nextLinkJsonPath: '@odata.nextLink', allowCrossOrigin: true }),
    });
    // What GET answers, PATCH takes back: the kept values are sent unchanged.
    const roundTrip = await call('PATCH', url, { ...(await call('GET', url)).body, maxPages: 3 });
    expect(roundTrip).toMatchObject({ status: 200, body: { paginationType: 'none', maxPages: 3, nextLinkJsonPath: '@odata.nextLink' } });
    // A new value for a type not in use is a forgotten or misspelt paginationType.
    const refused = await call('PATCH', url, { nextLinkJsonPath: 'links.next' });
    expect(refused).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 'invalidRequest',
          message:
            'nextLinkJsonPath: only Next Link pagination uses nextLinkJsonPath; paginationType is none (its kept value is "@odata.nextLink": send that unchanged, or null to drop it)',
        },
      },
    });
    const back = await call('PATCH', url, { paginationType: 'nextLink' });
    expect(back.body).toMatchObject({
      paginationType: 'nextLink',
      nextLinkJsonPath: '@odata.nextLink',
      allowCrossOrigin: true,
      maxPages: 3,
    });
    expect(stored.get('crm.customers')).toMatchObject({ pagination_kept: '{}' });

    // null (false) drops a kept setting; a new endpoint has none to repeat.
    await call('PATCH', url, { paginationType: 'pageNumber', pageParameterName: 'page' });
    const dropped = await call('PATCH', url, { nextLinkJsonPath: null, allowCrossOrigin: false });
    expect(dropped.body).toMatchObject({ paginationType: 'pageNumber', nextLinkJsonPath: null, allowCrossOrigin: false });
    expect((await call('PATCH', url, { paginationType: 'nextLink' })).body.error.message).toContain(
      'nextLinkJsonPath: Next Link pagination needs a Next Link JSON Path',
    );
    const forgotten = await call('POST', 'restApiEndpoints', { ...customers, code: 'forgotten', nextLinkJsonPath: 'next' });
    expect(forgotten.body.error.message).toBe(
      'nextLinkJsonPath: only Next Link pagination uses nextLinkJsonPath; paginationType is pageNumber',
    );
  });

  it('switches the pagination type on PATCH, keeping the settings of the old type', async () => {
    await call('POST', 'restApiEndpoints', customers);
    const refused = await call('PATCH', "restApiEndpoints('crm.customers')", { paginationType: 'nextLink' });
    expect(refused.body.error.message).toContain('nextLinkJsonPath: Next Link pagination needs a Next Link JSON Path');
    const next = await call('PATCH', "restApiEndpoints('crm.customers')", {
      paginationType: 'nextLink',
      nextLinkJsonPath: '@odata.nextLink',
      responseDataPath: 'value',
    });
    expect(next.body).toMatchObject({
      paginationType: 'nextLink',
      nextLinkJsonPath: '@odata.nextLink',
      pageParameterName: 'page',
      pageSize: 100,
      responseDataPath: 'value',
    });
    const offset = await call('PATCH', "restApiEndpoints('crm.customers')", {
      paginationType: 'offsetLimit',
      offsetParameterName: '$skip',
      limitParameterName: '$top',
    });
    expect(offset.body).toMatchObject({
      paginationType: 'offsetLimit',
      nextLinkJsonPath: '@odata.nextLink',
      pageParameterName: 'page',
      offsetParameterName: '$skip',
      limitParameterName: '$top',
    });
    const post = await call('PATCH', "restApiEndpoints('crm.customers')", { method: 'POST', body: '{"active":true}' });
    expect(post.body).toMatchObject({ method: 'POST', body: '{"active":true}' });
    expect((await call('PATCH', "restApiEndpoints('crm.customers')", { method: 'GET' })).body).toMatchObject({ method: 'GET', body: null });
  });

  it('keeps the job queue entry of a schedule in step', async () => {
    await call('POST', 'restApiEndpoints', { ...customers, scheduleSeconds: 900 });
    expect(await getEntry(t.db, 'endpoint:crm.customers')).toMatchObject({
      kind: 'endpointImport',
      description: 'Import from REST API endpoint crm.customers',
      status: 'Ready',
      recurrenceSeconds: 900,
      nextRunAt: '2025-01-01T00:15:00.000Z',
    });
    await call('PATCH', "restApiEndpoints('crm.customers')", { scheduleSeconds: 600 });
    expect((await getEntry(t.db, 'endpoint:crm.customers'))?.recurrenceSeconds).toBe(600);
    await call('PATCH', "restApiEndpoints('crm.customers')", { scheduleSeconds: null });
    expect(await getEntry(t.db, 'endpoint:crm.customers')).toBeUndefined();
    await call('PATCH', "restApiEndpoints('crm.customers')", { scheduleSeconds: 3600 });
    await call('DELETE', "restApiEndpoints('crm.customers')");
    expect(await getEntry(t.db, 'endpoint:crm.customers')).toBeUndefined();
  });

  it('refuses to delete an endpoint while an import run of it is in progress', async () => {
    await call('POST', 'restApiEndpoints', customers);
    const run = await queueRun(t.db, { endpointCode: 'crm.customers', integrationSortingOrder: 10, trigger: 'manual', now: clock() });
    const refused = await call('DELETE', "restApiEndpoints('crm.customers')");
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
    expect(refused.body.error.message).toBe(`REST API endpoint 'crm.customers' has an import run Queued (${run.runId}); let it end first.`);
  });

  it('answers the query parameters as queryParameters and still takes their former name query, not both', async () => {
    expect((await call('POST', 'restApiConnections', { ...crm, code: 'crm2', queryParameters: { tenant: 'a' } })).body).toMatchObject({
      queryParameters: { tenant: 'a' },
    });
    const created = await call('POST', 'restApiEndpoints', { ...customers, query: { sort: 'id' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ queryParameters: { sort: 'id' } });
    expect(created.body).not.toHaveProperty('query');
    // A PATCH under either name replaces them.
    const patched = await call('PATCH', "restApiEndpoints('crm.customers')", { query: { sort: 'name' } });
    expect(patched.body).toMatchObject({ queryParameters: { sort: 'name' } });
    const renamed = await call('PATCH', "restApiEndpoints('crm.customers')", { queryParameters: {} });
    expect(renamed.body).toMatchObject({ queryParameters: {} });
    const both = await call('PATCH', "restApiEndpoints('crm.customers')", { query: { a: '1' }, queryParameters: { a: '1' } });
    expect(both.status).toBe(400);
    expect(both.body).toEqual({
      error: { code: 'invalidRequest', message: 'query: is the former name of queryParameters; send one of them, not both' },
    });
    // The API key clash names the property the caller used.
    const keyed = {
      ...crm,
      code: 'keyed',
      authType: 'apiKey',
      username: undefined,
      password: undefined,
      apiKeyName: 'k',
      apiKeyIn: 'query',
      apiKey: 'v',
    };
    const clash = await call('POST', 'restApiConnections', { ...keyed, queryParameters: { k: '1' } });
    expect(clash.body.error.message).toBe('queryParameters.k: the API key is sent in query parameter k; remove it from queryParameters');
  });

  it('answers 404 for unknown codes', async () => {
    for (const [method, url] of [
      ['GET', "restApiEndpoints('nope')"],
      ['PATCH', "restApiEndpoints('nope')"],
      ['DELETE', "restApiEndpoints('nope')"],
      ['POST', "restApiEndpoints('nope')/Microsoft.NAV.previewFirstPage"],
    ] as const) {
      expect((await call(method, url, method === 'PATCH' ? {} : undefined)).status, `${method} ${url}`).toBe(404);
    }
  });
});

describe('probes', () => {
  let server: PagingServer;
  beforeAll(async () => {
    server = await startPagingServer({ records: 25, pageSize: 10 });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => server.reset());

  const TOKEN = 'bearer-token-never-shown';
  const local = () => ({ code: 'local', baseUrl: server.origin, authType: 'bearer', token: TOKEN, maxRetries: 0 });

  it('tests a saved connection: credentials are sent, never shown', async () => {
    await call('POST', 'restApiConnections', local());
    const res = await call('POST', "restApiConnections('local')/Microsoft.NAV.testConnection");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, status: 200, url: `${server.origin}/` });
    expect(res.text).not.toContain(TOKEN);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('tests a connection that is not saved, validated like one that is', async () => {
    const { code: _code, ...unsaved } = local();
    const ok = await call('POST', 'restApiConnections/Microsoft.NAV.testConnection', {
      ...unsaved,
      baseUrl: `${server.origin}/status/401`,
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ ok: false, status: 401 });
    expect(ok.body.message).toContain('check the credentials');
    const invalid = await call('POST', 'restApiConnections/Microsoft.NAV.testConnection', { ...unsaved, token: undefined });
    expect(invalid).toMatchObject({
      status: 400,
      body: { error: { code: 'invalidRequest', message: 'token: bearer authentication needs a token' } },
    });
    expect((await call('GET', 'restApiConnections')).body.value).toEqual([]);
  });

  it('previews the first page of a saved endpoint and what pagination would do next', async () => {
    await call('POST', 'restApiConnections', local());
    await call('POST', 'restApiEndpoints', { ...customers, code: 'pages', connectionCode: 'local', path: '/page-number', pageSize: 10 });
    const res = await call('POST', "restApiEndpoints('pages')/Microsoft.NAV.previewFirstPage");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      ok: true,
      status: 200,
      url: `${server.origin}/page-number?page=1`,
      recordCount: 10,
      next: { kind: 'next', url: `${server.origin}/page-number?page=2` },
    });
    expect(res.body.records[0]).toEqual({ id: 1, name: 'Record 1' });
    expect(res.text).not.toContain(TOKEN);
    expect(server.requests).toHaveLength(1);
  });

  it("previews what the endpoint's integration makes of the first records, found where a run finds them", async () => {
    await call('POST', 'restApiConnections', local());
    const odata = { code: 'odata', connectionCode: 'local', path: '/odata/Customers', integrationSortingOrder: 10 };
    await call('POST', 'restApiEndpoints', { ...odata, paginationType: 'nextLink', nextLinkJsonPath: '@odata.nextLink' });
    const preview = () => call('POST', "restApiEndpoints('odata')/Microsoft.NAV.previewFirstPage");

    // Both paths blank and the records under "value": a run fails on page 1, and the preview says so in the run's words.
    const blank = await preview();
    expect(blank.body).toMatchObject({ ok: false, error: { pageNo: 1, status: 200, url: `${server.origin}/odata/Customers` } });
    expect(blank.body.error.message).toBe(
      `page 1 (GET ${server.origin}/odata/Customers): the integration's records path and the endpoint's Response Data Path are both blank, ` +
        'so the response root must be the record array, but it is an object with properties "@odata.context", "value", "@odata.nextLink"; ' +
        'set either of them to the path of the records',
    );

    // The integration's records path says where they are: the preview finds them there, as the run does.
    await updateIntegration(t.db, 10, { recordsPath: 'value' }, clock);
    const foundBy = `the integration's records path "value" (Response Data Path is blank)`;
    expect((await call('GET', "restApiEndpoints('odata')")).body.recordsFoundBy).toBe(foundBy);
    const found = await preview();
    expect(found.body).toMatchObject({ ok: true, recordsFoundBy: foundBy, recordCount: 10, next: { kind: 'next' } });
    expect(found.body.records).toHaveLength(5);
    // Integration 10 writes customers, whose "no" these records lack: each row is its errors, worded as a run words them,
    // and the run would fail (On record error = fail) with nothing written.
    const required = (n: number) => `record ${n} (page 1, record ${n}): field "no" is required`;
    expect(found.body.rows).toEqual([1, 2, 3, 4, 5].map((n) => ({ recordNo: n, errors: [required(n)] })));
    expect(found.body.outcome).toMatchObject({ status: 'Failed', recordCount: 0, errorCount: 10 });
    expect(found.body.outcome.errors[9]).toEqual({ recordNo: 10, message: required(10) });
    expect(found.text).not.toContain(TOKEN);
    expect(await t.db.kysely.selectFrom('ifw_import_run').selectAll().execute()).toEqual([]);
  });

  it('answers the preview docs/rest-api.md shows, for the endpoint it shows', async () => {
    const doc = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/rest-api.md'), 'utf8');
    const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const endpoint = JSON.parse(blocks.find((b) => b.includes('"code":"customers"'))!) as Record<string, unknown>;
    const documented = blocks.find((b) => b.includes('"recordsFoundBy"'))!;
    const api = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data":[{"no":"C1","name":"Ada"},{"no":"C2"}]}');
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    try {
      await call('POST', 'restApiConnections', { code: 'crm', baseUrl: `${origin}/v1`, maxRetries: 0 });
      expect((await call('POST', 'restApiEndpoints', endpoint)).status).toBe(201);
      const res = await call('POST', "restApiEndpoints('customers')/Microsoft.NAV.previewFirstPage");
      expect(res.body).toEqual(JSON.parse(documented.replaceAll('https://api.example.com', origin)));
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it('previews an endpoint that is not saved (a root array with "$")', async () => {
    await call('POST', 'restApiConnections', local());
    const body = {
      connectionCode: 'local',
      path: 'root-array',
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      pageSize: 10,
      responseDataPath: '$',
    };
    const res = await call('POST', 'restApiEndpoints/Microsoft.NAV.previewFirstPage', body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, recordCount: 10, next: { kind: 'next' } });
    expect((await call('GET', 'restApiEndpoints')).body.value).toEqual([]);
    const blank = await call('POST', 'restApiEndpoints/Microsoft.NAV.previewFirstPage', { ...body, responseDataPath: '' });
    expect(blank.body).toMatchObject({ ok: true, recordCount: 10, next: { kind: 'next' } });
    const invalid = await call('POST', 'restApiEndpoints/Microsoft.NAV.previewFirstPage', { ...body, responseDataPath: null });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.message).toContain('responseDataPath: Page Number pagination needs a Response Data Path');
  });

  it('answers 200 with ok false and the page error when the remote fails', async () => {
    await call('POST', 'restApiConnections', {
      ...local(),
      authType: 'apiKey',
      token: undefined,
      apiKeyName: 'api_key',
      apiKeyIn: 'query',
      apiKey: 'query-key-never-shown',
    });
    const res = await call('POST', 'restApiEndpoints/Microsoft.NAV.previewFirstPage', { connectionCode: 'local', path: 'status/404' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: false, error: { pageNo: 1, status: 404 } });
    expect(res.body.error.url).toContain('/status/404');
    expect(res.body.error.message).toContain('404');
    expect(res.text).not.toContain('query-key-never-shown');
    expect(server.requests[0]?.url).toContain('api_key=query-key-never-shown');
  });
});
