/**
 * Integrations in the console, in a real browser: creating one, editing its fields and mappings on the
 * card (one row each, rows added and removed, target fields suggested, errors under their input),
 * switching on bulk import, trying a payload without writing, and the job queue and target
 * table pages an administrator checks afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API } from '../helpers/service.js';
import {
  browserAvailable,
  expectAccessible,
  expectKeyboardReachable,
  screenshot,
  signIn,
  startConsole,
  type ConsoleFixture,
} from '../helpers/browser.js';

const available = browserAvailable();

describe.runIf(available)('admin console: integrations, target tables and the job queue in the browser', { timeout: 90_000 }, () => {
  let c: ConsoleFixture;

  beforeAll(async () => {
    c = await startConsole({ workers: true });
  });

  afterAll(async () => {
    await c?.close();
  });

  const submit = (sortingOrder: number, records: unknown[]) =>
    fetch(`${c.base}${API}/bulkImportRequests`, {
      method: 'POST',
      headers: { ...c.t.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ integrationSortingOrder: sortingOrder, payload: JSON.stringify(records) }),
    });

  it('creates an integration, gives it fields and mappings on its card, and switches on bulk import', async () => {
    const page = await c.signedIn('VENDOR IF ALL');
    await page.goto(`${c.base}/integrations`);
    await page.getByRole('link', { name: 'New integration' }).click();
    await page.getByLabel('Sorting Order').fill('20');
    await page.getByLabel('Name').fill('Customers from the browser');
    await page.getByLabel('Target table').selectOption('customer');
    await page.getByRole('button', { name: 'Create integration' }).click();
    await page.getByRole('status').getByText('Integration 20 was created').waitFor();

    // A new integration's card has one row, numbered 1: a field and its mapping in one row.
    expect(await page.getByLabel('Field No. (row 1)', { exact: true }).inputValue()).toBe('1');
    await page.getByLabel('Title (row 1)', { exact: true }).fill('No.');
    await page.getByLabel('Source path (row 1)').fill('no');
    await page.getByLabel('Target field (row 1)').selectOption('no');
    await page.getByLabel('Required (row 1)').check();
    await page.getByLabel('Name', { exact: true }).fill('Customers, from the browser');
    // Add a row: the card comes back with everything typed, a new row numbered 2 and the focus in it.
    await page.getByRole('button', { name: 'Add a row' }).click();
    await page.getByLabel('Field No. (row 2)', { exact: true }).waitFor();
    expect(await page.getByLabel('Field No. (row 2)', { exact: true }).inputValue()).toBe('2');
    expect(await page.locator(':focus').getAttribute('name')).toBe('row.1.title');
    expect(await page.getByLabel('Target field (row 1)').inputValue()).toBe('no');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Customers, from the browser');
    // A source path whose last segment names a target field fills it in on the next round trip.
    await page.getByLabel('Source path (row 2)').fill('contact.name');
    await page.getByRole('button', { name: 'Add a row' }).click();
    await page.getByLabel('Field No. (row 3)', { exact: true }).waitFor();
    expect(await page.getByLabel('Target field (row 2)').inputValue()).toBe('name');
    expect(await page.getByLabel('Title (row 2)', { exact: true }).inputValue()).toBe('name');
    await page.getByText('A target field was filled in').waitFor();
    await page.getByRole('button', { name: 'Remove row 3' }).click();
    await page.getByLabel('Field No. (row 2)', { exact: true }).waitFor();
    expect(await page.getByLabel('Field No. (row 3)', { exact: true }).count()).toBe(0);
    await page.getByLabel('Source path (row 2)').fill('name');
    await page.getByLabel('Accept Bulk Import Requests').check();
    // Enter in a field saves the card (the first submit button of the form is Save, not Remove row 1).
    await page.getByLabel('Max Payload Size (KB)').fill('64');
    await page.getByLabel('Max Payload Size (KB)').press('Enter');
    await page.getByRole('status').getByText('Integration 20 was saved.').waitFor();
    expect(await page.getByLabel('Accept Bulk Import Requests').isChecked()).toBe(true);
    const mappings = await fetch(`${c.base}${API}/integrations(20)/mappings`, { headers: c.t.headers });
    expect(((await mappings.json()) as { value: unknown[] }).value).toEqual([
      expect.objectContaining({ fieldNo: 1, targetField: 'no', required: true }),
      expect.objectContaining({ fieldNo: 2, targetField: 'name', required: false }),
    ]);
    await expectAccessible(page);
    await expectKeyboardReachable(page);
    await screenshot(page, 'integration-card');

    const answer = await submit(20, [{ no: 'B-1', name: 'From the browser' }]);
    expect(answer.status).toBe(202);
    await page.context().close();
  });

  it("shows a refused card's error under its input, in words, focused, keeping what was typed", async () => {
    const page = await c.signedIn('VENDOR IF ALL');
    await page.goto(`${c.base}/integrations/20`);
    await page.getByLabel('Source path (row 2)').fill('');
    await page.getByLabel('Title (row 2)', { exact: true }).fill('Name, typed again');
    await page.getByRole('button', { name: 'Save integration' }).click();
    const error = page.locator('[id="row.1.sourcePath-error"]');
    await error.getByText(/^Fields, row 2, Source path: a standard column says where its value sits/).waitFor();
    await page
      .getByRole('alert')
      .getByText(/Not saved: Fields, row 2, Source path/)
      .waitFor();
    expect(await page.getByLabel('Source path (row 2)').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(':focus').getAttribute('name')).toBe('row.1.sourcePath');
    expect(await page.getByLabel('Title (row 2)', { exact: true }).inputValue()).toBe('Name, typed again');
    await expectAccessible(page);
    await screenshot(page, 'integration-card-error');

    // Without mappings, bulk import cannot stay on: said under the checkbox, which takes the focus.
    await page.getByLabel('Source path (row 2)').fill('name');
    await page.getByLabel('Target field (row 1)').selectOption('');
    await page.getByLabel('Target field (row 2)').selectOption('');
    await page.getByRole('button', { name: 'Save integration' }).click();
    await page
      .getByRole('alert')
      .getByText(/Not saved: Accept Bulk Import Requests: .*mappings/)
      .waitFor();
    expect(await page.locator(':focus').getAttribute('id')).toBe('acceptBulkImportRequests');
    const stored = await fetch(`${c.base}${API}/integrations(20)/mappings`, { headers: c.t.headers });
    expect(((await stored.json()) as { value: unknown[] }).value).toHaveLength(2);
    await page.context().close();
  });

  it('tries a payload through the integration without writing: how the request would end, and the exact errors', async () => {
    const page = await c.signedIn('VENDOR IF ALL');
    await page.goto(`${c.base}/integrations/20`);
    await page.getByRole('link', { name: 'Try a payload' }).click();
    await page.getByLabel(/Payload/).fill(JSON.stringify([{ no: 'T-1', name: 'Would be written' }, { name: 'No key' }]));
    await page.getByRole('button', { name: 'Try it' }).click();
    const result = page.locator('#try-result');
    // On record error = fail: one bad record fails the request, as the real import would.
    await result.getByText('The import would end Failed: nothing would be written.').waitFor();
    expect(await result.innerText()).toContain('2 records found, 1 error.');
    expect(await result.innerText()).toContain('Would be written');
    expect(await result.innerText()).toMatch(/record 2: field "no" is required/);
    await expectAccessible(page);
    await screenshot(page, 'try-payload');
    const rows = await fetch(`${c.base}${API}/targetTables('customer')/rows?$filter=no eq 'T-1'`, { headers: c.t.headers });
    expect(((await rows.json()) as { value: unknown[] }).value).toEqual([]);
    await page.context().close();
  });

  it('shows a target table with its fields and filtered rows, and the job queue with its actions', async () => {
    const page = await c.signedIn('SUPER');
    await page.goto(`${c.base}/tables/customer`);
    await page.getByRole('heading', { name: /Rows/ }).waitFor();
    await page.getByLabel('Filter', { exact: true }).fill("no eq 'B-1'");
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('cell', { name: 'From the browser' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Rows (1)' }).count()).toBe(1);
    await expectAccessible(page);
    await screenshot(page, 'target-table');

    await page.goto(`${c.base}/job-queue`);
    const row = page.locator('tr[data-entry="bulk-import-processor"]');
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Set On Hold' }).click();
    await page.locator('tr[data-entry="bulk-import-processor"]').locator('.status').getByText('On Hold').waitFor();
    await page.locator('tr[data-entry="bulk-import-processor"]').getByRole('button', { name: 'Set Ready' }).click();
    await page.locator('tr[data-entry="bulk-import-processor"]').locator('.status').getByText('Ready').waitFor();
    await page.locator('tr[data-entry="bulk-import-processor"]').getByRole('button', { name: 'Run now' }).click();
    await page
      .getByRole('status')
      .getByText(/is due now/)
      .waitFor();
    await expectAccessible(page);
    await expectKeyboardReachable(page);
    await screenshot(page, 'job-queue');
    await page.context().close();
  });

  it('lets SUPER create a user, grant permission sets, reset the password and disable the user', async () => {
    const page = await c.signedIn('SUPER');
    await page.goto(`${c.base}/users`);
    await page.getByRole('link', { name: 'New user' }).click();
    await page.getByLabel('User name').fill('new.operator');
    await page.getByLabel('Password').fill('first-password-123');
    await page.getByLabel('VENDOR IF STANDARD').check();
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('status').getByText('User new.operator created.').waitFor();
    expect(await page.content()).not.toContain('first-password-123');

    await page.getByLabel('VENDOR IF STANDARD').uncheck();
    await page.getByLabel('VENDOR IF ALL').check();
    await page.getByRole('button', { name: 'Save permission sets' }).click();
    await page.getByRole('status').getByText('Permission sets saved; new.operator was signed out of the console.').waitFor();
    expect((await c.t.service.accounts.getUser('new.operator')).permissionSets).toEqual(['VENDOR IF ALL']);

    // The new user signs in with the first password; a reset ends that session.
    const other = await c.browser.newContext();
    const userPage = await other.newPage();
    await signIn(userPage, c.base, 'new.operator', 'first-password-123');
    await page.getByLabel('New password').fill('second-password-456');
    await page.getByRole('button', { name: 'Reset password' }).click();
    await page
      .getByRole('status')
      .getByText(/Password of new.operator reset/)
      .waitFor();
    await userPage.goto(`${c.base}/integrations`);
    expect(new URL(userPage.url()).pathname).toBe('/login');
    await signIn(userPage, c.base, 'new.operator', 'second-password-456');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('status').getByText('new.operator is disabled.').waitFor();
    await userPage.goto(`${c.base}/integrations`);
    expect(new URL(userPage.url()).pathname).toBe('/login');
    await expectAccessible(page);
    await expectKeyboardReachable(page);
    await screenshot(page, 'user-card');

    // Applications are registered the same way.
    await page.goto(`${c.base}/users`);
    await page.getByRole('link', { name: 'New application' }).click();
    await page.getByLabel('Client id').fill('erp-nightly');
    await page.getByLabel('Display name').fill('ERP nightly load');
    await page.getByLabel('VENDOR IF STANDARD').check();
    await page.getByRole('button', { name: 'Register application' }).click();
    await page.getByRole('status').getByText('Application erp-nightly registered.').waitFor();
    await page.goto(`${c.base}/users`);
    await page.getByRole('cell', { name: 'ERP nightly load' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'users');
    await other.close();
    await page.context().close();
  });

  it('offers a VENDOR IF STANDARD user the integrations to read, without editing, trying or job queue actions', async () => {
    const page = await c.signedIn('VENDOR IF STANDARD');
    await page.goto(`${c.base}/integrations/20`);
    expect(await page.getByRole('button', { name: 'Save integration' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Try a payload' }).count()).toBe(0);
    expect((await page.goto(`${c.base}/integrations/20/try`))?.status()).toBe(403);
    expect((await page.goto(`${c.base}/integrations/new`))?.status()).toBe(403);
    await page.goto(`${c.base}/job-queue`);
    expect(await page.getByRole('button', { name: 'Run now' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Users' }).count()).toBe(0);
    expect((await page.goto(`${c.base}/users`))?.status()).toBe(403);
    expect((await page.goto(`${c.base}/users/ui-super`))?.status()).toBe(403);
    await page.context().close();
  });
});
