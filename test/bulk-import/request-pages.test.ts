/**
 * The Bulk Import Requests pages as the service answers them: integrations by name (linked to their
 * card) in the list and on a request's page, the submitter filter taking a plain user or application
 * name, and a From later than To refused on the field rather than answered with an empty list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsolePages, seedRequest, type ConsolePages } from '../helpers/console-pages.js';

let c: ConsolePages;
const ids: Record<string, string> = {};

beforeAll(async () => {
  c = await startConsolePages();
  ids.admin = await seedRequest(c.t, { submittedBy: 'user:admin', submittedAt: '2026-11-20T10:00:00.000Z' });
  ids.app = await seedRequest(c.t, { submittedBy: 'application:admin', submittedAt: '2026-11-20T11:00:00.000Z' });
  ids.erp = await seedRequest(c.t, { submittedBy: 'application:erp-connector', submittedAt: '2026-11-21T10:00:00.000Z' });
  ids.other = await seedRequest(c.t, { submittedBy: 'user:administrator', submittedAt: '2026-11-22T10:00:00.000Z' });
});
afterAll(async () => {
  await c?.cleanup();
});

const list = async (query: string) => {
  const page = await (await c.as('SUPER')).get(`/requests${query}`);
  expect(page.status).toBe(200);
  return page.text;
};
const shown = (text: string) =>
  Object.entries(ids)
    .filter(([, id]) => text.includes(`data-request="${id}"`))
    .map(([name]) => name);

describe('the request list', () => {
  it('names each request’s integration, linked to its card', async () => {
    const text = await list('');
    expect(text).toContain('<a href="/integrations/10">Customers</a> <span class="muted">(10)</span>');
    expect(text).not.toMatch(/<td class="num">\s*10\s*<\/td>/);
    // The filter's options are names too.
    expect(text).toContain('<option value="10" >Customers (10)</option>');
  });

  it('finds a plain name’s requests, the user’s and the application’s, and no one else’s', async () => {
    expect(shown(await list('?submitter=admin')).sort()).toEqual(['admin', 'app']);
    expect(shown(await list('?submitter=erp-connector'))).toEqual(['erp']);
    expect(shown(await list('?submitter=%20admin%20')).sort()).toEqual(['admin', 'app']);
  });

  it('finds one kind only when the name says which', async () => {
    expect(shown(await list('?submitter=user%3Aadmin'))).toEqual(['admin']);
    expect(shown(await list('?submitter=application%3Aadmin'))).toEqual(['app']);
    expect(shown(await list('?submitter=nobody'))).toEqual([]);
  });

  it('says in the hint what the submitter filter matches', async () => {
    const text = await list('');
    expect(text).toMatch(/id="f-submitter-hint"[^>]*>A user or application name: admin finds user:admin and application:admin/);
    expect(text).toContain('aria-describedby="f-submitter-hint"');
  });

  it('refuses a From later than To on the To field, focused, and lists nothing', async () => {
    const text = await list('?from=2026-11-22T00:00&to=2026-11-21T00:00');
    expect(text).toMatch(/<p class="field-error" id="f-to-error">To must not be earlier than From/);
    expect(text).toMatch(/<input id="f-to" name="to" type="datetime-local" value="2026-11-21T00:00"[^>]*aria-invalid="true"/);
    expect(text).toMatch(/<input id="f-to"[^>]*autofocus/);
    expect(text).not.toContain('No requests match');
    expect(shown(text)).toEqual([]);
    expect(text).toContain('Correct the filter to see the requests.');
  });

  it('refuses a From that is no date on its own field', async () => {
    const text = await list('?from=yesterday');
    expect(text).toMatch(/<p class="field-error" id="f-from-error">From must be a date and time/);
  });

  it('takes From equal to or before To as a window', async () => {
    expect(shown(await list('?from=2026-11-20T00:00&to=2026-11-21T00:00')).sort()).toEqual(['admin', 'app']);
    expect(shown(await list('?from=2026-11-21T00:00&to=2026-11-21T00:00'))).toEqual([]);
  });
});

describe('a request’s page', () => {
  it('names its integration, linked to the card', async () => {
    const page = await (await c.as('SUPER')).get(`/requests/${ids.erp}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(
      /<dt>Integration<\/dt>\s*<dd><a href="\/integrations\/10">Customers<\/a> <span class="muted">\(10\)<\/span><\/dd>/,
    );
  });

  it('says when its integration no longer exists', async () => {
    const id = await seedRequest(c.t, { integrationSortingOrder: 99 });
    const page = await (await c.as('SUPER')).get(`/requests/${id}`);
    expect(page.text).toMatch(/<dd>99 <span class="muted">\(deleted\)<\/span><\/dd>/);
  });
});

describe('resubmit on a request’s page', () => {
  it('offers Resubmit on a Failed request only, and makes a new request that names the old one', async () => {
    const console_ = await c.as('SUPER');
    const failed = await seedRequest(c.t, { status: 'Failed', submittedBy: 'user:admin' });
    const pending = await seedRequest(c.t, { status: 'Pending' });
    const failedPage = (await console_.get(`/requests/${failed}`)).text;
    expect(failedPage).toMatch(new RegExp(`<form[^>]*action="/requests/${failed}/resubmit"`));
    expect((await console_.get(`/requests/${pending}`)).text).toContain('Only a Failed or Cancelled request can be resubmitted.');

    const answer = await console_.post(`/requests/${failed}/resubmit`, { _csrf: console_.csrf });
    expect(answer.status).toBe(303);
    const created = /\/requests\/([0-9a-f-]{36})$/.exec(answer.headers.get('location') ?? '')?.[1];
    expect(created).toBeDefined();
    expect(created).not.toBe(failed);
    const newPage = (await console_.get(`/requests/${created}`)).text;
    expect(newPage).toContain(`<a href="/requests/${failed}"><code>${failed}</code></a>`);
    const oldPage = (await console_.get(`/requests/${failed}`)).text;
    expect(oldPage).toContain(`<a href="/requests/${created}"><code>${created}</code></a>`);
    expect(oldPage).toContain('This request was already resubmitted; open the new request.');
    const details = await c.t.inject({
      method: 'GET',
      url: `/api/vendor/integrationFramework/v1.0/bulkImportRequests(${created})/details`,
    });
    expect(details.json()).toMatchObject({ resubmittedFrom: failed, submittedBy: 'user:pages-super', status: 'Pending' });
  });
});
