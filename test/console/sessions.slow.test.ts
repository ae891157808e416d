/**
 * A console session belongs to one user as they were when they signed in: a change of their password,
 * permission sets or enabled state ends it, whichever way it is made (admin API, `ifw users`, the
 * console's own user pages), and so does deleting them; a user created again under the same name is
 * someone else and inherits nothing. A user holds at most IFW_CONSOLE_MAX_SESSIONS sessions, the oldest
 * ended first. Over real sockets against a real service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PermissionSetName } from '../../src/auth/permission-sets.js';
import { signInHttp, type Browserless } from '../helpers/console-http.js';
import { assertBuilt, runIfw } from '../helpers/process.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'console-session-pass-1';
const OTHER_PASSWORD = 'console-session-pass-2';

let t: TestService;
let base: string;
let admin: Browserless;

beforeAll(async () => {
  assertBuilt();
  t = await startTestService({ config: { host: '127.0.0.1', port: 0, consoleMaxSessions: 3 } });
  base = (await t.service.listen()).replace('localhost', '127.0.0.1');
  await t.service.accounts.createUser({ userName: 'session-admin', password: PASSWORD, permissionSets: ['SUPER'] });
  admin = await signInHttp(base, 'session-admin', PASSWORD);
});
afterAll(async () => {
  await t?.cleanup();
});

/** A user with a live console session: the session's client. */
async function signedInUser(userName: string, set: PermissionSetName = 'VENDOR IF ALL'): Promise<Browserless> {
  await t.service.accounts.createUser({ userName, password: PASSWORD, permissionSets: [set] });
  const client = await signInHttp(base, userName, PASSWORD);
  expect((await client.get('/')).status).toBe(200);
  return client;
}

/** What a signed-out browser sees: a redirect to the sign-in page. */
async function expectSignedOut(client: Browserless, path = '/'): Promise<void> {
  const answer = await client.get(path);
  expect(answer.status).toBe(303);
  expect(answer.headers.get('location')).toMatch(/^\/login/);
}

const api = (method: 'PATCH' | 'DELETE', url: string, body?: object) =>
  t.inject({ method, url: `${API}/${url}`, ...(body === undefined ? {} : { payload: body }) });

describe('an account change ends the console sessions of that user', () => {
  it.each<[string, (userName: string) => Promise<void>]>([
    [
      'a password change through the admin API',
      async (u) => expect((await api('PATCH', `users('${u}')`, { password: OTHER_PASSWORD })).statusCode).toBe(200),
    ],
    [
      'a change of permission sets through the admin API',
      async (u) => expect((await api('PATCH', `users('${u}')`, { permissionSets: ['VENDOR IF STANDARD'] })).statusCode).toBe(200),
    ],
    [
      'disabling through the admin API',
      async (u) => expect((await api('PATCH', `users('${u}')`, { enabled: false })).statusCode).toBe(200),
    ],
    ['a delete through the admin API', async (u) => expect((await api('DELETE', `users('${u}')`)).statusCode).toBe(204)],
    [
      '`ifw users set-password` in another process',
      async (u) => {
        const result = await runIfw(
          ['users', 'set-password', u, '--password-stdin'],
          { IFW_DATA_DIR: t.dir },
          { input: `${OTHER_PASSWORD}\n` },
        );
        expect(result.code, result.stderr).toBe(0);
      },
    ],
    [
      '`ifw users revoke` in another process',
      async (u) => {
        const result = await runIfw(['users', 'revoke', u, 'VENDOR IF ALL'], { IFW_DATA_DIR: t.dir });
        expect(result.code, result.stderr).toBe(0);
      },
    ],
    [
      "the console's own user page (password reset)",
      async (u) => expect((await admin.post(`/users/${u}/password`, { _csrf: admin.csrf, password: OTHER_PASSWORD })).status).toBe(303),
    ],
  ])('%s', async (_, change) => {
    const userName = `changed-${Math.random().toString(36).slice(2, 8)}`;
    const client = await signedInUser(userName);
    const bystander = await signedInUser(`${userName}-other`);
    await change(userName);
    await expectSignedOut(client);
    // Another user's session is not touched.
    expect((await bystander.get('/')).status).toBe(200);
  });

  it('a user deleted and created again under the same name is someone else: the old session opens nothing', async () => {
    const old = await signedInUser('reused-name', 'VENDOR IF STANDARD');
    expect((await old.get('/users')).status).toBe(403);
    expect((await api('DELETE', "users('reused-name')")).statusCode).toBe(204);
    await t.service.accounts.createUser({ userName: 'reused-name', password: PASSWORD, permissionSets: ['SUPER'] });
    await expectSignedOut(old, '/users');
    // The new user signs in for themselves.
    const fresh = await signInHttp(base, 'reused-name', PASSWORD);
    expect((await fresh.get('/users')).status).toBe(200);
  });

  it('changing something else (an application) leaves the sessions alone', async () => {
    const client = await signedInUser('unaffected');
    await t.service.accounts.createApplication({ clientId: 'unrelated-app', permissionSets: ['VENDOR IF ALL'] });
    expect((await client.get('/')).status).toBe(200);
  });
});

describe('sessions per user', () => {
  it('keeps at most IFW_CONSOLE_MAX_SESSIONS (3 here) per user: signing in once more ends the oldest', async () => {
    await t.service.accounts.createUser({ userName: 'many-tabs', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
    const sessions: Browserless[] = [];
    for (let i = 0; i < 5; i++) sessions.push(await signInHttp(base, 'many-tabs', PASSWORD));
    await expectSignedOut(sessions[0]!);
    await expectSignedOut(sessions[1]!);
    for (const live of sessions.slice(2)) expect((await live.get('/')).status).toBe(200);
    const user = await t.service.db.kysely
      .selectFrom('ifw_user')
      .select('user_id')
      .where('user_name', '=', 'many-tabs')
      .executeTakeFirstOrThrow();
    const rows = await t.service.db.kysely
      .selectFrom('ifw_console_session')
      .select('token_hash')
      .where('user_id', '=', user.user_id)
      .execute();
    expect(rows).toHaveLength(3);
  });
});
