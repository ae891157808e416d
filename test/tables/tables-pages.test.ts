/**
 * Target tables in the console over real sockets: creating a table from the form's rows (on SQLite and
 * PostgreSQL), Add a field keeping everything typed, refusals under the input they concern with the
 * row in the user's words, adding a field to an existing table, an incompatible change shown by Check
 * changes before saving refuses it, and the rows page's filter by column, operator and value.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInHttp, type Browserless } from '../helpers/console-http.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'tables-pages-password-1';

const ENTITIES: Readonly<Record<string, string>> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescape = (markup: string): string => markup.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e);
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The tag of the form control named `name`. */
function controlTag(page: string, name: string): string {
  const tag = new RegExp(`<(?:input|select|textarea)\\b[^>]*\\bname="${escapeRegExp(name)}"[^>]*>`).exec(page);
  expect(tag, `a control named ${name}`).not.toBeNull();
  return tag![0];
}

/** The inline error under the control `name` (its id is the name), as text. */
function errorUnder(page: string, name: string): string | undefined {
  const p = new RegExp(`<p class="field-error" id="${escapeRegExp(name)}-error">([\\s\\S]*?)</p>`).exec(page);
  return p === null ? undefined : unescape(p[1]!.trim());
}

/** The controls marked aria-invalid, by name. */
const invalidControls = (page: string): string[] =>
  [...page.matchAll(/<(?:input|select|textarea)\b[^>]*>/g)]
    .map((m) => m[0])
    .filter((tag) => tag.includes('aria-invalid="true"'))
    .map((tag) => /\bname="([^"]+)"/.exec(tag)![1]!);

const valueOf = (page: string, name: string): string | undefined => {
  const tag = controlTag(page, name);
  return /\bvalue="([^"]*)"/.exec(tag)?.[1];
};

interface Row {
  name?: string;
  type?: string;
  length?: string;
  required?: boolean;
  key?: boolean;
  options?: string;
  relationTable?: string;
  relationField?: string;
  remove?: boolean;
}

/** The form as a browser sends it: every row's text inputs, ticked checkboxes only. */
function formOf(rows: readonly Row[], extra: Record<string, string>): Record<string, string> {
  const form: Record<string, string> = { ...extra };
  rows.forEach((r, i) => {
    form[`fields.${i}.name`] = r.name ?? '';
    form[`fields.${i}.type`] = r.type ?? 'text';
    form[`fields.${i}.length`] = r.length ?? '';
    form[`fields.${i}.options`] = r.options ?? '';
    form[`fields.${i}.relationTable`] = r.relationTable ?? '';
    form[`fields.${i}.relationField`] = r.relationField ?? '';
    if (r.required === true) form[`fields.${i}.required`] = 'on';
    if (r.key === true) form[`fields.${i}.key`] = 'on';
    if (r.remove === true) form[`fields.${i}.remove`] = 'on';
  });
  return form;
}

const CONTACT: readonly Row[] = [
  { name: 'id', type: 'integer', key: true },
  { name: 'name', type: 'text', length: '80', required: true },
  { name: 'size', type: 'option', options: 'S\nM\nL' },
];

