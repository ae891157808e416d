/**
 * The admin API for users and applications (`users('<name>')`, `applications('<client id>')`) over the
 * whole service: what it answers, what it refuses, that passwords never leave it, that changes take
 * effect on the next request, and the administrator created on the first start.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccounts } from '../../src/accounts/accounts.js';
import { createDirectory } from '../../src/auth/directory.js';
import { systemClock } from '../../src/core/clock.js';
import { loadConfig } from '../../src/core/config.js';
import { createLogger } from '../../src/core/logger.js';
import { declaredRoutes } from '../../src/http/permissions.js';
import { createService } from '../../src/main/service.js';
import { openDatabase } from '../../src/storage/database.js';
import { asDb } from '../../src/storage/db.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const USERS = `${API}/users`;
const APPLICATIONS = `${API}/applications`;
const ADMIN_PASSWORD = 'the administrator password';
const PASSWORD = 'a sufficiently long password';
const USER_FIELDS = ['@odata.context', 'createdAt', 'enabled', 'passwordChangedAt', 'permissionSets', 'updatedAt', 'userName'];
const APPLICATION_FIELDS = ['@odata.context', 'clientId', 'createdAt', 'displayName', 'enabled', 'issuer', 'permissionSets', 'updatedAt'];

const basic = (userName: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${userName}:${password}`).toString('base64')}`,
});
const user = (name: string) => `${USERS}('${name}')`;
const application = (clientId: string) => `${APPLICATIONS}('${clientId}')`;

let t: TestService;
/** Every answer of the admin API in this file, to look for passwords and hashes at the end. */
const answers: LightMyRequestResponse[] = [];

beforeAll(async () => {
  t = await startTestService({ applyExample: false, config: { adminPassword: ADMIN_PASSWORD } });
});
afterAll(async () => {
  await t.cleanup();
});

