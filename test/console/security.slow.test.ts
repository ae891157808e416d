/**
 * The admin console's security, over real sockets against a real service: text from payloads, remote
 * APIs and error messages renders as text; forms without the session's CSRF token, or from another
 * origin, are refused and change nothing; the session cookie's attributes; logout and expiry end a
 * session; no page's HTML carries a secret; the sign-in throttle is the Basic one. Where chromium is
 * present, the same pages are opened in the browser to show that no injected script runs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { createSessions } from '../../src/console/sessions.js';
import { createAccounts } from '../../src/accounts/accounts.js';
import { findUser } from '../../src/auth/store.js';
import { cookie } from '../../src/console/cookies.js';
import { API, startTestService, type TestService } from '../helpers/service.js';
import { openTestDatabase } from '../helpers/db.js';
import { CHROMIUM, browserAvailable } from '../helpers/browser.js';
import { until } from '../helpers/until.js';
import { movableClock } from '../helpers/clock.js';
import { setCookies, signInHttp, type Browserless } from '../helpers/console-http.js';

const XSS = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`;
const SECRET_PASSWORD = 'remote-basic-secret-Zq81';
const SECRET_CLIENT = 'remote-oauth-secret-Kp27';
const PASSWORD = 'console-security-pass-1';

/** What the markup may not contain for XSS to render as text. */
function expectInert(markup: string): void {
  expect(markup).not.toContain('<script>alert');
  expect(markup).not.toContain('<img src=x');
  expect(markup).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
}

describe('console sessions: idle and absolute expiry', () => {
  it('ends a session after the idle time without activity, and after the absolute time whatever the activity', async () => {
    const t = await openTestDatabase();
    try {
      const clock = manualClock('2026-11-24T08:00:00Z');
      const sessions = createSessions(t.db.kysely, clock, { idleMs: 30 * 60_000, absoluteMs: 2 * 3_600_000, maxPerUser: 10 });
      const accounts = createAccounts(t.db.kysely, { clock });
      await accounts.createUser({ userName: 'alice', password: 'alice-password-1' });
      const alice = (await findUser(t.db.kysely, 'alice'))!;
      const idle = await sessions.create(alice.userId, alice.securityStamp);
      clock.advance(29 * 60_000);
      expect(await sessions.resume(idle.token)).toBeDefined();
      clock.advance(31 * 60_000);
      expect(await sessions.resume(idle.token)).toBeUndefined();

      const busy = await sessions.create(alice.userId, alice.securityStamp);
      for (let minutes = 0; minutes < 115; minutes += 5) {
        clock.advance(5 * 60_000);
        expect(await sessions.resume(busy.token)).toBeDefined();
      }
      clock.advance(5 * 60_000);
      expect(await sessions.resume(busy.token)).toBeUndefined();
      // The table keeps no token, only its hash.
      const rows = await t.db.kysely.selectFrom('ifw_console_session').selectAll().execute();
      expect(JSON.stringify(rows)).not.toContain(busy.token);
    } finally {
      await t.cleanup();
    }
  });

  it('marks cookies Secure when the console is served over https', () => {
    expect(cookie('ifw_session', 'x', { secure: true })).toBe('ifw_session=x; Path=/; HttpOnly; SameSite=Strict; Secure');
    expect(cookie('ifw_session', 'x', { secure: false })).toBe('ifw_session=x; Path=/; HttpOnly; SameSite=Strict');
  });
});

