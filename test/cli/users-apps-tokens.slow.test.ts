/**
 * `ifw users …`, `ifw apps …` and `ifw token` against a running `ifw serve` on the same data
 * directory, as real processes: what the CLI changes in the database reaches the running service
 * (within its directory cache, IFW_DIRECTORY_CACHE_MS: 5 s by default, 100 ms for the service here,
 * and changes are polled for, never slept on), and bad input ends with a non-zero exit and one
 * `ifw: …` line, never a stack trace. Each test starts several processes, so on a busy 2-core machine
 * a test may take longer than the default 30 s: the file allows 90 s per test.
 *
 * All Basic requests come from 127.0.0.1, whose failed sign-ins the service slows after 5 per user:
 * the tests below cause two (an old password refused after each password change), no more.
 */
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, basicAuth, ROOT, runIfw, startServer, type RunResult, type ServerProcess } from '../helpers/process.js';
import { until } from '../helpers/until.js';

const API = '/api/vendor/integrationFramework/v1.0';
const ADMIN_PASSWORD = 'auth-cli-administrator';
const PAYLOAD_FILE = path.join(ROOT, 'examples/customers-payload.json');
/** How long the service remembers users and applications (IFW_DIRECTORY_CACHE_MS): a CLI change reaches it within this. */
const DIRECTORY_CACHE_MS = '100';
const GENERATED = /^password \(shown only this once\): (\S+)$/m;
let dir: string;
let env: NodeJS.ProcessEnv;
let server: ServerProcess;

type Headers = { authorization: string };

beforeAll(async () => {
  assertBuilt();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-auth-cli-'));
  env = { IFW_DATA_DIR: dir, IFW_ADMIN_PASSWORD: ADMIN_PASSWORD, IFW_DEV_TOKEN_ISSUER: 'true' };
  const serviceEnv = { ...env, IFW_DIRECTORY_CACHE_MS: DIRECTORY_CACHE_MS };
  server = await startServer(serviceEnv, ['--apply', path.join(ROOT, 'examples/customers.yaml')]);
});

afterAll(async () => {
  if (server === undefined) return;
  const exitedEarly = server.child.exitCode !== null || server.child.signalCode !== null;
  const code = await server.stop();
  expect(exitedEarly ? 'the service exited before the end of the tests' : code, server.logs.slice(-40).join('\n')).toBe(0);
  fs.rmSync(dir, { recursive: true, force: true });
});

const ifw = (args: string[], input?: string): Promise<RunResult> => runIfw(args, env, input === undefined ? {} : { input });

function expectSuccess(result: RunResult): void {
  expect(result.code, result.stderr).toBe(0);
}

/** Refused the way a person should see it: exit code 1, one `ifw: …` line on stderr, no stack trace. */
function expectRefused(result: RunResult, message: RegExp): void {
  expect(result.code, result.stdout + result.stderr).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^ifw: [^\n]+\n$/);
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

const bearer = (token: string): Headers => ({ authorization: `Bearer ${token}` });

let submitted = 0;
/** POST a one-record bulk import request; answers the status. */
async function submit(headers: Headers): Promise<number> {
  submitted++;
  const res = await fetch(`${server.baseUrl}${API}/bulkImportRequests`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ integrationSortingOrder: 10, payload: JSON.stringify([{ no: `A${submitted}`, name: 'Auth CLI test' }]) }),
  });
  await res.body?.cancel();
  return res.status;
}

/** GET the target tables (permission `read`, which every permission set grants); answers the status. */
async function list(headers: Headers): Promise<number> {
  const res = await fetch(`${server.baseUrl}${API}/targetTables`, { headers });
  await res.body?.cancel();
  return res.status;
}

async function errorOf(method: 'GET' | 'POST', headers: Headers): Promise<{ status: number; error: { code: string; message: string } }> {
  const res = await fetch(`${server.baseUrl}${API}/bulkImportRequests`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(method === 'POST' ? { body: JSON.stringify({ integrationSortingOrder: 10, payload: '[]' }) } : {}),
  });
  return { status: res.status, error: ((await res.json()) as { error: { code: string; message: string } }).error };
}