/** An admin API call as the SUPER test application (or with the headers given). */
async function admin(
  method: InjectOptions['method'],
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  const res = await t.inject({
    method,
    url,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  answers.push(res);
  return res;
}

/** A protected, non-admin route as a Basic user; its status says whether the credentials work. */
const signInStatus = async (userName: string, password: string, remoteAddress = '127.0.0.1') =>
  (await t.service.app.inject({ method: 'GET', url: `${API}/bulkImportRequests`, headers: basic(userName, password), remoteAddress }))
    .statusCode;

function expectError(res: LightMyRequestResponse, status: number, code: string): string {
  expect({ status: res.statusCode, code: res.json<{ error: { code: string } }>().error.code }).toEqual({ status, code });
  return res.json<{ error: { message: string } }>().error.message;
}

describe('users', () => {
  it('creates, lists, reads, changes and deletes a user', async () => {
    const created = await admin('POST', USERS, { userName: 'bob', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
    expect(created.statusCode).toBe(201);
    expect(created.headers.location).toBe(user('bob'));
    expect(Object.keys(created.json()).sort()).toEqual(USER_FIELDS);
    expect(created.json()).toMatchObject({ userName: 'bob', enabled: true, permissionSets: ['VENDOR IF ALL'] });

    const listed = await admin('GET', USERS);
    expect(listed.statusCode).toBe(200);
    const names = listed.json<{ value: { userName: string }[] }>().value.map((u) => u.userName);
    expect(names).toEqual(expect.arrayContaining(['admin', 'bob']));
    for (const entry of listed.json<{ value: object[] }>().value)
      expect(Object.keys(entry).sort()).toEqual(USER_FIELDS.filter((f) => f !== '@odata.context'));

    expect((await admin('GET', user('bob'))).json()).toMatchObject({ userName: 'bob', enabled: true });

    const changed = await admin('PATCH', user('bob'), { permissionSets: ['VENDOR IF STANDARD'], enabled: false });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({ userName: 'bob', enabled: false, permissionSets: ['VENDOR IF STANDARD'] });
    expect((await admin('GET', user('bob'))).json()).toMatchObject({ enabled: false, permissionSets: ['VENDOR IF STANDARD'] });

    expect((await admin('DELETE', user('bob'))).statusCode).toBe(204);
    expectError(await admin('GET', user('bob')), 404, 'notFound');
  });

  it('a user created through the API signs in with Basic at once, even right after a failed attempt under that name', async () => {
    expect(await signInStatus('newcomer', PASSWORD, '198.51.100.1')).toBe(401);
    expect((await admin('POST', USERS, { userName: 'newcomer', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] })).statusCode).toBe(
      201,
    );
    expect(await signInStatus('newcomer', PASSWORD, '198.51.100.1')).toBe(200);
  });

  it('a password change takes effect at once, although verified passwords are remembered', async () => {
    await admin('POST', USERS, { userName: 'changer', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
    expect(await signInStatus('changer', PASSWORD, '198.51.100.2')).toBe(200);
    expect(await signInStatus('changer', PASSWORD, '198.51.100.2')).toBe(200); // now from memory

    const newPassword = 'an entirely new password';
    const changed = await admin('PATCH', user('changer'), { password: newPassword });
    expect(changed.statusCode).toBe(200);
    expect(Date.parse(changed.json<{ passwordChangedAt: string }>().passwordChangedAt)).toBeGreaterThan(0);
    expect(await signInStatus('changer', PASSWORD, '198.51.100.2')).toBe(401);
    expect(await signInStatus('changer', newPassword, '198.51.100.2')).toBe(200);
  });

  it('disabling or deleting a user refuses its next request, even with its password remembered', async () => {
    for (const [name, change] of [
      ['to-disable', () => admin('PATCH', user('to-disable'), { enabled: false })],
      ['to-delete', () => admin('DELETE', user('to-delete'))],
    ] as const) {
      await admin('POST', USERS, { userName: name, password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
      expect(await signInStatus(name, PASSWORD, '198.51.100.3')).toBe(200);
      expect((await change()).statusCode).toBeLessThan(300);
      expect(await signInStatus(name, PASSWORD, '198.51.100.3')).toBe(401);
    }
  });

  it('a change to permission sets applies to the next request', async () => {
    await admin('POST', USERS, { userName: 'promoted', password: PASSWORD, permissionSets: ['VENDOR IF STANDARD'] });
    const submit = () =>
      t.service.app.inject({
        method: 'POST',
        url: `${API}/bulkImportRequests`,
        headers: { ...basic('promoted', PASSWORD), 'content-type': 'application/json' },
        payload: JSON.stringify({ integrationSortingOrder: 10, payload: '[]' }),
        remoteAddress: '198.51.100.4',
      });
    expectError(await submit(), 403, 'forbidden');
    await admin('PATCH', user('promoted'), { permissionSets: ['VENDOR IF ALL'] });
    // Allowed now: the body gets as far as the integration check (no integrations in this service).
    expect((await submit()).statusCode).toBe(400);
  });
});

describe('applications', () => {
  it('registers, lists, reads, changes and removes an application', async () => {
    const created = await admin('POST', APPLICATIONS, { clientId: 'erp-connector', displayName: 'ERP', permissionSets: ['VENDOR IF ALL'] });
    expect(created.statusCode).toBe(201);
    expect(created.headers.location).toBe(application('erp-connector'));
    expect(Object.keys(created.json()).sort()).toEqual(APPLICATION_FIELDS);
    expect(created.json()).toMatchObject({
      clientId: 'erp-connector',
      displayName: 'ERP',
      enabled: true,
      permissionSets: ['VENDOR IF ALL'],
    });

    const listed = (await admin('GET', APPLICATIONS)).json<{ value: { clientId: string }[] }>().value.map((a) => a.clientId);
    expect(listed).toEqual(expect.arrayContaining(['erp-connector', 'test-super']));
    expect((await admin('GET', application('erp-connector'))).json()).toMatchObject({ clientId: 'erp-connector', displayName: 'ERP' });

    const changed = await admin('PATCH', application('erp-connector'), {
      displayName: 'ERP (prod)',
      enabled: false,
      permissionSets: ['VENDOR IF STANDARD'],
    });
    expect(changed.json()).toMatchObject({ displayName: 'ERP (prod)', enabled: false, permissionSets: ['VENDOR IF STANDARD'] });

    expect((await admin('DELETE', application('erp-connector'))).statusCode).toBe(204);
    expectError(await admin('GET', application('erp-connector')), 404, 'notFound');
  });

  it('sees a disable that commits while a lookup of the application is under way', async () => {
    // A second connection whose answers are held until the change has committed and cleared the
    // directory: the lookup read the row before the change, and answers after it.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const gate: KyselyPlugin = {
      transformQuery: (args: PluginTransformQueryArgs): RootOperationNode => args.node,
      async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
        if (holding) await held;
        return args.result;
      },
    };
    const reader = openDatabase(t.service.config.database);
    try {
      await t.service.accounts.createApplication({ clientId: 'raced', permissionSets: ['VENDOR IF ALL'] });
      const directory = createDirectory(asDb(reader.kysely.withPlugin(gate), reader.dialect), systemClock);
      const accounts = createAccounts(t.service.db.kysely, { clock: systemClock, onChange: () => directory.invalidate() });

      holding = true;
      const inFlight = directory.application('raced');
      await accounts.changeApplication('raced', { enabled: false });
      holding = false;
      release();
      expect((await inFlight)?.enabled).toBe(true); // read before the change: it answers that one request
      expect((await directory.application('raced'))?.enabled).toBe(false);
    } finally {
      await reader.close();
    }
  });
});

describe('refusals', () => {
  beforeAll(async () => {
    await t.service.accounts.createUser({ userName: 'existing', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
    await t.service.accounts.createApplication({ clientId: 'existing-app', permissionSets: ['VENDOR IF ALL'] });
  });

  const refusals: { name: string; method: InjectOptions['method']; url: string; body?: object; status: number; code: string }[] = [
    {
      name: 'a too-short password',
      method: 'POST',
      url: USERS,
      body: { userName: 'shorty', password: 'short' },
      status: 400,
      code: 'invalidRequest',
    },
    {
      name: 'a too-short new password',
      method: 'PATCH',
      url: user('existing'),
      body: { password: 'short' },
      status: 400,
      code: 'invalidRequest',
    },
    {
      name: 'an unknown permission set for a user',
      method: 'POST',
      url: USERS,
      body: { userName: 'x1', password: PASSWORD, permissionSets: ['ROOT'] },
      status: 400,
      code: 'invalidRequest',
    },
    {
      name: 'an unknown permission set in a user change',
      method: 'PATCH',
      url: user('existing'),
      body: { permissionSets: ['ROOT'] },
      status: 400,
      code: 'invalidRequest',
    },
    {
      name: 'an unknown permission set for an application',
      method: 'POST',
      url: APPLICATIONS,
      body: { clientId: 'x2', permissionSets: ['ROOT'] },
      status: 400,
      code: 'invalidRequest',
    },
    {
      name: 'an unknown permission set in an application change',
      method: 'PATCH',
      url: application('existing-app'),
      body: { permissionSets: ['ROOT'] },
      status: 400,
      code: 'invalidRequest',
    },
    {
      name: 'a user name with a colon',
      method: 'POST',
      url: USERS,
      body: { userName: 'a:b', password: PASSWORD },
      status: 400,
      code: 'invalidRequest',
    },
    {
      name: 'an unknown property',
      method: 'POST',
      url: USERS,
      body: { userName: 'x3', password: PASSWORD, role: 'admin' },
      status: 400,
      code: 'invalidRequest',
    },
    { name: 'a user without a password', method: 'POST', url: USERS, body: { userName: 'x4' }, status: 400, code: 'invalidRequest' },
    {
      name: 'a duplicate user',
      method: 'POST',
      url: USERS,
      body: { userName: 'existing', password: PASSWORD },
      status: 409,
      code: 'conflict',
    },
    {
      name: 'a duplicate application',
      method: 'POST',
      url: APPLICATIONS,
      body: { clientId: 'existing-app' },
      status: 409,
      code: 'conflict',
    },
    { name: 'reading an unknown user', method: 'GET', url: user('nobody'), status: 404, code: 'notFound' },
    { name: 'changing an unknown user', method: 'PATCH', url: user('nobody'), body: { enabled: false }, status: 404, code: 'notFound' },
    { name: 'deleting an unknown user', method: 'DELETE', url: user('nobody'), status: 404, code: 'notFound' },
    { name: 'reading an unknown application', method: 'GET', url: application('nobody'), status: 404, code: 'notFound' },
    {
      name: 'changing an unknown application',
      method: 'PATCH',
      url: application('nobody'),
      body: { enabled: false },
      status: 404,
      code: 'notFound',
    },
    { name: 'deleting an unknown application', method: 'DELETE', url: application('nobody'), status: 404, code: 'notFound' },
  ];

  it.each(refusals)('refuses $name: $status $code', async ({ method, url, body, status, code }) => {
    expectError(await admin(method, url, body), status, code);
  });

  it('refuses a VENDOR IF ALL caller (bearer or Basic) on every admin route with 403', async () => {
    const routes = declaredRoutes(t.service.app as unknown as FastifyInstance).filter(
      (r) => r.permission === 'administer' && r.method !== 'HEAD' && !r.session,
    );
    expect(routes.map((r) => `${r.method} ${r.url}`).sort()).toEqual(
      ['DELETE', 'GET', 'PATCH']
        .flatMap((m) => [`${m} ${APPLICATIONS}/:key`, `${m} ${USERS}/:key`])
        .concat([`GET ${APPLICATIONS}`, `GET ${USERS}`, `POST ${APPLICATIONS}`, `POST ${USERS}`])
        // The live workers list is the administrators' too.
        .concat([`GET ${API}/workers`, `GET ${API}/workers/:key`])
        .sort(),
    );
    const callers = [await t.headersFor('VENDOR IF ALL'), basic('existing', PASSWORD)];
    for (const headers of callers) {
      for (const route of routes) {
        const url = route.url.replace('/:key', "('existing')");
        const body = route.method === 'POST' || route.method === 'PATCH' ? { enabled: true } : undefined;
        const res = await admin(route.method as InjectOptions['method'], url, body, headers);
        expect(res.statusCode, `${route.method} ${url}`).toBe(403);
        expect(expectError(res, 403, 'forbidden')).toMatch(/needs the permission 'administer', granted by SUPER/);
      }
    }
    // Nothing changed behind the refusals.
    expect((await admin('GET', user('existing'))).json()).toMatchObject({ enabled: true });
  });

  it('never answers with a password or a password hash', async () => {
    await admin('POST', USERS, { userName: 'secretive', password: 'the secretive password' });
    await admin('PATCH', user('secretive'), { password: 'the next secretive password' });
    await admin('GET', user('secretive'));
    await admin('GET', USERS);
    expect(answers.length).toBeGreaterThan(20);
    for (const res of answers) {
      expect(res.body).not.toMatch(/"password"|passwordHash|password_hash|\$argon2/i);
      for (const secret of [
        PASSWORD,
        ADMIN_PASSWORD,
        'the secretive password',
        'the next secretive password',
        'an entirely new password',
      ]) {
        expect(res.body).not.toContain(secret);
      }
    }
  });
});

describe('the last administrator', () => {
  it('refuses to disable, demote or delete the last enabled SUPER holder with 409 lastAdministrator; the SUPER application counts too', async () => {
    const s = await startTestService({ applyExample: false, config: { adminPassword: ADMIN_PASSWORD } });
    try {
      const asAdmin = basic('admin', ADMIN_PASSWORD);
      const call = (method: InjectOptions['method'], url: string, body?: unknown) =>
        s.service.app.inject({
          method,
          url,
          headers: { ...asAdmin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        });

      // Two SUPER holders: the admin user and the test-super application. One may go.
      expect((await call('PATCH', application('test-super'), { enabled: false })).statusCode).toBe(200);

      for (const [method, body] of [
        ['PATCH', { enabled: false }],
        ['PATCH', { permissionSets: ['VENDOR IF ALL'] }],
        ['DELETE', undefined],
      ] as const) {
        const res = await call(method, user('admin'), body);
        expect(expectError(res, 409, 'lastAdministrator')).toMatch(/would leave no enabled user or application holding SUPER/);
      }
      // Nothing was changed by the refused requests, and the administrator still works.
      expect((await call('GET', user('admin'))).json()).toMatchObject({ enabled: true, permissionSets: ['SUPER'] });

      // With the application enabled again, the user may go — and then the application is the last one.
      expect((await call('PATCH', application('test-super'), { enabled: true })).statusCode).toBe(200);
      expect((await call('PATCH', user('admin'), { enabled: false })).statusCode).toBe(200);
      const superApp = await s.inject({ method: 'DELETE', url: application('test-super') });
      expectError(superApp, 409, 'lastAdministrator');
    } finally {
      await s.cleanup();
    }
  });
});

describe('the first-start administrator', () => {
  const startOn = async (dir: string, adminPassword?: string) =>
    createService(
      loadConfig(
        {},
        { dataDir: dir, port: 0, workers: false, logLevel: 'silent', ...(adminPassword === undefined ? {} : { adminPassword }) },
      ),
      {
        logger: createLogger({ logLevel: 'silent' }),
      },
    );
  const usersAs = (service: Awaited<ReturnType<typeof startOn>>, password: string) =>
    service.app.inject({ method: 'GET', url: USERS, headers: basic('admin', password) });

  it('is created with IFW_ADMIN_PASSWORD on an empty database and works with Basic', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-first-admin-'));
    const service = await startOn(dir, ADMIN_PASSWORD);
    try {
      expect(service.initialAdministrator).toEqual({ userName: 'admin' });
      const res = await usersAs(service, ADMIN_PASSWORD);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ value: [{ userName: 'admin', enabled: true, permissionSets: ['SUPER'] }] });
    } finally {
      await service.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gets a generated password without it, which works; a second start on the same data creates nothing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-first-admin-'));
    try {
      const first = await startOn(dir);
      const generated = first.initialAdministrator?.generatedPassword;
      try {
        expect(generated).toMatch(/^[A-Za-z0-9_-]{24}$/);
        expect((await usersAs(first, generated!)).statusCode).toBe(200);
      } finally {
        await first.close();
      }

      const second = await startOn(dir, 'a different admin password');
      try {
        expect(second.initialAdministrator).toBeUndefined();
        expect((await second.accounts.listUsers()).map((u) => u.userName)).toEqual(['admin']);
        expect((await usersAs(second, generated!)).statusCode).toBe(200);
        expect((await usersAs(second, 'a different admin password')).statusCode).toBe(401);
      } finally {
        await second.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
