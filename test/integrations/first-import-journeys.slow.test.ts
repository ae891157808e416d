/**
 * A new administrator's first import, through the console only, from an empty service (no tables, no
 * integrations, no connections), in Debian's chromium:
 *   (a) a pasted sample payload → table, integration and mappings created from it, Accept Bulk Import
 *       Requests on → a request submitted through the API (a real socket) lands as rows;
 *   (b) a REST connection and a Next Link endpoint against a local paginated API → its first page
 *       previewed → table, integration and mappings created from that sample with the endpoint →
 *       run → rows.
 * Each journey counts the clicks and keys a person needs (a paste is one key; choosing an option of a
 * select is two clicks), prints them, and saves screenshots at 1280 and 390 px under docs/screenshots/.
 * Elements are found by their label and role, as a person finds them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, CHROMIUM, expectAccessible, PASSWORD } from '../helpers/browser.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';
import { API, startTestService, type TestService } from '../helpers/service.js';
import { until } from '../helpers/until.js';

const available = browserAvailable();
// As test/helpers/browser.ts launches it.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const SCREENSHOTS = path.resolve(import.meta.dirname, '../../docs/screenshots');
const WIDE = { width: 1280, height: 900 };
const NARROW = { width: 390, height: 844 };

const CONTACTS = JSON.stringify(
  {
    contacts: [
      { id: 101, name: 'Ada Lovelace', email: 'ada@example.com', vip: true, since: '2024-03-01', address: { city: 'London' } },
      { id: 102, name: 'Grace Hopper', email: null, vip: false, since: '2025-07-15', address: { city: 'Arlington' } },
      { id: 103, name: 'Katherine Johnson', email: 'kj@example.com', vip: false, since: '2026-01-20', address: { city: 'Hampton' } },
    ],
  },
  null,
  2,
);

/** What a person does, counted: each click, each key typed (a paste is one), each choice in a select (two clicks). */
class Person {
  clicks = 0;
  keys = 0;
  constructor(readonly page: Page) {}
  async click(target: Locator): Promise<void> {
    this.clicks++;
    await target.click();
  }
  async type(target: Locator, text: string): Promise<void> {
    this.clicks++;
    this.keys += text.length;
    await target.fill(text);
  }
  async paste(target: Locator, text: string): Promise<void> {
    this.clicks++;
    this.keys++;
    await target.fill(text);
  }
  async choose(target: Locator, value: string): Promise<void> {
    this.clicks += 2;
    await target.selectOption(value);
  }
  report(journey: string): string {
    return `${journey}: ${this.clicks} clicks, ${this.keys} keys`;
  }
}

/** The page at 1280 px and at 390 px, whole, into docs/screenshots/. */
async function screenshots(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-1280.png`), fullPage: true });
  await page.setViewportSize(NARROW);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-390.png`), fullPage: true });
  await page.setViewportSize(WIDE);
}

