/**
 * The console's front door, as an attacker tries it over real sockets: where sign-in sends a browser
 * afterwards (same-origin paths only, parsed as a browser parses them), what a request without a
 * session costs (nothing is read of its body), how large a password may be before anything is done
 * with it, and the headers every console answer carries.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/auth/authenticate.js';
import { createDirectory } from '../../src/auth/directory.js';
import { systemClock } from '../../src/core/clock.js';
import { CONSOLE_SECURITY_HEADERS } from '../../src/console/console.js';
import { localPath } from '../../src/console/route-input.js';
import { declaredRoutes } from '../../src/http/permissions.js';
import { setCookies, signInHttp } from '../helpers/console-http.js';
import { openTestDatabase } from '../helpers/db.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'console-sign-in-pass-1';

let t: TestService;
let base: string;

beforeAll(async () => {
  t = await startTestService({ config: { host: '127.0.0.1', port: 0 } });
  base = (await t.service.listen()).replace('localhost', '127.0.0.1');
  await t.service.accounts.createUser({ userName: 'door-admin', password: PASSWORD, permissionSets: ['SUPER'] });
  await t.service.accounts.createUser({ userName: 'door-standard', password: PASSWORD, permissionSets: ['VENDOR IF STANDARD'] });
});
afterAll(async () => {
  await t?.cleanup();
});

/** Sends `next` raw (not re-encoded by a URL class), as an attacker's link would. */
function rawGet(path: string, headers: Record<string, string> = {}): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = http.request({ host: url.hostname, port: url.port, path, method: 'GET', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Where a browser goes with this Location: the origin it would land on. */
const landsOn = (location: string): string => new URL(location, base).origin;

const HOSTILE_NEXT: readonly [string, string][] = [
  ['a tab after the slash', '/%09/evil.example'],
  ['a backslash', '/%5Cevil.example'],
  ['a backslash and a tab', '/%5C%09evil.example'],
  ['two slashes', '//evil.example'],
  ['two slashes, encoded', '/%2F/evil.example'],
  ['an absolute URL', 'https%3A%2F%2Fevil.example%2F'],
  ['a scheme-relative URL with a tab inside', '/%2F%09/evil.example'],
  ['CR LF and a header', '/%0D%0ASet-Cookie:%20x=1'],
  ['a line feed', '/a%0Ab'],
  ['non-Latin-1 characters', '/requests/%E6%97%A5%E6%9C%AC'],
  ['a NUL', '/a%00b'],
];

describe('where sign-in sends the browser', () => {
  it.each(HOSTILE_NEXT)('keeps the browser on this origin for next=%s (GET /login, signed in)', async (_, next) => {
    const client = await signInHttp(base, 'door-admin', PASSWORD);
    const answer = await rawGet(`/login?next=${next}`, { cookie: client.cookie });
    expect(answer.status).toBe(303);
    expect(landsOn(answer.location!)).toBe(base);
    expect(answer.location).toMatch(/^\/(?![/\\])/u);
    // Printable ASCII only: nothing reaches the header as it was sent.
    expect(answer.location).toMatch(/^[\x21-\x7e]+$/u);
  });

  it.each(HOSTILE_NEXT)('keeps the browser on this origin for next=%s (POST /login)', async (_, next) => {
    const form = await fetch(`${base}/login`);
    const loginCookie = setCookies(form.headers)
      .find((c) => c.startsWith('ifw_login='))!
      .split(';')[0]!;
    const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const answer = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie, origin: base },
      body: `_csrf=${encodeURIComponent(token)}&userName=door-admin&password=${encodeURIComponent(PASSWORD)}&next=${next}`,
    });
    expect(answer.status).toBe(303);
    expect(landsOn(answer.headers.get('location')!)).toBe(base);
  });

  it('shows the sign-in form (200) without a session, whatever next holds', async () => {
    for (const [, next] of HOSTILE_NEXT) expect((await rawGet(`/login?next=${next}`)).status).toBe(200);
  });

  it('returns to a path of this service with its query, percent-encoded', () => {
    expect(localPath('/requests?status=Failed')).toBe('/requests?status=Failed');
    expect(localPath('/requests/日本')).toBe('/requests/%E6%97%A5%E6%9C%AC');
    expect(localPath('/a b')).toBe('/a%20b');
    expect(localPath('/\t/evil.example')).toBe('/');
    expect(localPath('/\\evil.example')).toBe('/');
    expect(localPath('//evil.example')).toBe('/');
    expect(localPath('https://evil.example/')).toBe('/');
    expect(localPath('/\r\nSet-Cookie: x=1')).toBe('/Set-Cookie:%20x=1');
    expect(localPath(undefined)).toBe('/');
  });
});

