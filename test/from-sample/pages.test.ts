/**
 * "Create table and mappings from a sample" over real sockets: the proposal from a pasted payload and
 * from a new endpoint's first page, Create saving the table, the integration with its fields and
 * mappings (and the endpoint) in one go, and every refusal leaving nothing behind, shown under its
 * input in the administrator's words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getIntegrationPlan } from '../../src/integrations/store.js';
import { getEndpoint } from '../../src/rest-source/store.js';
import { getTargetTable, listTargetTables } from '../../src/tables/store.js';
import { signInHttp, type Browserless } from '../helpers/console-http.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';
import { startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'from-sample-pages-pass-1';
const SAMPLE = JSON.stringify({
  contacts: [
    { id: 1, name: 'Ada', email: 'ada@example.com', address: { city: 'London' } },
    { id: 2, name: 'Grace', email: null, address: { city: 'Arlington' } },
  ],
});

/** The values of the proposal form's inputs, as a browser would send them (checkboxes only when ticked). */
function formOf(page: string): Record<string, string> {
  const form = page.slice(page.indexOf('action="/integrations/from-sample/create"'));
  const fields: Record<string, string> = {};
  const unescape = (s: string) =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  for (const m of form.matchAll(/<input([^>]*)>/g)) {
    const attrs = m[1]!;
    const name = /name="([^"]*)"/.exec(attrs)?.[1];
    if (name === undefined) continue;
    const type = /type="([^"]*)"/.exec(attrs)?.[1];
    if (type === 'checkbox') {
      if (/\schecked/.test(attrs)) fields[name] = 'on';
      continue;
    }
    fields[name] = unescape(/value="([^"]*)"/.exec(attrs)?.[1] ?? '');
  }
  for (const m of form.matchAll(/<select id="[^"]*" name="([^"]*)"[\s\S]*?<\/select>/g)) {
    fields[m[1]!] = /<option value="([^"]*)"\s+selected/.exec(m[0])?.[1] ?? '';
  }
  return fields;
}

