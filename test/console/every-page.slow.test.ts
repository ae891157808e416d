/**
 * Every console page in a real browser on a phone (390 px) and on a desktop (1280 px): no page is
 * wider than the screen (wide tables scroll inside their own area), the menu collapses behind a button
 * under 800 px and opens with it, the top bar does not wrap at 1280 px, and axe-core finds no serious
 * or critical violation at either width.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API } from '../helpers/service.js';
import { browserAvailable, expectAccessible, PASSWORD, screenshot, signIn, startConsole, type ConsoleFixture } from '../helpers/browser.js';
import { PAGED_CONTACTS, startPagingServer, type PagingServer } from '../helpers/paging-server.js';
import { until } from '../helpers/until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { newWebhookSecret } from '../../src/webhooks/model.js';

const available = browserAvailable();

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

describe.runIf(available)('every console page at 390 px and at 1280 px', { timeout: 240_000 }, () => {
  let c: ConsoleFixture;
  let remote: PagingServer;
  let receiver: WebhookReceiver;
  let webhookId = '';
  const pages: string[] = [];

  async function api(method: string, url: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(`${c.base}${API}/${url}`, {
      method,
      headers: { ...c.t.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  }

  beforeAll(async () => {
    c = await startConsole({ workers: true });
    remote = await startPagingServer({ records: 25, pageSize: 10 });
    // A webhook on integration 10, told of the Failed request below (the request page's delivery log).
    const secret = newWebhookSecret();
    receiver = await startWebhookReceiver(secret);
    const hook = await api('POST', 'webhooks', { integrationSortingOrder: 10, url: receiver.url, secret, description: 'operations' });
    expect(hook.status).toBe(201);
    webhookId = hook.json.webhookId as string;
    // A Failed request (its record errors table), a REST import run (its page log), an account of each kind.
    const failed = await api('POST', 'bulkImportRequests', { integrationSortingOrder: 10, payload: JSON.stringify([{ no: 'X-1' }]) });
    expect(failed.status).toBe(202);
    const requestId = failed.json.requestId as string;
    expect((await api('POST', 'targetTables', PAGED_CONTACTS.table)).status).toBe(201);
    expect((await api('POST', 'integrations', PAGED_CONTACTS.integration)).status).toBe(201);
    expect((await api('POST', 'restApiConnections', { code: 'paging', baseUrl: remote.origin })).status).toBe(201);
    expect(
      (
        await api('POST', 'restApiEndpoints', {
          code: 'contacts',
          connectionCode: 'paging',
          path: 'next-absolute',
          integrationSortingOrder: 30,
          paginationType: 'nextLink',
          nextLinkJsonPath: 'next',
          responseDataPath: 'data',
          pageSize: 10,
        })
      ).status,
    ).toBe(201);
    const run = await api('POST', "restApiEndpoints('contacts')/Microsoft.NAV.run");
    expect(run.status).toBeLessThan(300);
    const runId = run.json.runId as string;
    await until(async () => (await api('GET', `importRuns(${runId})`)).json.status === 'Completed');
    await until(async () => (await api('GET', `bulkImportRequests(${requestId})`)).json.status === 'Failed');
    const userName = await c.user('VENDOR IF STANDARD');
    pages.push(
      '/',
      '/requests',
      `/requests/${requestId}`,
      '/requests/bulk?status=Failed&action=resubmit',
      '/integrations',
      '/integrations/new',
      '/integrations/10',
      '/integrations/10/try',
      '/webhooks?integration=10',
      `/webhooks/${webhookId}`,
      '/integrations/30',
      '/tables',
      '/tables/customer',
      '/tables/new',
      '/tables/customer/fields',
      '/integrations/from-sample',
      '/rest',
      '/rest/connections/new',
      '/rest/connections/paging',
      '/rest/endpoints/new',
      '/rest/endpoints/contacts',
      '/runs',
      `/runs/${runId}`,
      '/job-queue',
      '/workers',
      '/users',
      '/users/new',
      `/users/${userName}`,
      '/applications/new',
    );
  });

  afterAll(async () => {
    await remote?.close();
    await receiver?.close();
    await c?.close();
  });

  async function signedInAt(viewport: { width: number; height: number }): Promise<Page> {
    const context = await c.browser.newContext({ viewport });
    const page = await context.newPage();
    await signIn(page, c.base, await c.user('SUPER'), PASSWORD);
    return page;
  }

  /** How far the page is wider than the window (0: no sideways scrolling). */
  const overflow = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

  async function visit(page: Page, path: string): Promise<void> {
    const response = await page.goto(`${c.base}${path}`);
    expect(response?.status(), path).toBe(200);
    await page.waitForLoadState('load');
    await page.waitForFunction(`'htmx' in window`);
  }

  /** The focused element: its text when it is the flash, else its tag. */
  const focused = (page: Page) =>
    page.evaluate<string>(
      `(() => { const el = document.activeElement; return el?.matches('.flash') ? el.textContent : el?.tagName ?? ''; })()`,
    );

  const slug = (path: string) =>
    path
      .replace(/^\/$/, 'dashboard')
      .replace(/^\//, '')
      .replace(/[^a-z0-9]+/gi, '-');

  it('at 390 px: no page is wider than the screen, the menu is behind a button, axe finds no serious violation', async () => {
    const page = await signedInAt(PHONE);
    for (const path of pages) {
      await visit(page, path);
      expect(await overflow(page), `${path} is wider than 390 px`).toBeLessThanOrEqual(0);
      const toggle = page.getByRole('button', { name: 'Menu' });
      expect(await toggle.isVisible(), path).toBe(true);
      expect(await page.getByRole('navigation', { name: 'Main' }).isVisible(), path).toBe(false);
      await expectAccessible(page);
      await screenshot(page, `narrow-${slug(path)}`);
    }
    // The button opens the menu, says so, and the menu fits the screen.
    await visit(page, '/');
    const toggle = page.getByRole('button', { name: 'Menu' });
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.waitFor({ state: 'visible' });
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await expectAccessible(page);
    await screenshot(page, 'narrow-menu-open');
    await nav.getByRole('link', { name: 'Job Queue' }).click();
    await page.getByRole('heading', { name: 'Job Queue Entries' }).waitFor();
    await page.context().close();
  });

  it('at 390 px without script, the menu stays open and the page still fits', async () => {
    const context = await c.browser.newContext({ viewport: PHONE, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${c.base}/login`);
    await page.getByLabel('User name').fill(await c.user('SUPER'));
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([
      page.waitForURL((url) => !url.pathname.startsWith('/login')),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(await page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await context.close();
  });

  it('at 1280 px: no page is wider than the screen, the top bar is one line, axe finds no serious violation', async () => {
    const page = await signedInAt(DESKTOP);
    for (const path of pages) {
      await visit(page, path);
      expect(await overflow(page), `${path} is wider than 1280 px`).toBeLessThanOrEqual(0);
      expect(await page.getByRole('button', { name: 'Menu' }).isVisible(), path).toBe(false);
      // Every item of the navigation on one line: they share their top edge.
      const tops = await page.evaluate<number[]>(
        `Array.from(document.querySelectorAll('nav.main li')).map((li) => Math.round(li.getBoundingClientRect().top))`,
      );
      expect(tops.length, path).toBeGreaterThan(5);
      expect(new Set(tops).size, `${path}: the navigation wraps`).toBe(1);
      await expectAccessible(page);
      await screenshot(page, `wide-${slug(path)}`);
    }
    await page.context().close();
  });

  it('sends a test event from a webhook’s page; the delivery log shows it Delivered, and the request’s the event of its ending', async () => {
    const page = await signedInAt(DESKTOP);
    await visit(page, `/webhooks/${webhookId}`);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('status').filter({ hasText: 'A test event' }).waitFor();
    // Delivered by the job queue's webhooks lane (every 5 s), verified by the receiver with the standardwebhooks package.
    await until(() => receiver.events.some((e) => e.type === 'webhook.test'), { what: 'the test event at the receiver' });
    await visit(page, `/webhooks/${webhookId}`);
    const log = page.getByRole('table', { name: 'Recent deliveries' });
    await log.locator('tr[data-status="Delivered"]').filter({ hasText: 'webhook.test' }).waitFor();
    expect(receiver.refused).toEqual([]);
    const failed = receiver.events.find((e) => e.type === 'bulkImportRequest.failed');
    expect(failed).toBeDefined();
    const requestId = (failed!.body as { data: { requestId: string } }).data.requestId;
    await visit(page, `/requests/${requestId}`);
    await page
      .getByRole('table', { name: 'Webhook deliveries' })
      .locator('tr[data-status="Delivered"]')
      .filter({ hasText: 'bulkImportRequest.failed' })
      .waitFor();
    await expectAccessible(page);
    await screenshot(page, 'request-webhook-deliveries');
    await page.context().close();
  });

  it('after a submit, the focus is on its outcome: the flash after Set On Hold, the field of a refused filter', async () => {
    const page = await signedInAt(DESKTOP);
    await visit(page, '/job-queue');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Set On Hold: VENDOR IF Bulk Import Retention Cleanup' }).click();
    const flash = page.getByRole('status').filter({ hasText: 'is On Hold.' });
    await flash.waitFor();
    await expect.poll(() => focused(page)).toContain('is On Hold.');
    // The held entry has no next run time.
    const row = page.locator('tr[data-entry="retention-cleanup"]');
    await row.getByText('On Hold: not until set Ready').waitFor();
    await page.getByRole('button', { name: 'Set Ready: VENDOR IF Bulk Import Retention Cleanup' }).click();
    await page.getByRole('status').filter({ hasText: 'is Ready.' }).waitFor();
    await expect.poll(() => focused(page)).toContain('is Ready.');

    await visit(page, '/requests');
    await page.getByLabel('From (UTC)').fill('2026-11-22T10:00');
    await page.getByLabel('To (UTC)').fill('2026-11-21T10:00');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('To must not be earlier than From').waitFor();
    expect(await page.evaluate<string>(`document.activeElement?.id ?? ''`)).toBe('f-to');
    expect(await page.getByLabel('To (UTC)').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page);
    await screenshot(page, 'requests-filter-refused');
    await page.context().close();
  });

  it('at both widths the sign-in page fits and is accessible', async () => {
    for (const viewport of [PHONE, DESKTOP]) {
      const context = await c.browser.newContext({ viewport });
      const page = await context.newPage();
      await page.goto(`${c.base}/login`);
      expect(await overflow(page)).toBeLessThanOrEqual(0);
      await expectAccessible(page);
      await context.close();
    }
  });
});
