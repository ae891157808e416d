/**
 * A console form's body is declared like an API body: the shell turns the form into an object of its
 * fields (`formFields`), checks it with the server's validator before the handler runs, and refuses
 * what the declaration does not allow with a 400 in words, changing nothing.
 */
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FormBody, FormCheckbox, FormList, FormText, formFields } from '../../src/console/route-input.js';
import { formAsSent, setCookies, signInHttp, type Browserless } from '../helpers/console-http.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'console-form-bodies-pass-1';

describe('formFields', () => {
  const schema = FormBody({ name: FormText(), tags: FormList(), on: FormCheckbox });

  it('gives each field its text, a declared list all its texts, and leaves the CSRF token out', () => {
    const form = new URLSearchParams([
      ['_csrf', 'token'],
      ['name', 'Contacts'],
      ['tags', 'a'],
      ['on', 'on'],
    ]);
    expect(formFields(form, schema)).toEqual({ name: 'Contacts', tags: ['a'], on: 'on' });
    form.append('tags', 'b');
    expect(formFields(form, schema)).toEqual({ name: 'Contacts', tags: ['a', 'b'], on: 'on' });
  });

  it('gives a name sent twice that the schema does not declare a list both texts, for the schema to refuse', () => {
    const form = new URLSearchParams([
      ['name', 'a'],
      ['name', 'b'],
    ]);
    expect(formFields(form, schema)).toEqual({ name: ['a', 'b'] });
    expect(formFields(form, Type.Object({}))).toEqual({ name: ['a', 'b'] });
  });
});

describe('a console form with a declared body', () => {
  let t: TestService;
  let base: string;
  let console_: Browserless;

  beforeAll(async () => {
    t = await startTestService({ config: { host: '127.0.0.1', port: 0 } });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    await t.service.accounts.createUser({ userName: 'form-admin', password: PASSWORD, permissionSets: ['SUPER'] });
    console_ = await signInHttp(base, 'form-admin', PASSWORD);
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const post = (fields: readonly (readonly [string, string])[]) =>
    fetch(`${base}/users/new`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: console_.cookie, origin: base },
      body: new URLSearchParams([['_csrf', console_.csrf], ...fields.map(([name, value]): [string, string] => [name, value])]).toString(),
    });
  const users = async () => (await t.inject({ method: 'GET', url: `${API}/users` })).body;

  it('hands the handler the fields typed, a list with every ticked box', async () => {
    const answer = await post([
      ['userName', 'two-sets'],
      ['password', 'long-enough-password'],
      ['permissionSets', 'VENDOR IF STANDARD'],
      ['permissionSets', 'SUPER'],
    ]);
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/users/two-sets');
    const user = JSON.parse((await t.inject({ method: 'GET', url: `${API}/users('two-sets')` })).body) as { permissionSets: string[] };
    expect([...user.permissionSets].sort()).toEqual(['SUPER', 'VENDOR IF STANDARD']);
  });

  it.each([
    [
      'a field the form does not have',
      [
        ['userName', 'x'],
        ['password', 'long-enough-password'],
        ['isAdmin', 'yes'],
      ],
      /isAdmin/,
    ],
    [
      'a text field sent twice',
      [
        ['userName', 'a'],
        ['userName', 'b'],
        ['password', 'long-enough-password'],
      ],
      /userName/,
    ],
    [
      'a text over its length',
      [
        ['userName', 'u'.repeat(5000)],
        ['password', 'long-enough-password'],
      ],
      /userName/,
    ],
  ] as const)('refuses %s with a 400 in words and creates nobody', async (_, fields, words) => {
    const before = await users();
    const answer = await post(fields);
    expect(answer.status).toBe(400);
    expect(await answer.text()).toMatch(words);
    expect(await users()).toBe(before);
  });
});

/**
 * Every form of the Users, Job Queue, Bulk Import Requests, Import Runs and Try a payload pages and
 * the sign-in form, posted with exactly the fields its page's markup sends (so a field the markup has
 * and the declaration lacks fails here), and each page's declaration refusing a field its form does
 * not have.
 */
