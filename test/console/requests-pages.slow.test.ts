/**
 * The admin console in a real browser: signing in, the dashboard, Bulk Import Requests going live from
 * Pending to Completed, a Failed request's record errors, cancelling a Pending request while the
 * processor is On Hold, and a VENDOR IF STANDARD user who is offered none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API } from '../helpers/service.js';
import {
  browserAvailable,
  expectAccessible,
  expectKeyboardReachable,
  screenshot,
  startConsole,
  type ConsoleFixture,
} from '../helpers/browser.js';

const available = browserAvailable();

describe.runIf(available)('admin console: bulk import requests in the browser', { timeout: 90_000 }, () => {
  let c: ConsoleFixture;

  beforeAll(async () => {
    c = await startConsole({ workers: true });
  });

  afterAll(async () => {
    await c?.close();
  });

  async function api(method: string, url: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(`${c.base}${API}/${url}`, {
      method,
      headers: { ...c.t.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  }

  const submit = async (records: unknown[]): Promise<string> => {
    const answer = await api('POST', 'bulkImportRequests', { integrationSortingOrder: 10, payload: JSON.stringify(records) });
    expect(answer.status).toBe(202);
    return answer.json.requestId as string;
  };

  it('signs in, shows the dashboard with its sections, accessible and keyboard-reachable', async () => {
    const page = await c.signedIn('SUPER');
    await expect.poll(() => page.title()).toContain('Dashboard');
    await page.getByRole('heading', { name: 'Bulk import requests, last 24 hours' }).waitFor();
    await page.getByRole('heading', { name: 'Job queue' }).waitFor();
    await expectAccessible(page);
    await expectKeyboardReachable(page);
    await screenshot(page, 'dashboard');
    await page.context().close();
  });

  it('shows a request submitted through the API go from Pending to Completed in the list without reloading', async () => {
    const page = await c.signedIn('SUPER');
    // Hold the processor so that the request is seen Pending first.
    expect((await api('POST', "jobQueueEntries('bulk-import-processor')/Microsoft.NAV.setOnHold")).status).toBe(200);
    await page.goto(`${c.base}/requests`);
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    const id = await submit([{ no: 'UI-1', name: 'Browser Customer', address: { city: 'Oslo' } }]);
    const row = page.locator(`tr[data-request="${id}"]`);
    await row.getByText('Pending').waitFor();
    await screenshot(page, 'requests-pending');
    expect((await api('POST', "jobQueueEntries('bulk-import-processor')/Microsoft.NAV.setReady")).status).toBe(200);
    await row.getByText('Completed').waitFor();
    expect(navigations).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'requests-completed');
    await page.context().close();
  });

  it('opens a Failed request and reads its record errors', async () => {
    const id = await submit([{ no: 'UI-2' }]);
    const page = await c.signedIn('SUPER');
    await page.goto(`${c.base}/requests/${id}`);
    await page.locator('#request').getByText('Failed').first().waitFor();
    await page.getByRole('heading', { name: /Record errors \(1\)/ }).waitFor();
    const errors = page.locator('table').last();
    expect(await errors.innerText()).toMatch(/name/);
    await expectAccessible(page);
    await expectKeyboardReachable(page);
    await screenshot(page, 'request-failed');
    // Neither action applies to a Failed request: both buttons are there, disabled, with the reason.
    expect(await page.getByRole('button', { name: 'Cancel request' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Reset to Pending' }).isDisabled()).toBe(true);
    await page.context().close();
  });

  it('cancels a Pending request while the processor is On Hold, after a confirmation', async () => {
    expect((await api('POST', "jobQueueEntries('bulk-import-processor')/Microsoft.NAV.setOnHold")).status).toBe(200);
    const id = await submit([{ no: 'UI-3', name: 'Never imported' }]);
    const page = await c.signedIn('SUPER');
    await page.goto(`${c.base}/`);
    // The dashboard warns while the processor is On Hold, with the spec's troubleshooting hint.
    await page
      .getByRole('alert')
      .getByText(/job queue processor is not running/)
      .waitFor();
    await screenshot(page, 'dashboard-on-hold');
    await page.goto(`${c.base}/requests/${id}`);
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await page.getByRole('button', { name: 'Cancel request' }).click();
    await page.getByRole('status').getByText(`Request ${id} was cancelled.`).waitFor();
    expect(asked).toContain('Cancel request');
    await page.locator('#request').getByText('Cancelled').first().waitFor();
    const polled = await api('GET', `bulkImportRequests(${id})`);
    expect(polled.json.status).toBe('Cancelled');
    expect((await api('POST', "jobQueueEntries('bulk-import-processor')/Microsoft.NAV.setReady")).status).toBe(200);
    await screenshot(page, 'request-cancelled');
    await page.context().close();
  });

  it('offers a VENDOR IF STANDARD user no bulk import pages or actions, and answers 403 on their URLs', async () => {
    const id = await submit([{ no: 'UI-4', name: 'Standard cannot see' }]);
    const page = await c.signedIn('VENDOR IF STANDARD');
    await page.goto(`${c.base}/`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Dashboard' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Bulk Import Requests' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Bulk import requests, last 24 hours' }).count()).toBe(0);
    for (const url of ['/requests', `/requests/${id}`]) {
      const response = await page.goto(`${c.base}${url}`);
      expect(response?.status()).toBe(403);
      await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    }
    await screenshot(page, 'standard-forbidden');
    // A form post straight to the action, with the user's own valid CSRF token, is refused too.
    const token = await page.locator('input[name="_csrf"]').first().getAttribute('value');
    const post = await page.request.post(`${c.base}/requests/${id}/cancel`, { form: { _csrf: token ?? '' }, maxRedirects: 0 });
    expect(post.status()).toBe(403);
    expect((await api('GET', `bulkImportRequests(${id})`)).json.status).not.toBe('Cancelled');
    await page.context().close();
  });
});