describe('ifw users', { timeout: 90_000 }, () => {
  it('adds a user whose password comes from stdin; that user calls the service with Basic', async () => {
    const added = await ifw(['users', 'add', 'alice', '-p', 'VENDOR IF ALL', '--password-stdin'], 'alice-password-0001\n');
    expectSuccess(added);
    expect(JSON.parse(added.stdout)).toMatchObject({ userName: 'alice', enabled: true, permissionSets: ['VENDOR IF ALL'] });
    expect(added.stdout).not.toContain('alice-password-0001');
    expect(added.stdout).not.toMatch(GENERATED);

    // The trailing newline (`echo … |`) is not part of the password.
    expect(await submit(basicAuth('alice', 'alice-password-0001'))).toBe(202);
  });

  it('adds a user with a generated password, printed once and nowhere else', async () => {
    const added = await ifw(['users', 'add', 'bob', '-p', 'VENDOR IF ALL']);
    expectSuccess(added);
    expect(added.stdout.match(new RegExp(GENERATED, 'gm'))).toHaveLength(1);
    const password = GENERATED.exec(added.stdout)![1]!;
    expect(password).toMatch(/^[\w-]{24}$/);
    expect(added.stderr).not.toContain(password);

    expect(await submit(basicAuth('bob', password))).toBe(202);
    const listed = await ifw(['users', 'list']);
    expectSuccess(listed);
    expect((JSON.parse(listed.stdout) as { userName: string }[]).map((u) => u.userName).sort()).toEqual(['admin', 'alice', 'bob']);
    expect(listed.stdout).not.toContain(password);
    expect(listed.stdout).not.toMatch(/hash|argon/i);
  });

  it('disable refuses a user within the directory cache; enable lets the user back in', async () => {
    expectSuccess(await ifw(['users', 'add', 'dora', '-p', 'VENDOR IF ALL', '--password-stdin'], 'dora-password-0001'));
    const dora = basicAuth('dora', 'dora-password-0001');
    expect(await list(dora)).toBe(200);

    const disabled = await ifw(['users', 'disable', 'dora']);
    expectSuccess(disabled);
    expect(JSON.parse(disabled.stdout)).toMatchObject({ userName: 'dora', enabled: false });
    expect(await until(() => list(dora), { holds: (status) => status === 401 })).toBe(401);
    expect(await errorOf('GET', dora)).toEqual({ status: 401, error: { code: 'unauthorized', message: "User 'dora' is disabled." } });

    expectSuccess(await ifw(['users', 'enable', 'dora']));
    expect(await until(() => list(dora), { holds: (status) => status === 200 })).toBe(200);
  });

  it('set-password: the old password is refused and the new one accepted', async () => {
    expectSuccess(await ifw(['users', 'add', 'carol', '-p', 'VENDOR IF ALL', '--password-stdin'], 'carol-password-0001'));
    const old = basicAuth('carol', 'carol-password-0001');
    // Verified once, then remembered by the service: the change must end that too.
    expect(await list(old)).toBe(200);

    const changed = await ifw(['users', 'set-password', 'carol', '--password-stdin'], 'carol-password-0002\n');
    expectSuccess(changed);
    expect(changed.stdout).not.toMatch(GENERATED);
    expect(await until(() => list(old), { holds: (status) => status === 401 })).toBe(401);
    expect(await list(basicAuth('carol', 'carol-password-0002'))).toBe(200);

    // Without --password-stdin a new password is generated and printed once.
    const generated = await ifw(['users', 'set-password', 'carol']);
    expectSuccess(generated);
    expect(generated.stdout.match(new RegExp(GENERATED, 'gm'))).toHaveLength(1);
    const password = GENERATED.exec(generated.stdout)![1]!;
    expect(await until(() => list(basicAuth('carol', 'carol-password-0002')), { holds: (status) => status === 401 })).toBe(401);
    expect(await submit(basicAuth('carol', password))).toBe(202);
  });

  it('grant adds a permission set and revoke takes it away', async () => {
    expectSuccess(await ifw(['users', 'add', 'dave', '-p', 'VENDOR IF STANDARD', '--password-stdin'], 'dave-password-0001'));
    const dave = basicAuth('dave', 'dave-password-0001');
    const refused = await errorOf('POST', dave);
    expect(refused.status).toBe(403);
    expect(refused.error.code).toBe('forbidden');
    expect(refused.error.message).toContain("needs the permission 'bulkImport', granted by VENDOR IF ALL or SUPER");
    expect(await list(dave)).toBe(200);

    const granted = await ifw(['users', 'grant', 'dave', 'VENDOR IF ALL']);
    expectSuccess(granted);
    expect(JSON.parse(granted.stdout)).toMatchObject({ permissionSets: ['VENDOR IF STANDARD', 'VENDOR IF ALL'] });
    expect(await until(() => submit(dave), { holds: (status) => status === 202 })).toBe(202);

    expectSuccess(await ifw(['users', 'revoke', 'dave', 'VENDOR IF ALL']));
    expect(await until(() => submit(dave), { holds: (status) => status === 403 })).toBe(403);
    expect(await list(dave)).toBe(200);
  });
});