describe('admin console security over real sockets', { timeout: 90_000 }, () => {
  let t: TestService;
  let base: string;
  let remote: http.Server;
  let remoteOrigin: string;
  let admin: Browserless;
  let failedRequestId: string;
  // The service's clock: the sign-in throttle's waits pass by moving it, not by sleeping.
  const clock = movableClock();

  beforeAll(async () => {
    t = await startTestService({ clock, workers: true, config: { host: '127.0.0.1', port: 0 } });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    await t.service.accounts.createUser({ userName: 'sec-admin', password: PASSWORD, permissionSets: ['SUPER'] });
    admin = await signInHttp(base, 'sec-admin', PASSWORD);

    // A remote API whose records carry markup.
    remote = http.createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ data: [{ id: 1, name: XSS }], next: null }));
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    remoteOrigin = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;

    const call = async (method: string, url: string, body?: unknown) => {
      const r = await fetch(`${base}${API}/${url}`, {
        method,
        headers: { ...t.headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: r.status, json: (await r.json()) as Record<string, unknown> };
    };
    expect(
      (
        await call('POST', 'restApiConnections', {
          code: 'xss',
          baseUrl: remoteOrigin,
          authType: 'basic',
          username: 'svc',
          password: SECRET_PASSWORD,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call('POST', 'restApiConnections', {
          code: 'oauth',
          baseUrl: remoteOrigin,
          authType: 'oauth2ClientCredentials',
          tokenUrl: `${remoteOrigin}/token`,
          clientId: 'ifw',
          clientSecret: SECRET_CLIENT,
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call('POST', 'restApiEndpoints', {
          code: 'xss-records',
          connectionCode: 'xss',
          path: 'records',
          integrationSortingOrder: 10,
          paginationType: 'nextLink',
          nextLinkJsonPath: 'next',
          responseDataPath: 'data',
        })
      ).status,
    ).toBe(201);

    // A request that fails with the payload value in its record error.
    const submitted = await call('POST', 'bulkImportRequests', {
      integrationSortingOrder: 10,
      payload: JSON.stringify([{ no: XSS, name: 'x' }]),
    });
    expect(submitted.status).toBe(202);
    failedRequestId = submitted.json.requestId as string;
    await until(async () => (await call('GET', `bulkImportRequests(${failedRequestId})`)).json.status === 'Failed');
  });

  afterAll(async () => {
    await new Promise((resolve) => remote?.close(resolve));
    await t?.cleanup();
  });

  it('sets the session cookie HttpOnly, SameSite=Strict, path /, not Secure over plain http', async () => {
    const form = await fetch(`${base}/login`);
    const loginCookie = setCookies(form.headers)[0]!;
    expect(loginCookie).toMatch(/HttpOnly/);
    expect(loginCookie).toMatch(/SameSite=Strict/);
    const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
    const answer = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie.split(';')[0]!, origin: base },
      body: new URLSearchParams({ _csrf: token, userName: 'sec-admin', password: PASSWORD }).toString(),
    });
    const session = setCookies(answer.headers).find((c) => c.startsWith('ifw_session='))!;
    expect(session.split('; ').slice(1).sort()).toEqual(['HttpOnly', 'Path=/', 'SameSite=Strict']);
  });

  it('renders a payload value in a record error, a remote record and an error message as text', async () => {
    const request = await admin.get(`/requests/${failedRequestId}`);
    expect(request.status).toBe(200);
    expectInert(request.text);

    const tried = await admin.post('/integrations/10/try', { _csrf: admin.csrf, payload: JSON.stringify([{ no: 'T-1', name: XSS }]) });
    expect(tried.status).toBe(200);
    expectInert(tried.text);

    const preview = await admin.post('/rest/endpoints/xss-records/preview', { _csrf: admin.csrf });
    expect(preview.status).toBe(200);
    expect(preview.text).toContain('1 record');
    expectInert(preview.text);

    const badFilter = await admin.get(`/tables/customer?filter=${encodeURIComponent(`name eq ${XSS}`)}`);
    expect(badFilter.status).toBe(200);
    expect(badFilter.text).toContain('role="alert"');
    expectInert(badFilter.text);

    const missing = await admin.get(`/requests/${encodeURIComponent(XSS)}`);
    expect(missing.status).toBe(404);
    expect(missing.text).not.toContain('<script>alert');
  });

  it('refuses a form post without the session CSRF token or from another origin, and changes nothing', async () => {
    // Ready or In Process (Set Ready wakes the processor at once); never On Hold unless the form went through.
    const held = async () =>
      (await t.inject({ method: 'GET', url: `${API}/jobQueueEntries('bulk-import-processor')` })).json<{ status: string }>().status;
    expect(await held()).not.toBe('On Hold');
    const noToken = await admin.post('/job-queue/bulk-import-processor/hold', {});
    expect(noToken.status).toBe(403);
    expect(noToken.text).toMatch(/security token/);
    const wrongToken = await admin.post('/job-queue/bulk-import-processor/hold', { _csrf: 'x'.repeat(admin.csrf.length) });
    expect(wrongToken.status).toBe(403);
    const foreign = await admin.post('/job-queue/bulk-import-processor/hold', { _csrf: admin.csrf }, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(await held()).not.toBe('On Hold');
    // A cross-site form carries no cookie (SameSite=Strict) and so is sent to sign-in, unchanged.
    const noCookie = await fetch(`${base}/job-queue/bulk-import-processor/hold`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: '',
    });
    expect(noCookie.status).toBe(303);
    expect(noCookie.headers.get('location')).toBe('/login');
    expect(await held()).not.toBe('On Hold');

    const allowed = await admin.post('/job-queue/bulk-import-processor/hold', { _csrf: admin.csrf });
    expect(allowed.status).toBe(303);
    expect(await held()).toBe('On Hold');
    expect((await admin.post('/job-queue/bulk-import-processor/ready', {}, { 'x-csrf-token': admin.csrf })).status).toBe(303);
    expect(await held()).not.toBe('On Hold');
  });

  it('never puts a secret in any page it can reach', async () => {
    const seen = new Set<string>();
    const queue = ['/', '/rest/connections/xss', '/rest/connections/oauth', '/rest/endpoints/xss-records', '/users', '/users/sec-admin'];
    while (queue.length > 0 && seen.size < 150) {
      const next = queue.shift()!;
      if (seen.has(next)) continue;
      seen.add(next);
      const page = await admin.get(next);
      expect(page.text).not.toContain(SECRET_PASSWORD);
      expect(page.text).not.toContain(SECRET_CLIENT);
      expect(page.text).not.toContain(PASSWORD);
      for (const [, href] of page.text.matchAll(/href="(\/[^"]*)"/g)) {
        const local = href!.replace(/&amp;/g, '&');
        if (!local.startsWith('/assets/') && !local.startsWith('//') && !seen.has(local)) queue.push(local);
      }
    }
    expect(seen.size).toBeGreaterThan(15);
    const tested = await admin.post('/rest/connections/xss/test', { _csrf: admin.csrf });
    expect(tested.text).not.toContain(SECRET_PASSWORD);
    const card = await admin.get('/rest/connections/xss');
    expect(card.text).toMatch(/Password[\s\S]*set/);
  });

  it('ends the session on logout: the old cookie signs in no one', async () => {
    const user = await signInHttp(base, 'sec-admin', PASSWORD);
    expect((await user.get('/integrations')).status).toBe(200);
    const out = await user.post('/logout', { _csrf: user.csrf });
    expect(out.status).toBe(303);
    expect(setCookies(out.headers).find((c) => c.startsWith('ifw_session='))).toMatch(/Max-Age=0/);
    const after = await user.get('/integrations');
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/login?next=%2Fintegrations');
  });

  it.runIf(browserAvailable())('runs none of the injected scripts in the browser', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
    try {
      const context = await browser.newContext();
      await context.addCookies([{ name: 'ifw_session', value: admin.cookie.split('=')[1]!, url: base }]);
      const page = await context.newPage();
      const dialogs: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.goto(`${base}/requests/${failedRequestId}`);
      await page.getByText('<script>alert(1)</script>').first().waitFor();
      await page.goto(`${base}/integrations/10/try`);
      await page.getByLabel(/Payload/).fill(JSON.stringify([{ no: 'T-2', name: XSS }]));
      await page.getByRole('button', { name: 'Try it' }).click();
      await page.locator('#try-result').getByText('<script>alert(1)</script>').first().waitFor();
      expect(await page.locator('img[src="x"]').count()).toBe(0);
      expect(dialogs).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it.runIf(browserAvailable())(
    'shows stored markup (an integration name, a target table row) as text: no script runs, no CSP violation, the page renders',
    async () => {
      const STORED = '<script>window.__xss=1</script><img src=x onerror=window.__xss=2>';
      const api = (method: string, url: string, body: unknown) =>
        fetch(`${base}${API}/${url}`, {
          method,
          headers: { ...t.headers, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      expect((await api('POST', 'integrations', { sortingOrder: 77, name: STORED, targetTable: 'customer', recordsPath: '' })).status).toBe(
        201,
      );
      const submitted = (await (
        await api('POST', 'bulkImportRequests', { integrationSortingOrder: 10, payload: JSON.stringify([{ no: 'XSS-1', name: STORED }]) })
      ).json()) as { requestId: string };
      await until(
        async () =>
          (
            (await (await fetch(`${base}${API}/bulkImportRequests(${submitted.requestId})`, { headers: t.headers })).json()) as {
              status: string;
            }
          ).status === 'Completed',
      );

      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
      try {
        const context = await browser.newContext();
        await context.addCookies([{ name: 'ifw_session', value: admin.cookie.split('=')[1]!, url: base }]);
        // Through the debugging protocol, before the page's own scripts (an inline script would be refused).
        await context.addInitScript(`window.__violations = [];
          document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`);
        const page = await context.newPage();
        const dialogs: string[] = [];
        page.on('dialog', (dialog) => {
          dialogs.push(dialog.message());
          void dialog.dismiss();
        });
        for (const [url, where] of [
          ['/integrations', 'main table'],
          ['/integrations/77', 'main h1'],
          ['/tables/customer?filter=no%20eq%20%27XSS-1%27', 'main table'],
        ] as const) {
          await page.goto(`${base}${url}`);
          await page.waitForLoadState('load');
          await page.waitForFunction(`'htmx' in window`);
          // The content renders, the stored markup as its text.
          await page.locator(where).getByText(STORED).first().waitFor();
          expect(await page.locator('img[src="x"]').count(), url).toBe(0);
          expect(await page.evaluate('window.__xss'), url).toBeUndefined();
          expect(await page.evaluate<string[]>('window.__violations'), url).toEqual([]);
        }
        expect(dialogs).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );

  // Last: it throttles this address for sec-admin.
  it('applies the Basic sign-in throttle to the console: after repeated failures even the right password waits', async () => {
    const signInForm = async (password: string) => {
      const form = await fetch(`${base}/login`);
      const loginCookie = setCookies(form.headers)[0]!.split(';')[0]!;
      const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
      const answer = await fetch(`${base}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie, origin: base },
        body: new URLSearchParams({ _csrf: token, userName: 'sec-admin', password }).toString(),
      });
      return { status: answer.status, retryAfter: Number(answer.headers.get('retry-after') ?? 0), text: await answer.text() };
    };
    for (let i = 0; i < 5; i++) expect((await signInForm(`wrong-password-${i}`)).status).toBe(401);
    // The 5th failure made this user wait 1 s from this address; two more failures, each after the
    // wait the service names (the service's clock moved on by it), make it 4 s.
    for (let i = 5; i < 7; i++) {
      const waiting = await signInForm(PASSWORD);
      expect(waiting.status).toBe(429);
      expect(waiting.text).toMatch(/try again in \d+ seconds/);
      clock.advance(waiting.retryAfter * 1000);
      expect((await signInForm(`wrong-password-${i}`)).status).toBe(401);
    }
    expect((await signInForm(PASSWORD)).status).toBe(429);
    const basic = await fetch(`${base}${API}/integrations`, {
      headers: { authorization: `Basic ${Buffer.from(`sec-admin:${PASSWORD}`).toString('base64')}` },
    });
    expect(basic.status).toBe(429);
  });
});
