/**
 * The console's bulk actions and payload view in a real browser: choosing an action for every request
 * the filter matches, the confirmation page with the count (a plain form, with scripts off too), the
 * result listing each request with its outcome and reason; a request page showing the payload
 * pretty-printed with the record an error names marked, the download link, and Delete request.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRequest } from '../helpers/console-pages.js';
import { browserAvailable, expectAccessible, PASSWORD, screenshot, signIn, startConsole, type ConsoleFixture } from '../helpers/browser.js';

const available = browserAvailable();

describe.runIf(available)('admin console: bulk actions and the payload in the browser', { timeout: 120_000 }, () => {
  let c: ConsoleFixture;

  beforeAll(async () => {
    c = await startConsole({ workers: false });
  });
  afterAll(async () => {
    await c?.close();
  });

  const statusOf = async (id: string) =>
    (await c.t.service.db.kysely.selectFrom('ifw_bulk_import_request').select('status').where('request_id', '=', id).executeTakeFirst())
      ?.status;

  it('cancels every request the filter matches after a confirmation page that shows the count, reporting the refused one', async () => {
    const pending = await Promise.all(
      Array.from({ length: 3 }, () => seedRequest(c.t, { status: 'Pending', integrationSortingOrder: 70 })),
    );
    const completed = await seedRequest(c.t, { status: 'Completed', integrationSortingOrder: 70 });
    const other = await seedRequest(c.t, { status: 'Pending', integrationSortingOrder: 71 });
    const page = await c.signedIn('VENDOR IF ALL');
    await page.goto(`${c.base}/requests?integration=70`);
    await page.getByLabel('Every request matching the filter').selectOption('cancel');
    await page.getByRole('button', { name: 'Review…' }).click();
    await page.waitForURL((url) => url.pathname === '/requests/bulk');
    await expect.poll(() => page.locator('[data-matched]').getAttribute('data-matched')).toBe('4');
    await page.getByText('4 requests match of integration 70.').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'bulk-cancel-confirm');
    // Nothing has changed before the confirmation.
    for (const id of pending) expect(await statusOf(id)).toBe('Pending');
    await page.getByRole('button', { name: 'Cancel 4 requests' }).click();
    await page.getByRole('status').getByText('4 matched; 4 taken: 3 done, 1 refused.').waitFor();
    const refusedRow = page.locator(`tr[data-request="${completed}"]`);
    await refusedRow.getByText('Refused').waitFor();
    await refusedRow.getByText('only Pending or Processing requests can be cancelled').waitFor();
    for (const id of pending) await page.locator(`tr[data-request="${id}"]`).getByText('Cancelled', { exact: true }).first().waitFor();
    await screenshot(page, 'bulk-cancel-done');
    for (const id of pending) expect(await statusOf(id)).toBe('Cancelled');
    expect(await statusOf(completed)).toBe('Completed');
    expect(await statusOf(other)).toBe('Pending');
    await page.context().close();
  });

  it('works without script: the confirmation is a plain form', async () => {
    const failed = await Promise.all(Array.from({ length: 2 }, () => seedRequest(c.t, { status: 'Failed', integrationSortingOrder: 72 })));
    const context = await c.browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page, c.base, await c.user('VENDOR IF ALL'), PASSWORD);
    await page.goto(`${c.base}/requests?integration=72&status=Failed`);
    await page.getByLabel('Every request matching the filter').selectOption('delete');
    await page.getByRole('button', { name: 'Review…' }).click();
    await page.getByText('2 requests match with status Failed, of integration 72.').waitFor();
    await page.getByRole('button', { name: 'Delete 2 requests' }).click();
    await page.getByRole('status').getByText('2 matched; 2 taken: 2 done, 0 refused.').waitFor();
    for (const id of failed) expect(await statusOf(id)).toBeUndefined();
    await context.close();
  });

  it('shows the payload pretty-printed with the record an error names marked, downloads it, and deletes the request', async () => {
    const id = randomUUID();
    const payload = JSON.stringify([
      { no: 'P1', name: 'First' },
      { no: 'P2', name: 'Second', address: { city: 'Oslo' } },
      { no: 'P3', name: 'Third' },
    ]);
    const now = new Date().toISOString();
    const db = c.t.service.db.kysely;
    await db
      .insertInto('ifw_bulk_import_request')
      .values({
        request_id: id,
        integration_sorting_order: 10,
        payload,
        status: 'Failed',
        submitted_at: now,
        ended_at: now,
        processed_at: now,
        error_message: '1 record failed',
      })
      .execute();
    await db
      .insertInto('ifw_bulk_import_error')
      .values({ request_id: id, seq: 1, record_no: 2, field: 'name', value: 'Second', rule: 'maxLength', message: 'Name is too long' })
      .execute();
    const page = await c.signedIn('VENDOR IF ALL');
    await page.goto(`${c.base}/requests/${id}`);
    const view = page.getByLabel('Payload');
    await view.waitFor();
    // Pretty-printed: one property a line, indented.
    expect(await view.textContent()).toContain('[\n  {\n    "no": "P1",\n    "name": "First"\n  },\n  {');
    const marked = page.locator('mark[data-record]');
    expect(await marked.count()).toBe(1);
    expect(await marked.getAttribute('data-record')).toBe('2');
    expect(await marked.textContent()).toBe(
      '{\n    "no": "P2",\n    "name": "Second",\n    "address": {\n      "city": "Oslo"\n    }\n  }',
    );
    expect(await marked.getAttribute('title')).toBe('Record 2: Name is too long');
    await page.getByRole('link', { name: '2', exact: true }).click();
    await expect.poll(() => new URL(page.url()).hash).toBe('#record-2');
    await expectAccessible(page);
    await screenshot(page, 'request-payload');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download the whole payload' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${id}.json`);
    const saved = await download.path();
    const fs = await import('node:fs');
    expect(fs.readFileSync(saved, 'utf8')).toBe(payload);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete request' }).click();
    await page.waitForURL((url) => url.pathname === '/requests');
    await page.getByText(`Request ${id} was deleted.`).waitFor();
    expect(await statusOf(id)).toBeUndefined();
    await page.context().close();
  });

  it('offers Delete request only on an ended request', async () => {
    const pending = await seedRequest(c.t, { status: 'Pending' });
    const page = await c.signedIn('VENDOR IF ALL');
    await page.goto(`${c.base}/requests/${pending}`);
    await expect.poll(() => page.getByRole('button', { name: 'Delete request' }).isDisabled()).toBe(true);
    await page.getByText('Only a Completed, Failed or Cancelled request can be deleted; cancel it first.').waitFor();
    await page.context().close();
  });
});