describe('ifw apps and ifw token', { timeout: 90_000 }, () => {
  it('a token for a registered application is accepted; a disabled application is refused with 403', async () => {
    const added = await ifw(['apps', 'add', 'erp', '-p', 'VENDOR IF ALL', '--name', 'ERP connector']);
    expectSuccess(added);
    expect(JSON.parse(added.stdout)).toMatchObject({
      clientId: 'erp',
      displayName: 'ERP connector',
      enabled: true,
      permissionSets: ['VENDOR IF ALL'],
    });

    const token = await ifw(['token', '--app', 'erp', '--minutes', '5']);
    expectSuccess(token);
    expect(token.stderr).toBe('');
    expect(token.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const erp = bearer(token.stdout.trim());
    expect(await submit(erp)).toBe(202);

    expectSuccess(await ifw(['apps', 'disable', 'erp']));
    expect(await until(() => submit(erp), { holds: (status) => status === 403 })).toBe(403);
    expect(await errorOf('POST', erp)).toEqual({ status: 403, error: { code: 'forbidden', message: "Application 'erp' is disabled." } });

    expectSuccess(await ifw(['apps', 'enable', 'erp']));
    expect(await until(() => submit(erp), { holds: (status) => status === 202 })).toBe(202);
  });

  it('a token for an unregistered application is printed with a warning and refused by the service', async () => {
    const token = await ifw(['token', '--app', 'stranger']);
    expectSuccess(token);
    expect(token.stderr).toMatch(/^ifw: warning: application 'stranger' is not registered; .*ifw apps add stranger\)\n$/);
    const refused = await errorOf('POST', bearer(token.stdout.trim()));
    expect(refused.status).toBe(403);
    expect(refused.error.message).toMatch(/^Application 'stranger' is not registered/);
  });

  it('a service without IFW_DEV_TOKEN_ISSUER does not accept the development tokens', async () => {
    const token = await ifw(['token', '--app', 'erp']);
    expectSuccess(token);
    const other = await startServer({ IFW_DATA_DIR: dir }, ['--no-workers']);
    try {
      const res = await fetch(`${other.baseUrl}${API}/bulkImportRequests`, { headers: bearer(token.stdout.trim()) });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain('no token issuer is configured');
    } finally {
      expect(await other.stop()).toBe(0);
    }
  });

  it('ifw token refuses to run without IFW_DEV_TOKEN_ISSUER=true', async () => {
    const result = await runIfw(['token', '--app', 'erp'], { IFW_DATA_DIR: dir });
    expectRefused(result, /^ifw: the development token issuer is off: set IFW_DEV_TOKEN_ISSUER=true/);
  });

  it('ifw serve and ifw token refuse IFW_DEV_TOKEN_ISSUER=true together with IFW_PRODUCTION=true', async () => {
    const empty = fs.mkdtempSync(path.join(dir, 'production-'));
    const production = { IFW_DATA_DIR: empty, IFW_PORT: '0', IFW_DEV_TOKEN_ISSUER: 'true', IFW_PRODUCTION: 'true' };
    // Killed after 15 s if it served after all: the exit code is then null, not 1.
    const served = await runIfw(['serve'], production, { timeoutMs: 15_000 });
    expectRefused(served, /^ifw: IFW_DEV_TOKEN_ISSUER cannot be used with IFW_PRODUCTION=true/);
    expectRefused(
      await runIfw(['token', '--app', 'erp'], production),
      /^ifw: IFW_DEV_TOKEN_ISSUER cannot be used with IFW_PRODUCTION=true/,
    );
    // Refused before anything was created: no database, no signing key.
    expect(fs.readdirSync(empty)).toEqual([]);
  });
});