describe.each(BACKENDS)('target table pages on $name', (backend) => {
  describe.skipIf(backend.skip)(backend.name, () => {
    let fresh: FreshDatabase;
    let t: TestService;
    let admin: Browserless;

    beforeAll(async () => {
      fresh = await backend.fresh();
      t = await startTestService({ databaseUrl: fresh.url, config: { host: '127.0.0.1', port: 0 } });
      const base = (await t.service.listen()).replace('localhost', '127.0.0.1');
      await t.service.accounts.createUser({ userName: 'tables-admin', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
      admin = await signInHttp(base, 'tables-admin', PASSWORD);
    });
    afterAll(async () => {
      await t?.cleanup();
      await fresh?.cleanup();
    });

    const declared = async (name: string) => {
      const res = await t.inject({ url: `${API}/targetTables('${name}')` });
      return { status: res.statusCode, body: res.json<Record<string, unknown>>() };
    };

    it('creates a table from the form: three fields, a key, a length, option values and a relation, as the API declares it', async () => {
      const rows: Row[] = [...CONTACT, { name: 'customer', type: 'code', relationTable: 'customer' }];
      const answer = await admin.post('/tables/new', { _csrf: admin.csrf, ...formOf(rows, { name: 'contact', action: 'save' }) });
      expect(answer.status).toBe(303);
      expect(answer.headers.get('location')).toBe('/tables/contact');
      const { status, body } = await declared('contact');
      expect(status).toBe(200);
      expect(body).toMatchObject({
        name: 'contact',
        primaryKey: ['id'],
        fields: [
          { name: 'id', type: 'integer', required: true },
          { name: 'name', type: 'text', maxLength: 80, required: true },
          { name: 'size', type: 'option', options: ['S', 'M', 'L'], required: false },
          // A relation naming only the table means its key.
          { name: 'customer', type: 'code', maxLength: 20, relation: { table: 'customer', field: 'no' } },
        ],
      });
      const rowsAnswer = await t.inject({ url: `${API}/targetTables('contact')/rows` });
      expect(rowsAnswer.statusCode).toBe(200);
    });

    it('adds a field to an existing table, and Check changes says what saving would do before anything is saved', async () => {
      const form = await admin.get('/tables/contact/fields');
      expect(form.status).toBe(200);
      expect(valueOf(form.text, 'fields.1.name')).toBe('name');
      expect(valueOf(form.text, 'fields.4.name')).toBe('');
      const rows: Row[] = [
        { name: 'id', type: 'integer', key: true, required: true },
        { name: 'name', type: 'text', length: '120', required: true },
        { name: 'size', type: 'option', options: 'S\nM\nL\nXL' },
        { name: 'customer', type: 'code', length: '20', relationTable: 'customer', relationField: 'no' },
        { name: 'phone', type: 'text', length: '30' },
      ];
      const check = await admin.post('/tables/contact/fields', { _csrf: admin.csrf, ...formOf(rows, { action: 'check' }) });
      expect(check.status).toBe(200);
      expect(unescape(check.text)).toContain('Field "phone" is added as a new optional column.');
      expect((await declared('contact')).body.fields).toHaveLength(4);

      const save = await admin.post('/tables/contact/fields', { _csrf: admin.csrf, ...formOf(rows, { action: 'save' }) });
      expect(save.status).toBe(303);
      const { body } = await declared('contact');
      expect(body.fields).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'phone', type: 'text', maxLength: 30 }),
          expect.objectContaining({ name: 'name', maxLength: 120 }),
          expect.objectContaining({ name: 'size', options: ['S', 'M', 'L', 'XL'] }),
        ]),
      );
      const flash = (answer: { headers: Headers }) =>
        decodeURIComponent(
          answer.headers
            .getSetCookie()
            .find((c) => c.startsWith('ifw_flash='))!
            .split(';')[0]!
            .slice('ifw_flash='.length),
        );
      expect(flash(save)).toBe('info:Target table contact saved; added phone.');
      const again = await admin.post('/tables/contact/fields', { _csrf: admin.csrf, ...formOf(rows, { action: 'save' }) });
      expect(again.status).toBe(303);
      expect(flash(again)).toBe('info:Target table contact: nothing changed, the fields are as stored.');
    });

    it('shows an incompatible change under its input with the API words before saving refuses it the same way', async () => {
      await sql`insert into contact (id, name, size) values (1, 'Alpha', 'S'), (2, 'Bravo', null)`.execute(t.service.db.kysely);
      const before = await declared('contact');
      const current: Row[] = [
        { name: 'id', type: 'integer', key: true },
        { name: 'name', type: 'text', length: '120', required: true },
        { name: 'size', type: 'option', options: 'S\nM\nL\nXL' },
        { name: 'customer', type: 'code', length: '20', relationTable: 'customer' },
        { name: 'phone', type: 'text', length: '30' },
      ];
      const cases: [string, Row[], string, string][] = [
        [
          'a type changed',
          current.map((r) => (r.name === 'phone' ? { ...r, type: 'integer', length: '' } : r)),
          'fields.4.type',
          'Fields, row 5, Type: field "phone": its type cannot change from text to integer',
        ],
        [
          'a length shrunk',
          current.map((r) => (r.name === 'name' ? { ...r, length: '50' } : r)),
          'fields.1.length',
          'Fields, row 2, Length: field "name": maxLength cannot shrink from 120 to 50; stored values may be longer',
        ],
        [
          'an option value removed',
          current.map((r) => (r.name === 'size' ? { ...r, options: 'S\nM' } : r)),
          'fields.2.options',
          'Fields, row 3, Option values: field "size": option values cannot be removed ("L", "XL"); stored rows may hold them',
        ],
        [
          'a required field on a table with rows',
          [...current, { name: 'email', type: 'text', required: true }],
          'fields.5.required',
          'Fields, row 6, Required: new field "email" cannot be required: table "contact" has rows, which would have no value',
        ],
        [
          'a field made required where a row has no value',
          current.map((r) => (r.name === 'size' ? { ...r, required: true } : r)),
          'fields.2.required',
          'Fields, row 3, Required: field "size" cannot become required: some rows of table "contact" have no value in it',
        ],
      ];
      for (const [what, rows, input, words] of cases) {
        const check = await admin.post('/tables/contact/fields', { _csrf: admin.csrf, ...formOf(rows, { action: 'check' }) });
        expect(check.status, what).toBe(200);
        expect(errorUnder(check.text, input), what).toContain(words);
        expect(invalidControls(check.text), what).toEqual([input]);
        expect(controlTag(check.text, input)).toContain(`aria-describedby="${input}-error"`);
        // What was typed is shown again, the refused change included.
        rows.forEach((r, i) => expect(valueOf(check.text, `fields.${i}.name`), what).toBe(r.name));
        expect(check.text, what).toMatch(
          new RegExp(`<select id="fields\\.4\\.type"[\\s\\S]*?<option value="${rows[4]!.type}"\\s+selected>`),
        );
        const save = await admin.post('/tables/contact/fields', { _csrf: admin.csrf, ...formOf(rows, { action: 'save' }) });
        expect(save.status, what).toBe(200);
        expect(errorUnder(save.text, input), what).toContain(words);
        expect(await declared('contact'), what).toEqual(before);
      }
      // The same rule, in the same words, through the API.
      const put = await t.inject({
        method: 'PUT',
        url: `${API}/targetTables('contact')`,
        payload: {
          ...before.body,
          fields: (before.body.fields as { name: string }[]).map((f) => (f.name === 'phone' ? { name: 'phone', type: 'integer' } : f)),
        },
      });
      expect(put.statusCode).toBe(409);
      expect(put.json<{ error: { message: string } }>().error.message).toBe(
        'fields[4].type: field "phone": its type cannot change from text to integer',
      );
    });

    it('filters rows by column, operator and value, together with $filter, and refuses a value that does not fit in words', async () => {
      await sql`insert into contact (id, name, size, phone) values (3, 'Charlie', 'M', '+47 22 00'), (4, 'alphabet', 'L', null)`.execute(
        t.service.db.kysely,
      );
      const names = (page: string) => [...page.matchAll(/<td >(Alpha|Bravo|Charlie|alphabet)<\/td>/g)].map((m) => m[1]);
      const rows = async (query: Record<string, string>) => {
        const page = await admin.get(`/tables/contact?${new URLSearchParams(query).toString()}`);
        expect(page.status).toBe(200);
        return page.text;
      };
      expect(names(await rows({ column: 'name', op: 'contains', value: 'lph' }))).toEqual(['Alpha', 'alphabet']);
      expect(names(await rows({ column: 'name', op: 'startswith', value: 'Al' }))).toEqual(['Alpha']);
      expect(names(await rows({ column: 'name', op: 'contains', value: 'LPH' }))).toEqual([]);
      expect(names(await rows({ column: 'id', op: 'gt', value: '2' }))).toEqual(['Charlie', 'alphabet']);
      expect(names(await rows({ column: 'id', op: 'lt', value: '3' }))).toEqual(['Alpha', 'Bravo']);
      expect(names(await rows({ column: 'size', op: 'eq', value: 'M' }))).toEqual(['Charlie']);
      expect(names(await rows({ column: 'name', op: 'contains', value: 'a', filter: 'id ge 3' }))).toEqual(['Charlie', 'alphabet']);
      expect(await rows({ column: 'name', op: 'contains', value: 'a', filter: 'id ge 3' })).toContain('Rows (2)');

      const notNumber = await rows({ column: 'id', op: 'gt', value: 'ten' });
      expect(errorUnder(notNumber, 'f-value')).toBe('Value: id is an integer field; write a whole number such as 42, not "ten"');
      expect(invalidControls(notNumber)).toEqual(['value']);
      expect(valueOf(notNumber, 'value')).toBe('ten');
      expect(notNumber).toContain('Rows (0)');

      const notAnOption = await rows({ column: 'size', op: 'eq', value: 'XXL' });
      expect(errorUnder(notAnOption, 'f-value')).toBe('Value: size is an option field; write one of S, M, L, XL, not "XXL"');

      const wrongOperator = await rows({ column: 'id', op: 'contains', value: '1' });
      expect(errorUnder(wrongOperator, 'f-op')).toBe(
        'Operator: id is an integer field, which takes equals, greater than, less than; not "contains"',
      );
      expect(invalidControls(wrongOperator)).toEqual(['op']);

      const noColumn = await rows({ column: '', op: 'eq', value: 'Alpha' });
      expect(errorUnder(noColumn, 'f-column')).toBe('Column: choose the column to compare with "Alpha"');
      expect(invalidControls(noColumn)).toEqual(['column']);
    });
  });
});

