/**
 * REST imports in the console, in a real browser, against a real local server that paginates: a
 * connection, a Next Link endpoint and a Cursor endpoint for a GraphQL API configured on their cards
 * (the Pagination section shows only the chosen type's settings), "Preview first page", "Run import
 * now" and the run's page log.
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
import { PAGED_CONTACTS, startPagingServer, type PagingServer } from '../helpers/paging-server.js';

const available = browserAvailable();

describe.runIf(available)('admin console: REST API connections, endpoints and runs in the browser', { timeout: 90_000 }, () => {
  let c: ConsoleFixture;
  let remote: PagingServer;

  beforeAll(async () => {
    c = await startConsole({ workers: true });
    remote = await startPagingServer({ records: 25, pageSize: 10 });
    const call = (url: string, body: unknown) =>
      fetch(`${c.base}${API}/${url}`, {
        method: 'POST',
        headers: { ...c.t.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await call('targetTables', PAGED_CONTACTS.table)).status).toBe(201);
    const integration = PAGED_CONTACTS.integration;
    expect((await call('integrations', integration)).status).toBe(201);
  });

  afterAll(async () => {
    await remote?.close();
    await c?.close();
  });

  it('configures a Next Link endpoint, previews page 1, runs the import and reads its page log', async () => {
    // The connection (where credentials are sent) is an administrator's; VENDOR IF STANDARD works on its endpoints.
    const admin = await c.signedIn('VENDOR IF ALL');
    await admin.goto(`${c.base}/rest`);
    await admin.getByRole('link', { name: 'New connection' }).click();
    await admin.getByLabel('Code', { exact: true }).fill('paging');
    await admin.getByLabel('Base URL').fill(remote.origin);
    await admin.getByRole('button', { name: 'Create connection' }).click();
    await admin.getByRole('status').getByText('Connection paging was created.').waitFor();
    await admin.context().close();

    const page = await c.signedIn('VENDOR IF STANDARD');
    await page.goto(`${c.base}/rest`);
    expect(await page.getByRole('link', { name: 'New connection' }).count()).toBe(0);
    await page.getByRole('link', { name: 'paging', exact: true }).first().click();
    expect(await page.getByLabel('Base URL').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save connection' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.locator('#test-result').getByText('Connection works').waitFor();
    await screenshot(page, 'rest-connection');

    await page.getByRole('link', { name: 'New endpoint on this connection' }).click();
    await page.getByLabel('Code', { exact: true }).fill('contacts');
    await page.getByLabel('Path', { exact: true }).fill('next-absolute');
    await page.getByLabel('Integration', { exact: true }).selectOption('30');
    // Only the chosen type's settings are offered.
    expect(await page.getByLabel('Next Link JSON Path').count()).toBe(0);
    await page.getByLabel('Pagination Type').selectOption('pageNumber');
    await page.getByLabel('Page Parameter Name').waitFor();
    expect(await page.getByLabel('Next Link JSON Path').count()).toBe(0);
    await page.getByLabel('Pagination Type').selectOption('nextLink');
    await page.getByLabel('Next Link JSON Path').waitFor();
    expect(await page.getByLabel('Page Parameter Name').count()).toBe(0);
    await page.getByLabel('Next Link JSON Path').fill('next');
    await page.getByLabel('Response Data Path').fill('data');
    await page.getByLabel('Page Size').fill('10');
    await page.locator('#validation').getByText('These settings are valid.').waitFor();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByRole('status').getByText('Endpoint contacts was created.').waitFor();

    await page.getByRole('button', { name: 'Preview first page' }).click();
    const preview = page.locator('#preview');
    await preview.getByText('10 records found').waitFor();
    expect(await preview.innerText()).toContain(`Pagination would request next: ${remote.origin}/next-absolute?cursor=2`);
    await expectAccessible(page);
    await expectKeyboardReachable(page);
    await screenshot(page, 'rest-endpoint-preview');

    await page.getByRole('button', { name: 'Run import now' }).click();
    const run = page.locator('#run');
    await run.locator('.status').getByText('Completed').waitFor();
    expect(await run.innerText()).toMatch(/noNextLink/);
    await page.getByRole('heading', { name: 'Page log (3)' }).waitFor();
    expect(await page.getByRole('table', { name: 'Page log' }).locator('tbody tr').count()).toBe(3);
    await expectAccessible(page);
    await screenshot(page, 'import-run');
    const rows = await fetch(`${c.base}${API}/targetTables('contact')/rows?$count=true&$top=1`, { headers: c.t.headers });
    expect(((await rows.json()) as { '@odata.count': number })['@odata.count']).toBe(25);
    await page.context().close();
  });

  it('names the pagination problem a run shows: Max Pages reached', async () => {
    const page = await c.signedIn('VENDOR IF STANDARD');
    await page.goto(`${c.base}/rest/endpoints/contacts`);
    await page.getByLabel('Max Pages', { exact: true }).fill('2');
    await page.getByRole('button', { name: 'Save endpoint' }).click();
    await page.getByRole('status').getByText('Endpoint contacts was saved.').waitFor();
    await page.getByRole('button', { name: 'Run import now' }).click();
    await page.locator('#run .status').getByText('Completed').waitFor();
    await page.getByText(/Pagination ran to Max Pages: records may be missing/).waitFor();
    await page.context().close();
  });

  it('configures a Cursor endpoint for a GraphQL API (cursor sent as a variable in the POST body), previews, runs and reads its page log', async () => {
    const page = await c.signedIn('VENDOR IF STANDARD');
    await page.goto(`${c.base}/rest/endpoints/new?connection=paging`);
    await page.getByLabel('Code', { exact: true }).fill('graphql-contacts');
    await page.getByLabel('Method').selectOption('POST');
    await page.getByLabel('Path', { exact: true }).fill('graphql');
    await page.getByLabel('Body (POST only)').fill(
      JSON.stringify({
        query: 'query($first:Int,$after:String){contacts(first:$first,after:$after){nodes{id} pageInfo{hasNextPage endCursor}}}',
        variables: { first: 10 },
      }),
    );
    await page.getByLabel('Integration', { exact: true }).selectOption('30');
    await page.getByLabel('Pagination Type').selectOption('cursor');
    // Only Cursor's settings, and the stop conditions every type may add.
    await page.getByLabel('Cursor JSON Path').waitFor();
    expect(await page.getByLabel('Next Link JSON Path').count()).toBe(0);
    expect(await page.getByLabel('Page Parameter Name').count()).toBe(0);
    await page.getByLabel('Cursor JSON Path').fill('data.contacts.pageInfo.endCursor');
    await page.getByLabel('Cursor Parameter Name').fill('variables.after');
    await page.getByLabel('Send Parameters In').selectOption('body');
    await page.getByLabel('Has More JSON Path').fill('data.contacts.pageInfo.hasNextPage');
    await page.getByLabel('Response Data Path').fill('data.contacts.nodes');
    await page.locator('#validation').getByText('These settings are valid.').waitFor();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByRole('status').getByText('Endpoint graphql-contacts was created.').waitFor();
    expect(await page.getByLabel('Pagination Type').inputValue()).toBe('cursor');
    expect(await page.getByLabel('Send Parameters In').inputValue()).toBe('body');

    await page.getByRole('button', { name: 'Preview first page' }).click();
    const preview = page.locator('#preview');
    await preview.getByText('10 records found').waitFor();
    // The URL stays the same; what changes is the cursor, shown with it.
    expect(await preview.innerText()).toMatch(new RegExp(`Pagination would request next: ${remote.origin}/graphql with cursor \\S+`));
    await expectAccessible(page);
    await screenshot(page, 'rest-cursor-endpoint-preview');

    await page.getByRole('button', { name: 'Run import now' }).click();
    const run = page.locator('#run');
    await run.locator('.status').getByText('Completed').waitFor();
    // The third page says hasNextPage false: the run names that stop condition.
    expect(await run.innerText()).toMatch(/hasMoreFalse/);
    await page.getByRole('heading', { name: 'Page log (3)' }).waitFor();
    const log = await page.getByRole('table', { name: 'Page log' }).locator('tbody tr').allInnerTexts();
    expect(log.map((row) => row.split('\t').map((cell) => cell.trim()))).toEqual([
      ['1', `${remote.origin}/graphql`, '10'],
      ['2', `${remote.origin}/graphql`, '10'],
      ['3', `${remote.origin}/graphql`, '5'],
    ]);
    await expectAccessible(page);
    await screenshot(page, 'rest-cursor-import-run');
    // The same 25 contacts again: the upsert leaves 25 rows, none twice.
    const rows = await fetch(`${c.base}${API}/targetTables('contact')/rows?$count=true&$top=1`, { headers: c.t.headers });
    expect(((await rows.json()) as { '@odata.count': number })['@odata.count']).toBe(25);
    await page.context().close();
  });

  it('shows a refusal under its input, focused, with the live check saying the same first; a typed secret is asked for again', async () => {
    const page = await c.signedIn('VENDOR IF ALL');
    await page.goto(`${c.base}/rest/endpoints/new?connection=paging`);
    expect(await page.getByLabel('Method').inputValue()).toBe('GET');
    await page.getByLabel('Code', { exact: true }).fill('contacts');
    await page.getByLabel('Path', { exact: true }).fill('next-absolute');
    await page.getByLabel('Integration', { exact: true }).selectOption('30');
    await page.locator('#validation').getByText("Code: a REST API endpoint with code 'contacts' already exists.").waitFor();
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.locator('#code-error').getByText("Code: a REST API endpoint with code 'contacts' already exists.").waitFor();
    expect(await page.getByLabel('Code', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(':focus').getAttribute('id')).toBe('code');
    expect(await page.getByLabel('Path', { exact: true }).inputValue()).toBe('next-absolute');
    await expectAccessible(page);
    await screenshot(page, 'rest-endpoint-error');

    await page.goto(`${c.base}/rest/connections/new`);
    expect(await page.getByLabel('Timeout (ms)').inputValue()).toBe('30000');
    await page.getByLabel('Code', { exact: true }).fill('crm');
    await page.getByLabel('Base URL').fill('ftp://crm.example');
    await page.getByLabel('Authentication type').selectOption('oauth2ClientCredentials');
    await page.getByLabel(/^Token URL/).waitFor();
    await page.getByText('(required for OAuth 2.0)').first().waitFor();
    await page.getByLabel(/^Token URL/).fill('https://crm.example/token');
    await page.getByLabel(/^Client ID/).fill('importer');
    await page.getByLabel(/^Client secret/).fill('typed-client-secret');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.locator('#baseUrl-error').getByText('Base URL: must be an http or https URL, not ftp').waitFor();
    expect(await page.locator(':focus').getAttribute('id')).toBe('baseUrl');
    expect(await page.getByLabel(/^Client ID/).inputValue()).toBe('importer');
    expect(await page.getByLabel(/^Client secret/).inputValue()).toBe('');
    await page.getByText('Type the client secret again: it is not sent back to the browser.').waitFor();
    expect(await page.content()).not.toContain('typed-client-secret');
    await expectAccessible(page);
    await screenshot(page, 'rest-connection-error');
    await page.context().close();
  });

  it('never shows a connection secret in any page', async () => {
    const secret = 'sup3r-secret-token-value';
    const page = await c.signedIn('SUPER');
    await page.goto(`${c.base}/rest/connections/paging`);
    await page.getByLabel('Authentication type').selectOption('bearer');
    await page.getByLabel(/^Token/).waitFor();
    await page.getByLabel(/^Token/).fill(secret);
    await page.getByRole('button', { name: 'Save connection' }).click();
    await page.getByRole('status').getByText('Connection paging was saved.').waitFor();
    await page.getByText('set', { exact: true }).waitFor();
    for (const url of ['/rest', '/rest/connections/paging', '/rest/endpoints/contacts', '/runs', '/']) {
      const response = await page.goto(`${c.base}${url}`);
      expect(await response?.text()).not.toContain(secret);
    }
    await page.context().close();
  });
});