describe('invalid input to ifw users and ifw apps', { timeout: 90_000 }, () => {
  it.each([
    {
      what: 'an unknown permission set',
      args: ['users', 'add', 'eve', '-p', 'VENDOR IF NOTHING', '--password-stdin'],
      input: 'eve-password-0001',
      message: /^ifw: unknown permission set 'VENDOR IF NOTHING'; expected one of 'VENDOR IF ALL', 'VENDOR IF STANDARD', 'SUPER'\n$/,
    },
    {
      what: 'a short password',
      args: ['users', 'add', 'eve', '--password-stdin'],
      input: 'short\n',
      message: /^ifw: The password must be at least 12 characters long\.\n$/,
    },
    {
      what: 'an empty password',
      args: ['users', 'add', 'eve', '--password-stdin'],
      input: '',
      message: /^ifw: The password must be at least 12 characters long\.\n$/,
    },
    {
      what: 'a user name with a colon',
      args: ['users', 'add', 'eve:x', '--password-stdin'],
      input: 'eve-password-0001',
      message: /^ifw: userName 'eve:x' is not valid: use 1 to 64 letters/,
    },
    {
      what: 'a user name starting with a dot',
      args: ['users', 'add', '.eve', '--password-stdin'],
      input: 'eve-password-0001',
      message: /^ifw: userName '\.eve' is not valid/,
    },
    {
      what: 'a user that exists',
      args: ['users', 'add', 'admin', '--password-stdin'],
      input: 'admin-password-0001',
      message: /^ifw: User 'admin' already exists\.\n$/,
    },
    { what: 'granting to an unknown user', args: ['users', 'grant', 'nobody', 'SUPER'], message: /^ifw: No user 'nobody'\.\n$/ },
    {
      what: 'granting an unknown permission set',
      args: ['users', 'grant', 'admin', 'ADMIN'],
      message: /^ifw: unknown permission set 'ADMIN'/,
    },
    {
      what: 'disabling the last administrator',
      args: ['users', 'disable', 'admin'],
      message: /^ifw: Changing user 'admin' would leave no enabled user or application holding SUPER/,
    },
    {
      what: 'a client id with a space',
      args: ['apps', 'add', 'erp two', '-p', 'VENDOR IF ALL'],
      message: /^ifw: clientId 'erp two' is not valid/,
    },
    {
      what: 'an application with an unknown permission set',
      args: ['apps', 'add', 'crm', '-p', 'ALL'],
      message: /^ifw: unknown permission set 'ALL'/,
    },
    { what: 'disabling an unknown application', args: ['apps', 'disable', 'nothing'], message: /^ifw: No application 'nothing'\.\n$/ },
    {
      what: 'a token lifetime of 0 minutes',
      args: ['token', '--app', 'erp', '--minutes', '0'],
      message: /^ifw: --minutes must be a whole number of minutes, got "0"\n$/,
    },
  ])('refuses $what with a clear message', async ({ args, input, message }) => {
    expectRefused(await ifw(args, input), message);
  });

  it('ifw serve refuses a short IFW_ADMIN_PASSWORD on the first start', async () => {
    const empty = fs.mkdtempSync(path.join(dir, 'first-start-'));
    const result = await runIfw(['serve'], { IFW_DATA_DIR: empty, IFW_PORT: '0', IFW_ADMIN_PASSWORD: 'short' }, { timeoutMs: 15_000 });
    expectRefused(
      result,
      /^ifw: The initial administrator \(IFW_ADMIN_USER \/ IFW_ADMIN_PASSWORD\): The password must be at least 12 characters long\.\n$/,
    );
  });

  it('left no trace of the refused changes', async () => {
    const users = JSON.parse((await ifw(['users', 'list'])).stdout) as { userName: string; enabled: boolean; permissionSets: string[] }[];
    expect(users.map((u) => u.userName)).not.toContain('eve');
    expect(users.find((u) => u.userName === 'admin')).toMatchObject({ enabled: true, permissionSets: ['SUPER'] });
    const apps = JSON.parse((await ifw(['apps', 'list'])).stdout) as { clientId: string }[];
    expect(apps.map((a) => a.clientId)).not.toContain('crm');
  });
});

