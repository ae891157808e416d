/**
 * The integration pages over real sockets: the card with one row per field and its mapping, rows
 * added and removed without script and nothing typed lost, target fields suggested from source paths,
 * a save that stores exactly the rows; errors shown under their input in the user's words (rows
 * counted from 1 as the card shows them), marked `aria-invalid` and focused; new forms with their
 * defaults; and the live check agreeing with Create.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInHttp, type Browserless } from '../helpers/console-http.js';
import { errorUnder, focused, formValues, hasAutofocus, isInvalid, unescape, valueOf } from '../helpers/form-html.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'integration-card-pass-1';

describe('the integration pages', () => {
  let t: TestService;
  let base: string;
  let web: Browserless;

  beforeAll(async () => {
    t = await startTestService({ config: { host: '127.0.0.1', port: 0 } });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    await t.service.accounts.createUser({ userName: 'card-admin', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
    web = await signInHttp(base, 'card-admin', PASSWORD);
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const api = async <T>(url: string): Promise<T> => JSON.parse((await t.inject({ method: 'GET', url: `${API}/${url}` })).body) as T;
  const fieldsOf = (no: number) =>
    api<{ value: { fieldNo: number; title: string; sourcePath: string; columnType: string; constantValue: string | null }[] }>(
      `integrations(${no})/fields`,
    ).then((r) => r.value);
  const mappingsOf = (no: number) =>
    api<{ value: { fieldNo: number; targetField: string; required: boolean }[] }>(`integrations(${no})/mappings`).then((r) => r.value);
  /** The card's form as a browser would send it, with some values changed. */
  const cardForm = async (no: number, changes: Record<string, string> = {}, drop: readonly string[] = []) => {
    const page = await web.get(`/integrations/${no}`);
    const values = { ...formValues(page.text, `/integrations/${no}`), ...changes };
    for (const name of drop) delete values[name];
    return values;
  };

  it('proposes the next free Sorting Order and shows the defaults on the new form', async () => {
    const page = await web.get('/integrations/new');
    expect(page.status).toBe(200);
    expect(valueOf(page.text, 'sortingOrder')).toBe('11');
    expect(valueOf(page.text, 'writeMode')).toBe('insert');
    expect(valueOf(page.text, 'onRecordError')).toBe('fail');
    expect(valueOf(page.text, 'type')).toBe('file');
  });

  it('refuses a Sorting Order in use under its input, in words, focused, keeping what was typed; the live check says the same first', async () => {
    const form = { _csrf: web.csrf, sortingOrder: '10', name: 'Twice', targetTable: 'customer', recordsPath: 'data', writeMode: 'upsert' };
    const live = await web.post('/integrations/new/validate', form);
    expect(live.status).toBe(200);
    expect(live.text).toContain('Sorting Order: an integration with sortingOrder 10 already exists.');
    expect(live.text).not.toContain('These settings are valid');

    const answer = await web.post('/integrations/new', form);
    expect(answer.status).toBe(200);
    expect(errorUnder(answer.text, 'sortingOrder')).toBe('Sorting Order: an integration with sortingOrder 10 already exists.');
    expect(isInvalid(answer.text, 'sortingOrder')).toBe(true);
    expect(focused(answer.text)).toEqual(['sortingOrder']);
    expect(valueOf(answer.text, 'name')).toBe('Twice');
    expect(valueOf(answer.text, 'recordsPath')).toBe('data');
    expect(valueOf(answer.text, 'writeMode')).toBe('upsert');
    expect(answer.text).not.toMatch(/sortingOrder: an integration/);
  });

  it('says valid live only for what Create then accepts', async () => {
    const form = { _csrf: web.csrf, sortingOrder: '20', name: 'Contacts', targetTable: 'customer', recordsPath: '' };
    expect((await web.post('/integrations/new/validate', form)).text).toContain('These settings are valid.');
    const created = await web.post('/integrations/new', form);
    expect(created.status).toBe(303);
    expect(created.headers.get('location')).toBe('/integrations/20');
    const again = await web.post('/integrations/new/validate', form);
    expect(again.text).toContain('already exists');
  });

  it('shows one row per field with its mapping, Field No. once', async () => {
    const page = (await web.get('/integrations/10')).text;
    expect(valueOf(page, 'row.0.fieldNo')).toBe('1');
    expect(valueOf(page, 'row.0.sourcePath')).toBe('no');
    expect(valueOf(page, 'row.0.targetField')).toBe('no');
    expect(valueOf(page, 'row.0.required')).toBe('on');
    expect(valueOf(page, 'row.3.sourcePath')).toBe('address.city');
    expect(valueOf(page, 'row.3.targetField')).toBe('city');
    expect(valueOf(page, 'row.4.fieldNo')).toBe('5');
    expect(valueOf(page, 'row.5.fieldNo')).toBeUndefined();
    expect(page).toMatch(
      /<button type="submit" name="remove" value="4" class="secondary" formnovalidate aria-label="Remove row 5">\s*Remove\s*<\/button>/,
    );
  });

  it('starts a new integration with one row numbered 1; Add a row keeps everything typed, numbers the new row and suggests target fields', async () => {
    const first = (await web.get('/integrations/20')).text;
    expect(valueOf(first, 'row.0.fieldNo')).toBe('1');
    expect(valueOf(first, 'row.1.fieldNo')).toBeUndefined();

    const typed = await cardForm(20, { name: 'Contacts renamed', 'row.0.sourcePath': 'contact.Email', 'row.0.fieldNo': '4', add: 'row' });
    const added = await web.post('/integrations/20', typed);
    expect(added.status).toBe(200);
    expect(valueOf(added.text, 'name')).toBe('Contacts renamed');
    expect(valueOf(added.text, 'row.0.sourcePath')).toBe('contact.Email');
    expect(valueOf(added.text, 'row.0.targetField')).toBe('email');
    expect(valueOf(added.text, 'row.0.title')).toBe('Email');
    expect(added.text).toContain('A target field was filled in');
    expect(valueOf(added.text, 'row.1.fieldNo')).toBe('5');
    expect(hasAutofocus(added.text, 'row.1.title')).toBe(true);
    // Nothing is saved by adding a row.
    expect((await api<{ name: string }>('integrations(20)')).name).toBe('Contacts');
    expect(await fieldsOf(20)).toEqual([]);
  });

  it('removes a row without saving, keeping the others as typed', async () => {
    const form = {
      ...(await cardForm(20)),
      'row.1.fieldNo': '2',
      'row.1.title': 'Name',
      'row.1.sourcePath': 'name',
      'row.2.fieldNo': '3',
      'row.2.title': 'City',
      'row.2.sourcePath': 'address.city',
      remove: '1',
    };
    const answer = await web.post('/integrations/20', form);
    expect(answer.status).toBe(200);
    expect(valueOf(answer.text, 'row.1.title')).toBe('City');
    expect(valueOf(answer.text, 'row.1.fieldNo')).toBe('3');
    expect(valueOf(answer.text, 'row.2.fieldNo')).toBeUndefined();
    expect(await fieldsOf(20)).toEqual([]);
  });

  it('saves each row as a field and, with a target field, its mapping; blank rows are left out', async () => {
    const form = {
      ...(await cardForm(20)),
      'row.0.fieldNo': '1',
      'row.0.title': 'No.',
      'row.0.sourcePath': 'id',
      'row.0.targetField': 'no',
      'row.0.required': 'on',
      'row.1.fieldNo': '2',
      'row.2.fieldNo': '3',
      'row.2.title': 'Country',
      'row.2.columnType': 'constant',
      'row.2.constantValue': 'DE',
      'row.2.targetField': 'country',
      'row.3.fieldNo': '4',
      'row.3.title': 'Unmapped',
      'row.3.sourcePath': 'extra',
    };
    const answer = await web.post('/integrations/20', form);
    expect(answer.status).toBe(303);
    expect(await fieldsOf(20)).toEqual([
      expect.objectContaining({ fieldNo: 1, title: 'No.', sourcePath: 'id', columnType: 'standard', constantValue: null }),
      expect.objectContaining({ fieldNo: 3, title: 'Country', columnType: 'constant', constantValue: 'DE' }),
      expect.objectContaining({ fieldNo: 4, title: 'Unmapped', sourcePath: 'extra' }),
    ]);
    expect(await mappingsOf(20)).toEqual([
      expect.objectContaining({ fieldNo: 1, targetField: 'no', required: true }),
      expect.objectContaining({ fieldNo: 3, targetField: 'country', required: false }),
    ]);
    const card = (await web.get('/integrations/20')).text;
    expect(valueOf(card, 'row.1.constantValue')).toBe('DE');
    expect(valueOf(card, 'row.1.targetField')).toBe('country');
    expect(valueOf(card, 'row.2.targetField')).toBe('');
  });

  it('shows an error under its row and input, counted as the card counts, marked and focused, keeping every row typed', async () => {
    const before = await fieldsOf(20);
    const form = {
      ...(await cardForm(20)),
      'row.1.title': '',
      'row.1.columnType': 'standard',
      'row.1.constantValue': '',
      'row.1.targetField': '',
      'row.1.fieldNo': '3',
      'row.3.fieldNo': '7',
      'row.3.title': 'No path',
      'row.3.sourcePath': '',
      'row.3.targetField': 'email',
    };
    // Row 2 is left blank, so the API's fields[2] is the card's row 4.
    const answer = await web.post('/integrations/20', form);
    expect(answer.status).toBe(200);
    const words = errorUnder(answer.text, 'row.3.sourcePath');
    expect(words).toMatch(/^Fields, row 4, Source path: a standard column says where its value sits/);
    expect(unescape(answer.text)).toContain(`Not saved: ${words}`);
    expect(answer.text).not.toContain('fields[2]');
    expect(isInvalid(answer.text, 'row.3.sourcePath')).toBe(true);
    expect(isInvalid(answer.text, 'row.0.sourcePath')).toBe(false);
    expect(focused(answer.text)).toEqual(['row.3.sourcePath']);
    expect(valueOf(answer.text, 'row.3.title')).toBe('No path');
    expect(valueOf(answer.text, 'row.3.targetField')).toBe('email');
    expect(valueOf(answer.text, 'row.2.title')).toBe('Unmapped');
    expect(await fieldsOf(20)).toEqual(before);
  });

  it('names the other row of a duplicate Field No. by its row too', async () => {
    const answer = await web.post('/integrations/20', await cardForm(20, { 'row.2.fieldNo': '1' }));
    expect(errorUnder(answer.text, 'row.2.fieldNo')).toBe('Fields, row 3, Field No.: field 1 is listed twice (also row 1)');
    expect(focused(answer.text)).toEqual(['row.2.fieldNo']);
  });

  it('checks the card live with what Save checks', async () => {
    const broken = await web.post(
      '/integrations/20/validate',
      await cardForm(20, { 'row.0.targetField': 'email', 'row.1.targetField': 'email' }),
    );
    expect(unescape(broken.text)).toContain('Fields, row 2, Target field: "email" already receives field 1 (also row 1)');
    const fine = await web.post('/integrations/20/validate', await cardForm(20, { name: 'Still fine' }));
    expect(fine.text).toContain('These settings are valid.');
    expect((await api<{ name: string }>('integrations(20)')).name).toBe('Contacts');
  });

  it('refuses a form the card does not send with the 400 page and changes nothing', async () => {
    const answer = await web.post('/integrations/20', await cardForm(20, { 'row.0.secret': 'x' }));
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('row.0.secret');
  });
});
