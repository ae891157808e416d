/**
 * A console form's body is declared like an API body: the shell turns the form into an object of its
 * fields (`formFields`), checks it with the server's validator before the handler runs, and refuses
 * what the declaration does not allow with a 400 in words, changing nothing.
 */
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FormBody, FormCheckbox, FormList, FormText, formFields } from '../../src/console/route-input.js';
import { signInHttp, type Browserless } from '../helpers/console-http.js';
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
      body: new URLSearchParams([['_csrf', console_.csrf], ...fields.map(([k, v]): [string, string] => [k, v])]).toString(),
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