describe.runIf(available)('first imports through the console, from an empty service', { timeout: 120_000 }, () => {
  let t: TestService;
  let base: string;
  let browser: Browser;
  let remote: PagingServer;
  const counts: string[] = [];

  beforeAll(async () => {
    t = await startTestService({ workers: true, applyExample: false, config: { host: '127.0.0.1', port: 0 } });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    await t.service.accounts.createUser({ userName: 'first-admin', password: PASSWORD, permissionSets: ['SUPER'] });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    remote = await startPagingServer({ records: 25, pageSize: 10 });
  });
  afterAll(async () => {
    console.log(`Clicks and keys of the first-import journeys:\n  ${counts.join('\n  ')}`);
    await remote?.close();
    await browser?.close();
    await t?.cleanup();
  });

  async function signedIn(): Promise<Person> {
    const page = await (await browser.newContext({ viewport: WIDE })).newPage();
    const person = new Person(page);
    await page.goto(`${base}/login`);
    await person.type(page.getByLabel('User name'), 'first-admin');
    await person.type(page.getByLabel('Password'), PASSWORD);
    await Promise.all([
      page.waitForURL((url) => !url.pathname.startsWith('/login')),
      person.click(page.getByRole('button', { name: 'Sign in' })),
    ]);
    return person;
  }

  it('(a) a pasted sample becomes a table, an integration and its mappings; a submitted request lands as rows', async () => {
    expect(await t.service.db.selectFrom('ifw_target_table').select('name').execute()).toEqual([]);
    const person = await signedIn();
    const { page } = person;

    await person.click(page.getByRole('link', { name: 'Integrations' }));
    await person.click(page.getByRole('link', { name: 'New integration' }));
    await person.click(page.getByRole('link', { name: 'Create table and mappings from a sample' }));
    await person.paste(page.getByLabel('Sample payload (JSON)'), CONTACTS);
    await person.click(page.getByRole('button', { name: 'Propose table and mappings' }));

    const proposal = page.getByRole('region', { name: 'Proposal' });
    await proposal.waitFor();
    expect(await page.getByLabel('Table name').inputValue()).toBe('contacts');
    expect(await page.getByLabel('Records path').inputValue()).toBe('contacts');
    expect(await page.getByLabel('Name (row 6)').inputValue()).toBe('address_city');
    expect(await page.getByLabel('Source path (row 6)').inputValue()).toBe('address.city');
    expect(await page.getByLabel('Type (row 1)').inputValue()).toBe('integer');
    expect(await page.getByLabel('Primary key (row 1)').isChecked()).toBe(true);
    expect(await page.getByLabel('Required (row 3)').isChecked()).toBe(false);
    const sortingOrder = Number(await page.getByLabel('Sorting Order').inputValue());
    await expectAccessible(page);
    await screenshots(page, 'first-import-sample-proposal');

    // A mistake is shown where it was made, focused, and nothing typed is lost (not counted: the journey is the straight way).
    await page.getByLabel('Table name').fill('My contacts');
    await page.getByLabel('Required (row 2)').uncheck();
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('alert').getByText('Not created: Table name: "My contacts" is not a valid table name').waitFor();
    expect(await page.evaluate('document.activeElement.id')).toBe('tableName');
    expect(await page.getByLabel('Table name').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Required (row 2)').isChecked()).toBe(false);
    await expectAccessible(page);
    await screenshots(page, 'first-import-sample-refused');
    await page.getByLabel('Table name').fill('contacts');
    await page.getByLabel('Required (row 2)').check();

    // The administrator's choices: the bulk import switch on, and one field left out.
    await person.click(page.getByLabel('Accept Bulk Import Requests'));
    await person.click(page.getByLabel('Include (row 4)'));
    await person.click(page.getByRole('button', { name: 'Create', exact: true }));
    await page
      .getByRole('status')
      .getByText(/Table contacts and integration \d+ with 5 fields and mappings were created/)
      .waitFor();
    expect(await page.getByLabel('Accept Bulk Import Requests').isChecked()).toBe(true);
    await screenshots(page, 'first-import-sample-integration');

    // A caller submits a payload through the API, over a real socket.
    const submitted = await fetch(`${base}${API}/bulkImportRequests`, {
      method: 'POST',
      headers: { ...t.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ integrationSortingOrder: sortingOrder, payload: CONTACTS }),
    });
    expect(submitted.status).toBe(202);
    const { requestId } = (await submitted.json()) as { requestId: string };
    await until(
      async () => {
        const r = await fetch(`${base}${API}/bulkImportRequests(${requestId})`, { headers: t.headers });
        return ((await r.json()) as { status: string }).status === 'Completed';
      },
      { what: `request ${requestId} Completed` },
    );
    const rows = await fetch(`${base}${API}/targetTables('contacts')/rows?$orderby=id`, { headers: t.headers });
    expect(((await rows.json()) as { value: unknown[] }).value).toEqual([
      { id: 101, name: 'Ada Lovelace', email: 'ada@example.com', since: '2024-03-01', address_city: 'London' },
      { id: 102, name: 'Grace Hopper', email: null, since: '2025-07-15', address_city: 'Arlington' },
      { id: 103, name: 'Katherine Johnson', email: 'kj@example.com', since: '2026-01-20', address_city: 'Hampton' },
    ]);

    // What the administrator sees of it.
    await person.click(page.getByRole('link', { name: 'Bulk Import Requests' }));
    await page.getByRole('table').getByText('Completed').first().waitFor();
    await screenshots(page, 'first-import-sample-request');
    counts.push(person.report('(a) sample payload to rows'));
    await page.context().close();
  });

  it('(b) a Next Link endpoint previewed, its table and mappings created from page 1, run into rows', async () => {
    const person = await signedIn();
    const { page } = person;

    await person.click(page.getByRole('link', { name: 'REST APIs' }));
    await person.click(page.getByRole('link', { name: 'New connection' }));
    await person.type(page.getByLabel('Code', { exact: true }), 'paging');
    await person.paste(page.getByLabel('Base URL'), remote.origin);
    await person.click(page.getByRole('button', { name: 'Create connection' }));
    await page.getByRole('status').getByText('Connection paging was created.').waitFor();

    await person.click(page.getByRole('link', { name: 'New endpoint on this connection' }));
    await person.type(page.getByLabel('Code', { exact: true }), 'people');
    await person.type(page.getByLabel('Path', { exact: true }), 'next-absolute');
    await person.choose(page.getByLabel('Pagination Type'), 'nextLink');
    await page.getByLabel('Next Link JSON Path').waitFor();
    await person.type(page.getByLabel('Next Link JSON Path'), 'next');
    await person.type(page.getByLabel('Response Data Path'), 'data');
    await person.click(page.getByRole('button', { name: 'Preview first page and create its table' }));

    const proposal = page.getByRole('region', { name: 'Proposal' });
    await proposal.waitFor();
    expect(await proposal.innerText()).toContain(`Pagination would request next: ${remote.origin}/next-absolute?cursor=2`);
    expect(await page.getByLabel('Table name').inputValue()).toBe('people');
    expect(await page.getByLabel('Primary key (row 1)').isChecked()).toBe(true);
    await expectAccessible(page);
    await screenshots(page, 'first-import-endpoint-proposal');
    await person.click(page.getByRole('button', { name: 'Create', exact: true }));
    await page
      .getByRole('status')
      .getByText(/Table people and integration \d+ with 2 fields and mappings were created; endpoint people imports through it/)
      .waitFor();

    await person.click(page.getByRole('button', { name: 'Run import now' }));
    await page.getByText('Completed', { exact: true }).filter({ visible: true }).first().waitFor();
    await screenshots(page, 'first-import-endpoint-run');
    counts.push(person.report('(b) REST endpoint to rows'));

    const rows = await fetch(`${base}${API}/targetTables('people')/rows?$count=true&$top=1`, { headers: t.headers });
    expect(((await rows.json()) as { '@odata.count': number })['@odata.count']).toBe(25);

    // The saved endpoint's Preview offers the same from its page 1, pointing the endpoint at what it creates.
    await page.goto(`${base}/rest/endpoints/people`);
    await page.getByRole('button', { name: 'Preview first page' }).click();
    await page.getByRole('button', { name: 'Create table and mappings from this sample' }).click();
    expect(await page.getByLabel('Table name').inputValue()).toBe('people_2');
    expect(await page.getByLabel('Import endpoint people through this integration').isChecked()).toBe(true);
    await page.context().close();
  });
});
