/**
 * A new target table through the console in a real browser, as a person makes one: three fields typed
 * into the form's rows, a mistake shown under its input with the focus on it, corrected, and the table
 * created; then a field added on the table's page. axe-core checks each page.
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

describe.runIf(available)('admin console: target tables in the browser', { timeout: 90_000 }, () => {
  let c: ConsoleFixture;

  beforeAll(async () => {
    c = await startConsole();
  });

  afterAll(async () => {
    await c?.close();
  });

  it('creates a table with three fields, showing a mistake under its input first, then adds a field', async () => {
    const page = await c.signedIn('VENDOR IF ALL');
    await page.goto(`${c.base}/tables`);
    await page.getByRole('link', { name: 'New target table' }).click();
    await page.getByLabel('Table name').fill('contact');
    await page.getByLabel('Name (row 1)').fill('id');
    await page.getByLabel('Type (row 1)').selectOption('integer');
    await page.getByLabel('Primary key (row 1)').check();
    await page.getByLabel('Name (row 2)').fill('name');
    await page.getByLabel('Length (row 2)').fill('0');
    await page.getByLabel('Required (row 2)').check();
    await page.getByLabel('Name (row 3)').fill('size');
    await page.getByLabel('Type (row 3)').selectOption('option');
    await page.getByLabel('Option values (row 3)').fill('S\nM\nL');
    await expectAccessible(page);
    await expectKeyboardReachable(page);
    await screenshot(page, 'new-target-table');

    await page.setViewportSize({ width: 390, height: 844 });
    await expectAccessible(page);
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByRole('button', { name: 'Create table' }).click();
    const length = page.getByLabel('Length (row 2)');
    await page.getByText('Fields, row 2, Length: must be between 1 and 2048, got 0').first().waitFor();
    expect(await length.getAttribute('aria-invalid')).toBe('true');
    expect(await page.evaluate('document.activeElement && document.activeElement.getAttribute("name")')).toBe('fields.1.length');
    // Nothing typed is lost.
    expect(await page.getByLabel('Table name').inputValue()).toBe('contact');
    expect(await page.getByLabel('Option values (row 3)').inputValue()).toBe('S\nM\nL');
    expect(await page.getByLabel('Primary key (row 1)').isChecked()).toBe(true);
    await expectAccessible(page);
    await screenshot(page, 'new-target-table-refused');

    await length.fill('80');
    await page.getByRole('button', { name: 'Create table' }).click();
    await page.getByRole('status').getByText('Target table contact created.').waitFor();
    const declared = (await (await fetch(`${c.base}${API}/targetTables('contact')`, { headers: c.t.headers })).json()) as {
      primaryKey: string[];
      fields: { name: string; type: string }[];
    };
    expect(declared.primaryKey).toEqual(['id']);
    expect(declared.fields.map((f) => `${f.name}:${f.type}`)).toEqual(['id:integer', 'name:text', 'size:option']);

    await page.getByRole('link', { name: 'Add a field or change fields' }).click();
    await page.getByLabel('Name (row 4)').fill('phone');
    await page.getByRole('button', { name: 'Check changes' }).click();
    await page.getByRole('status').getByText('Field "phone" is added as a new optional column.').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'target-table-fields');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').getByText('Target table contact saved; added phone.').waitFor();
    expect(await page.getByRole('cell', { name: 'phone', exact: true }).count()).toBe(1);
    await expectAccessible(page);
    await page.context().close();
  });
});