describe.each(BACKENDS)('Create table and mappings from a sample on $name', (backend) => {
  let fresh: FreshDatabase;
  let t: TestService;
  let base: string;
  let admin: Browserless;
  let remote: PagingServer;

  beforeAll(async () => {
    if (backend.skip) return;
    fresh = await backend.fresh();
    t = await startTestService({ databaseUrl: fresh.url, config: { host: '127.0.0.1', port: 0 }, applyExample: false });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    await t.service.accounts.createUser({ userName: 'sample-admin', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
    admin = await signInHttp(base, 'sample-admin', PASSWORD);
    remote = await startPagingServer({ records: 25, pageSize: 10 });
  });
  afterAll(async () => {
    await remote?.close();
    await t?.cleanup();
    await fresh?.cleanup();
  });

  const propose = async (payload: string) => {
    const page = await admin.post('/integrations/from-sample', { _csrf: admin.csrf, payload });
    expect(page.status).toBe(200);
    return page.text;
  };
  const create = (fields: Record<string, string>) => admin.post('/integrations/from-sample/create', { ...fields, _csrf: admin.csrf });

  it.skipIf(backend.skip)('proposes the table, its fields and the mappings from a pasted payload', async () => {
    const page = await propose(SAMPLE);
    const form = formOf(page);
    expect(form).toMatchObject({
      tableName: 'contacts',
      sortingOrder: '1',
      recordsPath: 'contacts',
      'field.0.name': 'id',
      'field.0.type': 'integer',
      'field.0.primaryKey': 'on',
      'field.2.name': 'email',
      'field.3.name': 'address_city',
      'field.3.sourcePath': 'address.city',
    });
    expect(form['field.2.required']).toBeUndefined();
    expect(page).toContain('2 records read from the sample.');
  });

  it.skipIf(backend.skip)('shows why a sample cannot be read under the payload, keeping it', async () => {
    const page = await propose('{"contacts": [');
    expect(page).toMatch(/<textarea[^>]*aria-invalid="true"[^>]*>\{&quot;contacts&quot;: \[<\/textarea>/);
    expect(page).toContain('The sample is not valid JSON');
  });

  it.skipIf(backend.skip)('refuses a bad field name under its row, in words, and saves nothing', async () => {
    const form = formOf(await propose(SAMPLE));
    const page = await create({ ...form, 'field.1.name': 'full name' });
    expect(page.status).toBe(200);
    expect(page.text).toContain('Not created: Fields, row 2, Name: &quot;full name&quot; is not a valid field name');
    expect(page.text).toMatch(
      /<input id="field-1-name" name="field.1.name" value="full name"[^>]*aria-describedby="field-1-name-error" aria-invalid="true"/,
    );
    expect(await listTargetTables(t.service.db)).toEqual([]);
  });

  it.skipIf(backend.skip)('rolls the table back when the integration is refused (all or nothing)', async () => {
    const form = formOf(await propose(SAMPLE));
    const page = await create({ ...form, integrationName: '   ', acceptBulkImportRequests: 'on' });
    expect(page.text).toContain('Not created: Integration name: must not be empty');
    expect(page.text).toMatch(/id="integrationName"[^>]*aria-invalid="true"/);
    expect(await getTargetTable(t.service.db, 'contacts')).toBeUndefined();
    const sql = await t.service.db.introspection.getTables();
    expect(sql.map((x) => x.name)).not.toContain('contacts');
  });

  it.skipIf(backend.skip)('names a refused source path by its row, counted over every row shown', async () => {
    const form = formOf(await propose(SAMPLE));
    delete form['field.1.include'];
    const page = await create({ ...form, 'field.3.sourcePath': 'address..city' });
    expect(page.text).toContain('Not created: Fields, row 4, Source path: invalid path');
    expect(page.text).toMatch(/id="field-3-sourcePath"[^>]*aria-invalid="true"/);
  });

  it.skipIf(backend.skip)('creates the table, the integration, its fields and mappings together', async () => {
    const form = formOf(await propose(SAMPLE));
    const answer = await create({ ...form, acceptBulkImportRequests: 'on' });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/integrations/1');
    const table = await getTargetTable(t.service.db, 'contacts');
    expect(table).toMatchObject({ primaryKey: ['id'] });
    expect(table!.fields.map((f) => `${f.name}:${f.type}:${f.required}`)).toEqual([
      'id:integer:true',
      'name:text:true',
      'email:text:false',
      'address_city:text:true',
    ]);
    const plan = await getIntegrationPlan(t.service.db, 1);
    expect(plan!.integration).toMatchObject({ targetTable: 'contacts', recordsPath: 'contacts', acceptBulkImportRequests: true });
    expect(plan!.fields.map((f) => f.sourcePath)).toEqual(['id', 'name', 'email', 'address.city']);
    expect(plan!.mappings.map((m) => m.targetField)).toEqual(['id', 'name', 'email', 'address_city']);

    // The same again: the table name is taken, said under it.
    const again = await create(form);
    expect(again.text).toMatch(/Not created: Table name: a target table &quot;contacts&quot; already exists/);
    // A second proposal from the same sample picks free names.
    expect(formOf(await propose(SAMPLE))).toMatchObject({ tableName: 'contacts_2', sortingOrder: '2' });
  });

  it.skipIf(backend.skip)("creates a new endpoint with its table and integration from the endpoint's first page", async () => {
    const conn = await admin.post('/rest/connections/new', { _csrf: admin.csrf, code: 'paging', baseUrl: remote.origin, authType: 'none' });
    expect(conn.status).toBe(303);
    const endpointForm = {
      _csrf: admin.csrf,
      code: 'people',
      connectionCode: 'paging',
      method: 'GET',
      path: 'next-absolute',
      body: '',
      integrationSortingOrder: '',
      scheduleSeconds: '',
      paginationType: 'nextLink',
      nextLinkJsonPath: 'next',
      pageSize: '',
      maxPages: '',
      responseDataPath: 'data',
    };
    const page = await admin.post('/integrations/from-sample/endpoint', endpointForm);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`Pagination would request next: <code>${remote.origin}/next-absolute?cursor=2</code>`);
    const form = formOf(page.text);
    expect(form).toMatchObject({ tableName: 'people', recordsPath: '', integrationType: 'restApi', 'field.0.name': 'id' });
    expect(await getEndpoint(t.service.db, 'people')).toBeUndefined();

    // An endpoint that is none is refused with the console's 400, before anything is written.
    for (const endpoint of ['"x"', '{"code":5}', '{']) expect((await create({ ...form, endpoint })).status).toBe(400);
    // A refused endpoint leaves no table and no integration behind.
    const refused = await create({ ...form, endpoint: JSON.stringify({ ...JSON.parse(form.endpoint!), method: 'DELETE' }) });
    expect(refused.text).toMatch(/Not created: Endpoint, method: /);
    expect(await getTargetTable(t.service.db, 'people')).toBeUndefined();
    expect(await getIntegrationPlan(t.service.db, Number(form.sortingOrder))).toBeUndefined();

    const answer = await create(form);
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/rest/endpoints/people');
    expect(await getEndpoint(t.service.db, 'people')).toMatchObject({ integrationSortingOrder: Number(form.sortingOrder) });

    // From the saved endpoint's Preview: its records, and the endpoint pointed at the new integration when asked.
    const previewed = await admin.post('/integrations/from-sample', {
      _csrf: admin.csrf,
      endpointCode: 'people',
      payload: JSON.stringify([{ id: 1, name: 'Record 1' }]),
    });
    const again = formOf(previewed.text);
    expect(again).toMatchObject({ tableName: 'people_2', endpointCode: 'people', feedEndpoint: 'on', integrationType: 'restApi' });
    const repointed = await create(again);
    expect(repointed.headers.get('location')).toBe('/rest/endpoints/people');
    expect(await getEndpoint(t.service.db, 'people')).toMatchObject({ integrationSortingOrder: Number(again.sortingOrder) });
    const kept = formOf(
      (await admin.post('/integrations/from-sample', { _csrf: admin.csrf, endpointCode: 'people', payload: '[{"id":1}]' })).text,
    );
    delete kept.feedEndpoint;
    expect((await create(kept)).headers.get('location')).toBe(`/integrations/${kept.sortingOrder}`);
    expect(await getEndpoint(t.service.db, 'people')).toMatchObject({ integrationSortingOrder: Number(again.sortingOrder) });
  });
});