/**
 * Sends a POST whose body is `megabytes` MB, arriving as fast as the socket takes it; resolves when the
 * answer's head arrives, with how many MB the client had handed to the socket by then (`sentMb`): an
 * answer given before the body is read comes while most of it is still unsent, whatever the machine's speed.
 */
function bigPost(path: string, megabytes: number, headers: Record<string, string> = {}): Promise<{ status: number; sentMb: number }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(megabytes * chunk.length), ...headers },
    });
    req.on('response', (res) => {
      resolve({ status: res.statusCode!, sentMb: sent });
      res.resume();
      req.destroy();
    });
    // The service closes the connection after refusing: the rest of the body has nowhere to go.
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (!['EPIPE', 'ECONNRESET'].includes(err.code ?? '')) reject(err);
    });
    let sent = 0;
    const write = (): void => {
      while (sent < megabytes && !req.destroyed) {
        sent += 1;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      if (!req.destroyed) req.end();
    };
    write();
  });
}

describe('nothing is read before authentication', () => {
  it('refuses 100 MB to a console form without a session before reading it, with memory flat', async () => {
    await bigPost('/job-queue/x/hold', 1); // warm the route
    const before = process.memoryUsage().rss;
    const answer = await bigPost('/job-queue/x/hold', 100);
    const grew = process.memoryUsage().rss - before;
    expect(answer.status).toBe(303);
    expect(answer.sentMb).toBeLessThan(50);
    // The body was never gathered: far less than its 100 MB (this process holds the sender too).
    expect(grew).toBeLessThan(30 * 1024 * 1024);
  });

  it('refuses 100 MB to a console form the signed-in user may not use (403) before reading it', async () => {
    const standard = await signInHttp(base, 'door-standard', PASSWORD);
    const answer = await bigPost('/job-queue/x/hold', 100, { cookie: standard.cookie, origin: base });
    expect(answer.status).toBe(403);
    expect(answer.sentMb).toBeLessThan(50);
  });

  it('refuses a console form over 256 KB as it arrives (413), signed in and allowed', async () => {
    const admin = await signInHttp(base, 'door-admin', PASSWORD);
    const answer = await bigPost('/job-queue/x/hold', 2, { cookie: admin.cookie, origin: base, 'x-csrf-token': admin.csrf });
    expect(answer.status).toBe(413);
  });

  it('answers an API route without credentials 401 before reading its body, as the console does', async () => {
    const answer = await bigPost(`${API}/bulkImportRequests`, 100, { 'content-type': 'application/json' });
    expect(answer.status).toBe(401);
    expect(answer.sentMb).toBeLessThan(50);
  });
});

describe('passwords are bounded before anything is done with them', () => {
  const huge = '\ufdfa'.repeat(5_000_000); // 15 MB of UTF-8; NFKC would make it 18 times longer
  /** `huge` in a form: each character's three UTF-8 bytes percent-encoded (`%EF%B7%BA`). */
  const HUGE_FORM_BYTES = huge.length * '%EF%B7%BA'.length;

  it('the sign-in form refuses a 15 MB password at once (413: the form is larger than a form may be)', async () => {
    const form = await fetch(`${base}/login`);
    const loginCookie = setCookies(form.headers)
      .find((c) => c.startsWith('ifw_login='))!
      .split(';')[0]!;
    const answer = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie, origin: base },
      // new URLSearchParams({ userName: 'door-admin', password: huge }).toString(), as bytes made at once:
      // encoding 5 million characters (and the garbage of it) cost seconds, the request not a tenth of that.
      body: Buffer.concat([Buffer.from('userName=door-admin&password='), Buffer.alloc(HUGE_FORM_BYTES, '%EF%B7%BA')]),
    });
    expect(answer.status).toBe(413);
  });

  it('a password over 1024 bytes is refused without being normalised, hashed or verified', async () => {
    const db = await openTestDatabase();
    try {
      let verifications = 0;
      const authenticator = createAuthenticator({
        directory: createDirectory(db.db.kysely, systemClock),
        clock: systemClock,
        basic: true,
        tokens: undefined,
        verifier: () => {
          verifications += 1;
          return Promise.resolve(false);
        },
      });
      for (const password of [huge, 'a'.repeat(1025), '\u20ac'.repeat(342)]) {
        await expect(authenticator.signIn('door-admin', password, '192.0.2.1')).rejects.toMatchObject({ status: 401 });
      }
      expect(verifications).toBe(0);
    } finally {
      await db.cleanup();
    }
  });

  it('the admin API refuses a new password over 1024 bytes with 400, naming the rule', async () => {
    const res = await t.inject({ method: 'PATCH', url: `${API}/users('door-standard')`, payload: { password: '\u20ac'.repeat(400) } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: 'invalidRequest', message: expect.stringContaining('1024 bytes in UTF-8') } });
  });
});

