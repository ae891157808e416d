/**
 * The console's incremental imports over real sockets: the endpoint form's Incremental imports
 * fields (saved, refused under their input), the bookmark panel on the endpoint card, and the set and
 * reset forms, which need the console's CSRF token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInHttp, type Browserless } from '../helpers/console-http.js';
import { errorUnder, formValues, unescape, valueOf } from '../helpers/form-html.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'incremental-pages-pass-1';

describe('incremental imports in the console', () => {
  let t: TestService;
  let base: string;
  let web: Browserless;
  const read = async () =>
    JSON.parse((await t.inject({ method: 'GET', url: `${API}/restApiEndpoints('orders')` })).body) as Record<string, unknown>;

  beforeAll(async () => {
    t = await startTestService({ config: { host: '127.0.0.1', port: 0 } });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    await t.service.accounts.createUser({ userName: 'rest-admin', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
    web = await signInHttp(base, 'rest-admin', PASSWORD);
    for (const [url, body] of [
      ['restApiConnections', { code: 'shop', baseUrl: 'https://shop.example/api' }],
      ['restApiEndpoints', { code: 'orders', connectionCode: 'shop', path: 'orders', integrationSortingOrder: 10 }],
    ] as const) {
      const answer = await t.inject({
        method: 'POST',
        url: `${API}/${url}`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
      expect(answer.statusCode).toBe(201);
    }
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('saves the cursor field settings from the form, refuses an unknown variable under its input, and sets and resets the bookmark', async () => {
    const card = (await web.get('/rest/endpoints/orders')).text;
    expect(unescape(card)).toContain('No cursor field: set one below');
    const values = formValues(card, '/rest/endpoints/orders');

    const refused = await web.post('/rest/endpoints/orders', { ...values, path: 'orders?since={{lastRun}}' });
    expect(refused.status).toBe(200);
    expect(errorUnder(refused.text, 'path')).toContain('Path: unknown template variable {{lastRun}}');

    const saved = await web.post('/rest/endpoints/orders', {
      ...values,
      path: 'orders?since={{cursor|unix}}',
      cursorField: 'updated_at',
      cursorFieldType: 'dateTime',
      cursorFieldInitialValue: '2026-01-01T00:00:00Z',
      cursorFieldLookback: '10m',
    });
    expect(saved.status).toBe(303);
    expect(await read()).toMatchObject({ cursorField: 'updated_at', cursorFieldLookback: '10m', cursorValue: null });

    const shown = (await web.get('/rest/endpoints/orders')).text;
    expect(valueOf(shown, 'cursorField')).toBe('updated_at');
    expect(unescape(shown)).toContain('none: the next run sends the initial value 2026-01-01T00:00:00Z');

    expect((await web.post('/rest/endpoints/orders/cursor', { value: '2026-02-01T00:00:00Z' }, {})).status).toBe(403);
    const set = await web.post('/rest/endpoints/orders/cursor', { _csrf: web.csrf, value: '2026-02-01 08:00' });
    expect(set.status).toBe(303);
    expect(await read()).toMatchObject({ cursorValue: '2026-02-01T08:00:00Z' });
    expect(unescape((await web.get('/rest/endpoints/orders')).text)).toContain('2026-02-01T08:00:00Z');

    const bad = await web.post('/rest/endpoints/orders/cursor', { _csrf: web.csrf, value: 'soon' });
    expect(bad.status).toBe(200);
    expect(unescape(bad.text)).toContain('The bookmark was not changed: value: "soon" is not a date-time');

    const reset = await web.post('/rest/endpoints/orders/cursor/reset', { _csrf: web.csrf });
    expect(reset.status).toBe(303);
    expect(await read()).toMatchObject({ cursorValue: null });
  });
});
