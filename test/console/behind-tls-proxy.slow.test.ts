/**
 * The console in a real browser as it is deployed and as it is attacked: behind a TLS-terminating
 * reverse proxy (sign-in works once IFW_TRUST_PROXY names the proxy, and the session cookie is Secure),
 * framed by another site (refused), and under its Content-Security-Policy (every page works without a
 * single violation).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, PASSWORD, screenshot, signIn, startConsole, type ConsoleFixture } from '../helpers/browser.js';
import { startTlsProxy, type TlsProxy } from '../helpers/tls-proxy.js';

const available = browserAvailable();

async function signInThroughProxy(c: ConsoleFixture, proxy: TlsProxy): Promise<{ context: BrowserContext; landed: string }> {
  const context = await c.browser.newContext({ ignoreHTTPSErrors: true });
  const page = await context.newPage();
  await page.goto(`${proxy.origin}/login`);
  await page.getByLabel('User name').fill(await c.user('SUPER'));
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForLoadState('load');
  await screenshot(page, 'sign-in-behind-proxy');
  return { context, landed: page.url() };
}

describe.runIf(available)('the console behind a TLS-terminating proxy', { timeout: 90_000 }, () => {
  it('signs in with IFW_TRUST_PROXY naming the proxy, and the session cookie is Secure', async () => {
    const c = await startConsole({ config: { trustProxy: ['127.0.0.1'] } });
    const proxy = await startTlsProxy(c.base);
    try {
      const { context, landed } = await signInThroughProxy(c, proxy);
      expect(landed).toBe(`${proxy.origin}/`);
      const session = (await context.cookies()).find((cookie) => cookie.name === 'ifw_session');
      expect(session).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict' });
      const page = context.pages()[0]!;
      await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
      await context.close();
    } finally {
      await proxy.close();
      await c.close();
    }
  });

  it('without IFW_TRUST_PROXY, the browser’s https Origin does not match what the service sees: sign-in is refused', async () => {
    const c = await startConsole();
    const proxy = await startTlsProxy(c.base);
    try {
      const { context, landed } = await signInThroughProxy(c, proxy);
      expect(landed).toBe(`${proxy.origin}/login`);
      await context.pages()[0]!.getByText('The sign-in form expired or came from another site').waitFor();
      await context.close();
    } finally {
      await proxy.close();
      await c.close();
    }
  });
});

describe.runIf(available)('the console refuses framing and runs under its CSP', { timeout: 90_000 }, () => {
  let c: ConsoleFixture;
  let framer: http.Server;
  let framerOrigin: string;

  beforeAll(async () => {
    c = await startConsole({ workers: true });
    // Another site (another port is another origin) that frames the console.
    framer = http.createServer((_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!doctype html><title>framer</title><iframe src="${c.base}/login" width="800" height="600"></iframe>`);
    });
    await new Promise<void>((resolve) => framer.listen(0, '127.0.0.1', resolve));
    framerOrigin = `http://127.0.0.1:${(framer.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    framer?.closeAllConnections();
    await new Promise((resolve) => framer?.close(resolve));
    await c?.close();
  });

  it('shows nothing of the console inside another site’s frame', async () => {
    const context = await c.browser.newContext();
    const page = await context.newPage();
    await page.goto(framerOrigin);
    await page.waitForTimeout(500);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame).toBeDefined();
    expect(frame!.url()).not.toBe(`${c.base}/login`);
    expect(await frame!.locator('input[name="userName"]').count()).toBe(0);
    await screenshot(page, 'framed-console-refused');
    await context.close();
  });

  it('every section works with no Content-Security-Policy violation', async () => {
    const context = await c.browser.newContext();
    // Runs in every page before its own scripts, through the browser's debugging protocol (not inline).
    // (Strings, so that this file needs no DOM types: they run in the page.)
    await context.addInitScript(`window.__violations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`);
    const violations = () => page.evaluate<string[]>('window.__violations');
    const page = await context.newPage();
    await signIn(page, c.base, await c.user('SUPER'), PASSWORD);
    for (const path of [
      '/',
      '/requests',
      '/integrations',
      '/integrations/10',
      '/integrations/10/try',
      '/tables',
      '/rest',
      '/runs',
      '/job-queue',
      '/workers',
      '/users',
    ]) {
      await page.goto(`${c.base}${path}`);
      await page.waitForLoadState('load');
      // htmx loaded (from the service, as the CSP allows) and processed the page.
      await page.waitForFunction(`'htmx' in window`);
      expect(await violations(), path).toEqual([]);
    }
    // A live region refreshes through htmx under the CSP.
    await page.goto(`${c.base}/job-queue`);
    const refreshed = page.waitForResponse((r) => r.url() === `${c.base}/job-queue` && r.request().headers()['hx-request'] === 'true');
    expect((await refreshed).status()).toBe(200);
    expect(await violations()).toEqual([]);
    await context.close();
  });
});