describe('headers of every console answer', () => {
  it('the sign-in page, a page, a redirect, an error page, an asset and a refused form all carry the security headers', async () => {
    const admin = await signInHttp(base, 'door-admin', PASSWORD);
    const answers = [
      await fetch(`${base}/login`),
      await fetch(`${base}/`, { headers: { cookie: admin.cookie } }),
      await fetch(`${base}/`, { redirect: 'manual' }),
      await fetch(`${base}/requests/not-a-request`, { headers: { cookie: admin.cookie } }),
      await fetch(`${base}/assets/htmx.min.js`),
      await fetch(`${base}/job-queue/x/hold`, { method: 'POST', redirect: 'manual', headers: { cookie: admin.cookie } }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 303, 404, 200, 403]);
    for (const answer of answers)
      for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS)) expect(answer.headers.get(name), name).toBe(value);
    expect(CONSOLE_SECURITY_HEADERS['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(CONSOLE_SECURITY_HEADERS['content-security-policy']).toContain("script-src 'self'");
  });

  it('every console route, signed in and signed out, GET and POST, answers with the security headers', async () => {
    const admin = await signInHttp(base, 'door-admin', PASSWORD);
    const standard = await signInHttp(base, 'door-standard', PASSWORD);
    const routes = declaredRoutes(t.service.app).filter((r) => r.session && (r.method === 'GET' || r.method === 'POST'));
    expect(routes.length).toBeGreaterThan(40);
    const KEYS: Readonly<Record<string, string>> = { no: '10', name: 'customer', code: 'no-such-code', key: 'door-standard' };
    const statuses = new Set<number>();
    const check = async (label: string, answer: Response) => {
      await answer.arrayBuffer();
      statuses.add(answer.status);
      const csp = answer.headers.get('content-security-policy') ?? '';
      expect(csp, label).toContain("default-src 'self'");
      expect(csp, label).toContain("frame-ancestors 'none'");
      expect(
        /script-src[^;]*'unsafe-inline'/.test(csp) || (!csp.includes('script-src') && /default-src[^;]*'unsafe-inline'/.test(csp)),
        label,
      ).toBe(false);
      expect(answer.headers.get('x-frame-options'), label).toBe('DENY');
      expect(answer.headers.get('x-content-type-options'), label).toBe('nosniff');
      expect(answer.headers.get('referrer-policy'), label).toBe('same-origin');
    };
    for (const route of routes) {
      const url = route.url.replace(/:([A-Za-z]+)/g, (_m, name: string) => KEYS[name] ?? 'x');
      const label = `${route.method} ${url}`;
      if (route.method === 'GET') {
        await check(`${label} (admin)`, await fetch(`${base}${url}`, { redirect: 'manual', headers: { cookie: admin.cookie } }));
        await check(`${label} (standard)`, await fetch(`${base}${url}`, { redirect: 'manual', headers: { cookie: standard.cookie } }));
        await check(
          `${label} (hostile query)`,
          await fetch(`${base}${url}?page=%00&status=a&status=b`, { redirect: 'manual', headers: { cookie: admin.cookie } }),
        );
      } else {
        // Without the form's token: refused (403) before the handler runs, so nothing changes.
        const post = (cookie: string) =>
          fetch(`${base}${url}`, {
            method: 'POST',
            redirect: 'manual',
            headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: base },
            body: '',
          });
        await check(`${label} (admin, no token)`, await post(admin.cookie));
        await check(`${label} (standard)`, await post(standard.cookie));
      }
      await check(`${label} (signed out)`, await fetch(`${base}${url}`, { method: route.method, redirect: 'manual' }));
    }
    // A POST that runs (a redirect after it) and one that answers a page.
    await check(
      'POST /rest/connections/x/test',
      await fetch(`${base}/rest/connections/no-such/test`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: admin.cookie, 'content-type': 'application/x-www-form-urlencoded', origin: base },
        body: new URLSearchParams({ _csrf: admin.csrf }).toString(),
      }),
    );
    await check('GET /assets/nothing', await fetch(`${base}/assets/nothing`));
    for (const status of [200, 303, 400, 403, 404]) expect([...statuses], `status ${status} was seen`).toContain(status);
  });

  it('a console query that breaks its schema answers the 400 page in words', async () => {
    const admin = await signInHttp(base, 'door-admin', PASSWORD);
    const answer = await admin.get('/requests?status=Failed&status=Completed');
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toMatch(/text\/html/);
    expect(answer.text).toContain('Cannot do that');
    expect(answer.text).toContain('query parameter status must be a string');
  });

  it('API answers carry nosniff too', async () => {
    const res = await fetch(`${base}${API}/integrations`, { headers: t.headers });
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const refused = await fetch(`${base}${API}/integrations`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
