/**
 * The REST connection and endpoint forms over real sockets: defaults shown on new forms, fields
 * marked with the authentication or pagination type that requires them, each refusal shown under
 * its input in the user's words, marked `aria-invalid` and focused, everything typed kept but the
 * secrets, which the form says must be typed again; and the live check agreeing with Create and Save.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInHttp, type Browserless } from '../helpers/console-http.js';
import { errorUnder, focused, formValues, isInvalid, noticeUnder, unescape, valueOf } from '../helpers/form-html.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'rest-form-pages-pass-1';

describe('the REST connection and endpoint forms', () => {
  let t: TestService;
  let base: string;
  let web: Browserless;

  beforeAll(async () => {
    t = await startTestService({ config: { host: '127.0.0.1', port: 0 } });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    await t.service.accounts.createUser({ userName: 'rest-admin', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
    web = await signInHttp(base, 'rest-admin', PASSWORD);
    const call = async (url: string, body: unknown) =>
      expect(
        (
          await t.inject({
            method: 'POST',
            url: `${API}/${url}`,
            headers: { 'content-type': 'application/json' },
            payload: JSON.stringify(body),
          })
        ).statusCode,
      ).toBe(201);
    await call('restApiConnections', { code: 'shop', baseUrl: 'https://shop.example/api' });
    await call('restApiEndpoints', { code: 'orders', connectionCode: 'shop', path: 'orders', integrationSortingOrder: 10 });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('shows the defaults on a new connection and marks what each authentication type requires', async () => {
    const page = (await web.get('/rest/connections/new')).text;
    expect(valueOf(page, 'timeoutMs')).toBe('30000');
    expect(valueOf(page, 'maxRetries')).toBe('3');
    expect(valueOf(page, 'initialDelayMs')).toBe('500');
    expect(valueOf(page, 'authType')).toBe('none');
    const oauth = (await web.get('/rest/auth-fields?authType=oauth2ClientCredentials')).text;
    for (const label of ['Token URL', 'Client ID', 'Client secret'])
      expect(oauth).toMatch(
        new RegExp(`${label}(?: <span class="status[^"]*">not set</span>)? <span class="hint">\\(required for OAuth 2\\.0\\)</span>`),
      );
    expect(oauth).not.toMatch(/Scope <span class="hint">\(required/);
  });

  it('shows a refused new connection error under its input, keeps what was typed and says the token must be typed again', async () => {
    const secret = 'typed-token-never-sent-back';
    const answer = await web.post('/rest/connections/new', {
      _csrf: web.csrf,
      code: 'crm',
      baseUrl: 'ftp://crm.example',
      authType: 'bearer',
      token: secret,
      timeoutMs: '1000',
      maxRetries: '2',
      initialDelayMs: '100',
    });
    expect(answer.status).toBe(200);
    expect(errorUnder(answer.text, 'baseUrl')).toBe('Base URL: must be an http or https URL, not ftp');
    expect(unescape(answer.text)).toContain('Not created: Base URL: must be an http or https URL, not ftp');
    expect(isInvalid(answer.text, 'baseUrl')).toBe(true);
    expect(focused(answer.text)).toEqual(['baseUrl']);
    expect(valueOf(answer.text, 'code')).toBe('crm');
    expect(valueOf(answer.text, 'authType')).toBe('bearer');
    expect(valueOf(answer.text, 'timeoutMs')).toBe('1000');
    expect(valueOf(answer.text, 'token')).toBe('');
    expect(noticeUnder(answer.text, 'token')).toBe('Type the token again: it is not sent back to the browser.');
    expect(answer.text).not.toContain(secret);
    expect((await t.inject({ method: 'GET', url: `${API}/restApiConnections('crm')` })).statusCode).toBe(404);
  });

  it('places a number that is none on its input too', async () => {
    const answer = await web.post('/rest/connections/new', {
      _csrf: web.csrf,
      code: 'crm',
      baseUrl: 'https://crm.example',
      authType: 'none',
      timeoutMs: '1.5',
    });
    expect(errorUnder(answer.text, 'timeoutMs')).toBe('Timeout (ms): must be a whole number from -2147483648 to 2147483647, got "1.5"');
    expect(focused(answer.text)).toEqual(['timeoutMs']);
  });

  it('shows a refused connection card error under its input, keeping the authentication typed', async () => {
    const answer = await web.post('/rest/connections/shop', {
      _csrf: web.csrf,
      baseUrl: 'https://shop.example/api',
      authType: 'basic',
      username: '',
      password: 'typed-password',
    });
    expect(answer.status).toBe(200);
    expect(errorUnder(answer.text, 'username')).toBe('User name: basic authentication needs a username');
    expect(isInvalid(answer.text, 'username')).toBe(true);
    expect(valueOf(answer.text, 'authType')).toBe('basic');
    expect(noticeUnder(answer.text, 'password')).toBe('Type the password again: it is not sent back to the browser.');
    expect(answer.text).not.toContain('typed-password');
    expect(JSON.parse((await t.inject({ method: 'GET', url: `${API}/restApiConnections('shop')` })).body)).toMatchObject({
      authType: 'none',
    });
  });

  it('refuses an endpoint code in use on Create as the live check said, under the Code input', async () => {
    const page = await web.get('/rest/endpoints/new?connection=shop');
    expect(valueOf(page.text, 'method')).toBe('GET');
    expect(valueOf(page.text, 'maxPages')).not.toBe('');
    const form = {
      ...formValues(page.text, '/rest/endpoints/new'),
      code: 'orders',
      path: 'orders?since=2024',
      integrationSortingOrder: '10',
    };
    const live = await web.post('/rest/endpoints/new/validate', form);
    expect(live.status).toBe(200);
    expect(unescape(live.text)).toContain("Code: a REST API endpoint with code 'orders' already exists.");
    const answer = await web.post('/rest/endpoints/new', form);
    expect(answer.status).toBe(200);
    expect(errorUnder(answer.text, 'code')).toBe("Code: a REST API endpoint with code 'orders' already exists.");
    expect(focused(answer.text)).toEqual(['code']);
    expect(valueOf(answer.text, 'path')).toBe('orders?since=2024');

    const fresh = { ...form, code: 'orders-2' };
    expect((await web.post('/rest/endpoints/new/validate', fresh)).text).toContain('These settings are valid.');
    expect((await web.post('/rest/endpoints/new', fresh)).status).toBe(303);
  });

  it('shows a pagination setting the type requires, marked so, and its error under it; the card keeps what was typed', async () => {
    const fields = (await web.get('/rest/pagination-fields?paginationType=nextLink')).text;
    expect(fields).toMatch(/Next Link JSON Path <span class="hint">\(required for Next Link\)<\/span>/);
    const card = await web.get('/rest/endpoints/orders');
    const form = {
      ...formValues(card.text, '/rest/endpoints/orders'),
      paginationType: 'nextLink',
      nextLinkJsonPath: '',
      path: 'orders/all',
    };
    const live = await web.post('/rest/endpoints/orders/validate', form);
    expect(unescape(live.text)).toMatch(/Next Link JSON Path: Next Link pagination needs a Next Link JSON Path/);
    const answer = await web.post('/rest/endpoints/orders', form);
    expect(answer.status).toBe(200);
    expect(errorUnder(answer.text, 'nextLinkJsonPath')).toMatch(/^Next Link JSON Path: Next Link pagination needs a Next Link JSON Path/);
    expect(isInvalid(answer.text, 'nextLinkJsonPath')).toBe(true);
    expect(focused(answer.text)).toEqual(['nextLinkJsonPath']);
    expect(valueOf(answer.text, 'path')).toBe('orders/all');
    expect(JSON.parse((await t.inject({ method: 'GET', url: `${API}/restApiEndpoints('orders')` })).body)).toMatchObject({
      path: 'orders',
    });

    const fine = await web.post('/rest/endpoints/orders/validate', { ...form, nextLinkJsonPath: 'next' });
    expect(fine.text).toContain('These settings are valid.');
    expect((await web.post('/rest/endpoints/orders', { ...form, nextLinkJsonPath: 'next' })).status).toBe(303);
  });

  it('takes response actions and session cookies as text and a switch, shows a refused action under its input, and saves them', async () => {
    const card = await web.get('/rest/endpoints/orders');
    expect(valueOf(card.text, 'responseActions')).toBe('');
    const form = { ...formValues(card.text, '/rest/endpoints/orders'), responseActions: '404 stop, 401 stop', sessionCookies: 'on' };

    const live = await web.post('/rest/endpoints/orders/validate', form);
    expect(unescape(live.text)).toContain('Response actions: 401 Unauthorized cannot stop or skip');
    const refused = await web.post('/rest/endpoints/orders', form);
    expect(refused.status).toBe(200);
    expect(errorUnder(refused.text, 'responseActions')).toMatch(
      /^Response actions: 401 Unauthorized cannot stop or skip: it says the credentials/,
    );
    expect(isInvalid(refused.text, 'responseActions')).toBe(true);
    expect(focused(refused.text)).toEqual(['responseActions']);
    expect(valueOf(refused.text, 'responseActions')).toBe('404 stop, 401 stop');
    const unreadable = await web.post('/rest/endpoints/orders', { ...form, responseActions: '404 halt please' });
    expect(errorUnder(unreadable.text, 'responseActions')).toBe(
      'Response actions: "404 halt please" is not a status and an action; write for example 404 stop, 410 skip',
    );

    expect((await web.post('/rest/endpoints/orders', { ...form, responseActions: '404 stop' })).status).toBe(303);
    const saved = JSON.parse((await t.inject({ method: 'GET', url: `${API}/restApiEndpoints('orders')` })).body) as Record<string, unknown>;
    expect(saved).toMatchObject({ responseActions: [{ status: 404, action: 'stop' }], sessionCookies: true });
    const again = (await web.get('/rest/endpoints/orders')).text;
    expect(valueOf(again, 'responseActions')).toBe('404 stop');
    expect(formValues(again, '/rest/endpoints/orders')).toMatchObject({ sessionCookies: 'on' });

    const values: Record<string, string> = { ...formValues(again, '/rest/endpoints/orders'), responseActions: '' };
    const { sessionCookies: _ticked, ...off } = values;
    expect((await web.post('/rest/endpoints/orders', off)).status).toBe(303);
    expect(JSON.parse((await t.inject({ method: 'GET', url: `${API}/restApiEndpoints('orders')` })).body)).toMatchObject({
      responseActions: [],
      sessionCookies: false,
    });
  });

  it("gives Max Pages the spec's suggested values, by volume and page size, under the field", async () => {
    const page = (await web.get('/rest/endpoints/new')).text;
    expect(page).toContain('Suggested values by volume and page size are in the table below.');
    const table = /aria-label="Max Pages: suggested values"[\s\S]*?<\/table>/.exec(page)?.[0] ?? '';
    const rows = [...table.matchAll(/<tr\s*>\s*<td[^>]*>([^<]+)<\/td>\s*<td[^>]*>(\d+)<\/td>\s*<td[^>]*>(\d+)<\/td>/g)].map((m) => [
      m[1]!.trim(),
      Number(m[2]),
      Number(m[3]),
    ]);
    expect(rows).toEqual([
      ['up to 1,000 records', 100, 20],
      ['up to 10,000 records', 100, 150],
      ['up to 50,000 records', 500, 150],
      ['unknown volume', 100, 100],
    ]);
  });

  it('keeps a checkbox unticked as typed when the card is refused', async () => {
    const form = formValues((await web.get('/rest/endpoints/orders')).text, '/rest/endpoints/orders');
    expect((await web.post('/rest/endpoints/orders', { ...form, allowCrossOrigin: 'on' })).status).toBe(303);
    const card = await web.get('/rest/endpoints/orders');
    expect(valueOf(card.text, 'allowCrossOrigin')).toBe('on');
    const { allowCrossOrigin: _ticked, ...unticked } = formValues(card.text, '/rest/endpoints/orders');
    const answer = await web.post('/rest/endpoints/orders', { ...unticked, scheduleSeconds: '5' });
    expect(errorUnder(answer.text, 'scheduleSeconds')).toMatch(/^Schedule \(seconds\): must be from 60 to 604800 seconds/);
    expect(valueOf(answer.text, 'allowCrossOrigin')).toBe('');
  });

  it('refuses a field an endpoint form does not have with the 400 page', async () => {
    const answer = await web.post('/rest/endpoints/orders', { _csrf: web.csrf, code: 'orders', headers: 'x' });
    expect(answer.status).toBe(400);
  });
});
