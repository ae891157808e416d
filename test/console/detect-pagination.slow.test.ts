/**
 * "Detect pagination" in the console, in a real browser, against a real local API that pages with a
 * GitHub-style Link header: an endpoint saved without pagination is detected (the proposal, its
 * evidence, and the check's problem with the saved settings), "Use these settings" fills the
 * Pagination section without saving, Save keeps it, "Run import now" imports every record, and the
 * run's page log lists each page. On the new endpoint's form, Detect pagination answers the form
 * filled with the proposal, and Create saves it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API } from '../helpers/service.js';
import { browserAvailable, expectAccessible, screenshot, startConsole, type ConsoleFixture } from '../helpers/browser.js';
import { PAGED_CONTACTS, startPagingServer, type PagingServer } from '../helpers/paging-server.js';

const available = browserAvailable();

describe.runIf(available)('admin console: Detect pagination in the browser', { timeout: 120_000 }, () => {
  let c: ConsoleFixture;
  let remote: PagingServer;

  beforeAll(async () => {
    c = await startConsole({ workers: true });
    remote = await startPagingServer({ records: 25, pageSize: 10 });
    const call = async (url: string, body: unknown) => {
      const res = await fetch(`${c.base}${API}/${url}`, {
        method: 'POST',
        headers: { ...c.t.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, await res.text()).toBe(201);
    };
    await call('targetTables', PAGED_CONTACTS.table);
    await call('integrations', PAGED_CONTACTS.integration);
    await call('restApiConnections', { code: 'github', baseUrl: remote.origin });
    await call('restApiEndpoints', {
      code: 'issues',
      connectionCode: 'github',
      path: '/github/issues?per_page=10',
      integrationSortingOrder: 30,
    });
  });

  afterAll(async () => {
    await remote?.close();
    await c?.close();
  });

  it('detects, uses the settings, saves, runs, and reads the page log', async () => {
    const page = await c.signedIn('VENDOR IF STANDARD');
    await page.goto(`${c.base}/rest/endpoints/issues`);
    await page.getByRole('button', { name: 'Detect pagination' }).click();
    const panel = page.locator('#detected-pagination');
    await panel.getByText('Proposed: Link Header').waitFor();
    const shown = await panel.innerText();
    expect(shown).toContain(`the response's Link header has rel="next"`);
    expect(shown).toContain('Pagination Type is None, but the API pages its records');
    expect(shown).toContain('Set the type: Link Header');
    await expectAccessible(page);
    await screenshot(page, 'rest-endpoint-detect-pagination');

    // "Use these settings" fills the form; nothing is saved yet.
    await panel.getByRole('button', { name: 'Use these settings' }).click();
    await page.getByText('The detected settings are in the Pagination section below').waitFor();
    expect(await page.getByLabel('Pagination Type').inputValue()).toBe('linkHeader');
    expect(await page.getByLabel('Page Size').inputValue()).toBe('10');
    const before = await fetch(`${c.base}${API}/restApiEndpoints('issues')`, { headers: c.t.headers });
    expect(((await before.json()) as { paginationType: string }).paginationType).toBe('none');

    await page.getByRole('button', { name: 'Save endpoint' }).click();
    await page.getByRole('status').getByText('Endpoint issues was saved.').waitFor();
    const saved = await fetch(`${c.base}${API}/restApiEndpoints('issues')`, { headers: c.t.headers });
    expect(await saved.json()).toMatchObject({ paginationType: 'linkHeader', pageSize: 10, responseDataPath: '' });

    await page.getByRole('button', { name: 'Run import now' }).click();
    const run = page.locator('#run');
    await run.locator('.status').getByText('Completed').waitFor();
    await page.getByRole('heading', { name: 'Page log (3)' }).waitFor();
    const log = await page.getByRole('table', { name: 'Page log' }).locator('tbody tr').allInnerTexts();
    expect(log).toHaveLength(3);
    expect(log[2]).toContain('page=3');
    const rows = await fetch(`${c.base}${API}/targetTables('contact')/rows?$count=true&$top=1`, { headers: c.t.headers });
    expect(((await rows.json()) as { '@odata.count': number })['@odata.count']).toBe(25);

    // Detected again, the saved settings agree with the API.
    await page.goto(`${c.base}/rest/endpoints/issues`);
    await page.getByRole('button', { name: 'Detect pagination' }).click();
    await page.locator('#detected-pagination').getByText('The saved settings agree with what the API showed.').waitFor();
    await page.context().close();
  });

  it('detects on the new endpoint form: the form comes back filled with the proposal, nothing saved until Create', async () => {
    const page = await c.signedIn('VENDOR IF STANDARD');
    await page.goto(`${c.base}/rest/endpoints/new?connection=github`);
    await page.getByLabel('Code', { exact: true }).fill('issues-new');
    await page.getByLabel('Path', { exact: true }).fill('/github/issues?per_page=5');
    await page.getByLabel('Integration', { exact: true }).selectOption('30');
    await page.getByRole('button', { name: 'Detect pagination' }).click();
    const panel = page.locator('#detected-pagination');
    await panel.getByText('Proposed: Link Header').waitFor();
    expect(await panel.getByRole('button', { name: 'Use these settings' }).count()).toBe(0);
    await page.getByText('The detected settings are in the Pagination section below').waitFor();
    expect(await page.getByLabel('Pagination Type').inputValue()).toBe('linkHeader');
    expect(await page.getByLabel('Page Size').inputValue()).toBe('5');
    expect(await page.getByLabel('Path', { exact: true }).inputValue()).toBe('/github/issues?per_page=5');
    const none = await fetch(`${c.base}${API}/restApiEndpoints('issues-new')`, { headers: c.t.headers });
    expect(none.status).toBe(404);
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByRole('status').getByText('Endpoint issues-new was created.').waitFor();
    const created = await fetch(`${c.base}${API}/restApiEndpoints('issues-new')`, { headers: c.t.headers });
    expect(await created.json()).toMatchObject({ paginationType: 'linkHeader', pageSize: 5, responseDataPath: '' });
    await page.context().close();
  });
});