describe('the forms of the pages, posted as their pages send them', () => {
  let t: TestService;
  let base: string;
  let admin: Browserless;
  let requestId: string;

  beforeAll(async () => {
    t = await startTestService({ config: { host: '127.0.0.1', port: 0 } });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    await t.service.accounts.createUser({ userName: 'forms-admin', password: PASSWORD, permissionSets: ['SUPER'] });
    admin = await signInHttp(base, 'forms-admin', PASSWORD);
    const created = [
      await t.inject({
        method: 'POST',
        url: `${API}/restApiConnections`,
        payload: { code: 'forms', baseUrl: 'http://127.0.0.1:9', authType: 'none' },
      }),
      await t.inject({
        method: 'POST',
        url: `${API}/restApiEndpoints`,
        payload: { code: 'forms-records', connectionCode: 'forms', path: 'records', integrationSortingOrder: 10, paginationType: 'none' },
      }),
    ];
    for (const answer of created) expect(answer.statusCode, answer.body).toBe(201);
    const submitted = await t.inject({
      method: 'POST',
      url: `${API}/bulkImportRequests`,
      payload: { integrationSortingOrder: 10, payload: '[{"no":"F-1","name":"Forms"}]' },
    });
    expect(submitted.statusCode, submitted.body).toBe(202);
    requestId = (JSON.parse(submitted.body) as { requestId: string }).requestId;
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const api = async <T>(url: string): Promise<T> => {
    const answer = await t.inject({ method: 'GET', url: `${API}/${url}` });
    expect(answer.statusCode, answer.body).toBe(200);
    return JSON.parse(answer.body) as T;
  };
  /** Submits the form of the page at `on` that posts to `action`, as a browser would. */
  const submit = async (on: string, action: string, options?: Parameters<typeof formAsSent>[2]) => {
    const page = await admin.get(on);
    expect(page.status).toBe(200);
    const sent = formAsSent(page.text, action, options);
    const answer = await fetch(`${base}${action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: admin.cookie, origin: base },
      body: new URLSearchParams(sent).toString(),
    });
    return { status: answer.status, location: answer.headers.get('location'), text: await answer.text() };
  };

  it('the Users pages: a new user, its permission sets, password, disable, enable and delete', async () => {
    let answer = await submit('/users/new', '/users/new', { fill: { userName: 'formed', password: 'formed-password-1' }, tick: ['SUPER'] });
    expect([answer.status, answer.location]).toEqual([303, '/users/formed']);
    answer = await submit('/users/formed', '/users/formed/permission-sets', { tick: ['VENDOR IF ALL'] });
    expect([answer.status, answer.location]).toEqual([303, '/users/formed']);
    expect((await api<{ permissionSets: string[] }>("users('formed')")).permissionSets.sort()).toEqual(['SUPER', 'VENDOR IF ALL']);
    answer = await submit('/users/formed', '/users/formed/password', { fill: { password: 'formed-password-2' } });
    expect([answer.status, answer.location]).toEqual([303, '/users/formed']);
    for (const verb of ['disable', 'enable']) {
      answer = await submit('/users/formed', `/users/formed/${verb}`);
      expect([verb, answer.status, answer.location]).toEqual([verb, 303, '/users/formed']);
    }
    expect((await api<{ enabled: boolean }>("users('formed')")).enabled).toBe(true);
    answer = await submit('/users/formed', '/users/formed/delete');
    expect([answer.status, answer.location]).toEqual([303, '/users']);
  });

  it('the Users pages: a new application, saved, disabled, enabled and deleted', async () => {
    let answer = await submit('/applications/new', '/applications/new', {
      fill: { clientId: 'formed-app', displayName: 'Formed app' },
      tick: ['VENDOR IF STANDARD'],
    });
    expect([answer.status, answer.location, answer.text]).toEqual([303, '/applications/formed-app', '']);
    answer = await submit('/applications/formed-app', '/applications/formed-app', { fill: { displayName: 'Renamed app' } });
    expect([answer.status, answer.location]).toEqual([303, '/applications/formed-app']);
    expect(await api<{ displayName: string; permissionSets: string[] }>("applications('formed-app')")).toMatchObject({
      displayName: 'Renamed app',
      permissionSets: ['VENDOR IF STANDARD'],
    });
    for (const verb of ['disable', 'enable']) {
      answer = await submit('/applications/formed-app', `/applications/formed-app/${verb}`);
      expect([verb, answer.status, answer.location]).toEqual([verb, 303, '/applications/formed-app']);
    }
    answer = await submit('/applications/formed-app', '/applications/formed-app/delete');
    expect([answer.status, answer.location]).toEqual([303, '/users']);
  });

  it('the Job Queue buttons: Set On Hold, Set Ready, Run now', async () => {
    for (const verb of ['hold', 'ready', 'run']) {
      const answer = await submit('/job-queue', `/job-queue/retention-cleanup/${verb}`);
      expect([verb, answer.status, answer.location]).toEqual([verb, 303, '/job-queue']);
    }
  });

  it("a request's Reset to Pending and Cancel", async () => {
    // Reset is refused by the request's state (it is not Processing), not by its form.
    const reset = await submit(`/requests/${requestId}`, `/requests/${requestId}/reset`);
    expect(reset.status).toBe(409);
    const cancel = await submit(`/requests/${requestId}`, `/requests/${requestId}/cancel`);
    expect([cancel.status, cancel.location]).toEqual([303, `/requests/${requestId}`]);
    expect((await api<{ status: string }>(`bulkImportRequests(${requestId})`)).status).toBe('Cancelled');
  });

  it("an endpoint's Run import now", async () => {
    const answer = await submit('/rest/endpoints/forms-records', '/rest/endpoints/forms-records/run');
    expect([answer.status, answer.location?.startsWith('/runs/')]).toEqual([303, true]);
  });

  it('Try a payload', async () => {
    const answer = await submit('/integrations/10/try', '/integrations/10/try', { fill: { payload: '[{"no":"T-1","name":"Tried"}]' } });
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/1 would be written/);
  });

  it('the sign-in form', async () => {
    const page = await fetch(`${base}/login`);
    const loginCookie = setCookies(page.headers)
      .find((c) => c.startsWith('ifw_login='))!
      .split(';')[0]!;
    const sent = formAsSent(await page.text(), '/login', { fill: { userName: 'forms-admin', password: PASSWORD } });
    const answer = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie, origin: base },
      body: new URLSearchParams(sent).toString(),
    });
    expect(answer.status).toBe(303);
    expect(setCookies(answer.headers).some((c) => c.startsWith('ifw_session=') && !c.startsWith('ifw_session=;'))).toBe(true);
  });

  describe('a field the form does not have is refused with 400 in words, and nothing changes', () => {
    const extra = ['isAdmin', 'yes'] as const;
    const post = async (action: string, fields: [string, string][]) => {
      const answer = await admin.post(action, Object.fromEntries([['_csrf', admin.csrf], ...fields, extra]));
      expect(answer.status).toBe(400);
      expect(answer.text).toMatch(/isAdmin/);
    };

    it("on a user's permission sets (Users)", async () => {
      await t.service.accounts.createUser({ userName: 'kept', password: 'kept-password-1', permissionSets: ['VENDOR IF STANDARD'] });
      await post('/users/kept/permission-sets', [['permissionSets', 'SUPER']]);
      expect((await api<{ permissionSets: string[] }>("users('kept')")).permissionSets).toEqual(['VENDOR IF STANDARD']);
    });

    it('on Set On Hold (Job Queue)', async () => {
      const before = await api<{ status: string }>("jobQueueEntries('bulk-import-processor')");
      await post('/job-queue/bulk-import-processor/hold', []);
      expect((await api<{ status: string }>("jobQueueEntries('bulk-import-processor')")).status).toBe(before.status);
    });

    it('on Cancel (Bulk Import Requests)', async () => {
      const submitted = await t.inject({
        method: 'POST',
        url: `${API}/bulkImportRequests`,
        payload: { integrationSortingOrder: 10, payload: '[{"no":"F-2","name":"Kept"}]' },
      });
      const id = (JSON.parse(submitted.body) as { requestId: string }).requestId;
      await post(`/requests/${id}/cancel`, []);
      expect((await api<{ status: string }>(`bulkImportRequests(${id})`)).status).toBe('Pending');
    });

    it('on Run import now (Import Runs)', async () => {
      const before = await api<{ value: unknown[] }>('importRuns');
      await post('/rest/endpoints/forms-records/run', []);
      expect((await api<{ value: unknown[] }>('importRuns')).value).toHaveLength(before.value.length);
    });

    it('on Try a payload', async () => {
      await post('/integrations/10/try', [['payload', '[]']]);
    });

    it('on the sign-in form, which signs no one in', async () => {
      const page = await fetch(`${base}/login`);
      const loginCookie = setCookies(page.headers)
        .find((c) => c.startsWith('ifw_login='))!
        .split(';')[0]!;
      const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
      const answer = await fetch(`${base}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie, origin: base },
        body: new URLSearchParams({ _csrf: token, userName: 'forms-admin', password: PASSWORD, isAdmin: 'yes' }).toString(),
      });
      expect(answer.status).toBe(400);
      expect(await answer.text()).toMatch(/isAdmin/);
      expect(setCookies(answer.headers).some((c) => c.startsWith('ifw_session='))).toBe(false);
    });
  });
});