describe('ifw submit and ifw status with credentials', { timeout: 90_000 }, () => {
  // --json: what a script reads (without it the commands print lines for a person).
  it('submits with IFW_USER and IFW_PASSWORD and reads the status back', async () => {
    const client = { IFW_USER: 'admin', IFW_PASSWORD: ADMIN_PASSWORD };
    const submitted = await runIfw(
      ['submit', '-i', '10', '-f', PAYLOAD_FILE, '--url', server.baseUrl, '--wait', '--interval', '0.1', '--json'],
      client,
    );
    expectSuccess(submitted);
    expect(submitted.stdout).toContain('"status": "Completed"');
    const requestId = /"requestId": "([^"]+)"/.exec(submitted.stdout)![1]!;

    const status = await runIfw(['status', requestId, '--url', server.baseUrl, '--json'], client);
    expectSuccess(status);
    expect(JSON.parse(status.stdout)).toMatchObject({ requestId, status: 'Completed', recordCount: 3 });

    const token = await ifw(['token', '--app', 'erp']);
    const withToken = await runIfw(['status', requestId, '--url', server.baseUrl, '--json'], { IFW_TOKEN: token.stdout.trim() });
    expectSuccess(withToken);

    const anonymous = await runIfw(['submit', '-i', '10', '-f', PAYLOAD_FILE, '--url', server.baseUrl, '--json'], {});
    expect(anonymous.code).toBe(1);
    expect(JSON.parse(anonymous.stdout)).toMatchObject({ error: { code: 'unauthorized' } });
  });

  it('submit --wait stops with exit code 1 when polling is refused, instead of polling forever', async () => {
    // A service that accepts the request, then refuses to show it (the credentials changed meanwhile).
    const refusing = createServer((req, res) => {
      req.resume();
      const [status, body] =
        req.method === 'POST'
          ? [202, { requestId: '0190a000-0000-7000-8000-000000000000', status: 'Pending' }]
          : [401, { error: { code: 'unauthorized', message: 'The user name or password is not valid.' } }];
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
      const result = await runIfw(
        ['submit', '-i', '10', '-f', PAYLOAD_FILE, '--url', url, '--wait', '--interval', '0.1', '--json'],
        { IFW_USER: 'admin', IFW_PASSWORD: 'x' },
        { timeoutMs: 10_000 },
      );
      expect(result.code, 'killed after 10 s: still polling').toBe(1);
      expect(result.stdout).toContain('"code": "unauthorized"');
    } finally {
      await new Promise((resolve) => refusing.close(resolve));
    }
  });
});