describe('the new target table form', () => {
  let t: TestService;
  let admin: Browserless;
  let reader: Browserless;

  beforeAll(async () => {
    t = await startTestService({ config: { host: '127.0.0.1', port: 0 } });
    const base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    await t.service.accounts.createUser({ userName: 'form-admin', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
    await t.service.accounts.createUser({ userName: 'form-reader', password: PASSWORD, permissionSets: ['VENDOR IF STANDARD'] });
    admin = await signInHttp(base, 'form-admin', PASSWORD);
    reader = await signInHttp(base, 'form-reader', PASSWORD);
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const post = (rows: readonly Row[], extra: Record<string, string>) =>
    admin.post('/tables/new', { _csrf: admin.csrf, ...formOf(rows, extra) });
  const tables = async () => (await t.inject({ url: `${API}/targetTables` })).body;

  it('offers the form with three blank rows, each control named by its column and row', async () => {
    const page = await admin.get('/tables/new');
    expect(page.status).toBe(200);
    expect(controlTag(page.text, 'fields.2.length')).toContain('aria-label="Length (row 3)"');
    expect(controlTag(page.text, 'fields.0.key')).toContain('aria-label="Primary key (row 1)"');
    expect(page.text).not.toContain('fields.3.name');
    expect((await admin.get('/tables')).text).toContain('New target table');
  });

  it('is not offered to a user whose permission sets do not configure, and its URL answers 403', async () => {
    expect((await reader.get('/tables')).text).not.toContain('New target table');
    expect((await reader.get('/tables/new')).status).toBe(403);
    expect((await reader.get('/tables/customer')).text).not.toContain('Add a field or change fields');
    expect((await reader.get('/tables/customer/fields')).status).toBe(403);
  });

  it('Add a field shows one more row and keeps everything typed, without the rows ticked Remove', async () => {
    const typed: Row[] = [
      { name: 'id', type: 'guid', key: true },
      { name: 'dropped', type: 'date', remove: true },
      { name: 'kind', type: 'option', options: 'A\nB "quoted"', required: true },
    ];
    const page = await post(typed, { name: 'typed_table', action: 'add' });
    expect(page.status).toBe(200);
    expect(valueOf(page.text, 'name')).toBe('typed_table');
    expect(valueOf(page.text, 'fields.0.name')).toBe('id');
    expect(page.text).toMatch(/<select id="fields\.0\.type"[\s\S]*?<option value="guid"\s+selected>/);
    expect(controlTag(page.text, 'fields.0.key')).toContain('checked');
    expect(valueOf(page.text, 'fields.1.name')).toBe('kind');
    expect(controlTag(page.text, 'fields.1.required')).toContain('checked');
    expect(page.text).toContain('>A\nB &quot;quoted&quot;</textarea>');
    expect(valueOf(page.text, 'fields.2.name')).toBe('');
    expect(controlTag(page.text, 'fields.2.name')).toContain('autofocus');
    expect(page.text).not.toContain('dropped');
    expect(page.text).not.toContain('fields.3.name');
    expect(await tables()).not.toContain('typed_table');
  });

  it.each<[string, Row[], string, string]>([
    [
      'a length out of range, counted as the user sees the rows (a blank row between)',
      [{ name: 'id', type: 'integer', key: true }, {}, { name: 'note', type: 'text', length: '0' }],
      'fields.2.length',
      'Fields, row 3, Length: must be between 1 and 2048, got 0',
    ],
    [
      'a length that is not a number',
      [
        { name: 'id', type: 'integer', key: true },
        { name: 'note', type: 'text', length: 'long' },
      ],
      'fields.1.length',
      'Fields, row 2, Length: must be a whole number, got "long"',
    ],
    [
      'an option field without values',
      [
        { name: 'id', type: 'integer', key: true },
        { name: 'size', type: 'option' },
      ],
      'fields.1.options',
      'Fields, row 2, Option values: an option field lists its allowed values',
    ],
    [
      'a boolean in the primary key',
      [
        { name: 'id', type: 'integer', key: true },
        { name: 'active', type: 'boolean', key: true },
      ],
      'fields.1.key',
      'Primary key, row 2: "active" is boolean, which cannot be part of a primary key',
    ],
    [
      'a relation to a table that does not exist',
      [
        { name: 'id', type: 'integer', key: true },
        { name: 'country', type: 'code', relationTable: 'country', relationField: 'code' },
      ],
      'fields.1.relationTable',
      'Fields, row 2, Relation table: no target table "country" is declared; declare it first',
    ],
    [
      'a field name declared twice',
      [
        { name: 'id', type: 'integer', key: true },
        { name: 'ID', type: 'text' },
      ],
      'fields.1.name',
      'Fields, row 2, Name: "ID" is declared twice (also fields[0]); field names are compared without case',
    ],
    [
      'a table name the rules refuse',
      [{ name: 'id', type: 'integer', key: true }],
      'name',
      'Table name: "Bad Name" is not a valid table name',
    ],
    ['a table that exists', [{ name: 'id', type: 'integer', key: true }], 'name', 'Table name: Target table "customer" already exists'],
  ])('refuses %s under its input, marked invalid, keeping what was typed', async (_what, rows, input, words) => {
    const name = input === 'name' ? (words.includes('exists') ? 'customer' : 'Bad Name') : 'refused_table';
    const before = await tables();
    const page = await post(rows, { name, action: 'save' });
    expect(page.status).toBe(200);
    expect(errorUnder(page.text, input)).toContain(words);
    expect(invalidControls(page.text)).toEqual([input]);
    expect(controlTag(page.text, input)).toContain('autofocus');
    expect(unescape(page.text)).toContain(`Not created: ${words}`);
    expect(valueOf(page.text, 'name')).toBe(name);
    rows.forEach((r, i) => expect(valueOf(page.text, `fields.${i}.name`)).toBe(r.name ?? ''));
    expect(await tables()).toBe(before);
  });

  it('refuses a table without a primary key above the rows, in the user words', async () => {
    const page = await post([{ name: 'id', type: 'integer' }], { name: 'keyless', action: 'save' });
    expect(page.status).toBe(200);
    expect(unescape(page.text)).toContain(
      '<p class="field-error" id="fields-error">Primary key: name at least one field that identifies a row</p>',
    );
  });
});
