/**
 * The console pages that tell the truth before and after an import, over real sockets without a
 * browser: "Try a payload" says how the request would end (Failed and nothing written with On record
 * error = fail, or the counts), a source path that matches nothing is an amber warning listing the keys
 * the records have, "Preview first page" warns in amber when pagination would stop after page 1 too
 * early, and a run that stopped short is "Completed with warnings" in the runs list, on its page and on
 * the dashboard.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { runQueuedImports } from '../../src/import-runs/run-imports.js';
import { declareIntegration } from '../../src/integrations/service.js';
import { createSecretBox } from '../../src/rest-source/secrets.js';
import { createTargetTable } from '../../src/tables/service.js';
import { signInHttp, type Browserless } from '../helpers/console-http.js';
import { addEndpoint, ITEMS_INTEGRATION, runContext, setupItems } from '../helpers/import-fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'dry-run-pages-pass-1';
const clock = systemClock;

let t: TestService;
let console_: Browserless;
let api: http.Server;
let origin: string;

/** 10 records per page whatever is asked, 35 in all, and it says so: `{ data, total }` at /numbered?page=N. */
function startApi(): Promise<void> {
  api = http.createServer((req, res) => {
    const page = Number(new URL(req.url ?? '/', 'http://api').searchParams.get('page') ?? 1);
    const ids = Array.from({ length: 10 }, (_, i) => (page - 1) * 10 + i + 1).filter((id) => id <= 35);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ data: ids.map((id) => ({ id, name: `Record ${id}` })), total: 35 }));
  });
  return new Promise((resolve) =>
    api.listen(0, '127.0.0.1', () => {
      origin = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
      resolve();
    }),
  );
}

beforeAll(async () => {
  await startApi();
  t = await startTestService({ config: { host: '127.0.0.1', port: 0 }, applyExample: false });
  const base = (await t.service.listen()).replace('localhost', '127.0.0.1');
  await t.service.accounts.createUser({ userName: 'dry-admin', password: PASSWORD, permissionSets: ['SUPER'] });
  console_ = await signInHttp(base, 'dry-admin', PASSWORD);
  const { db } = t.service;
  await setupItems(db, clock, createSecretBox(t.config), origin);
  await createTargetTable(
    db,
    {
      name: 'contact',
      primaryKey: ['no'],
      fields: [
        { name: 'no', type: 'code', maxLength: 10 },
        { name: 'name', type: 'text', maxLength: 8, required: true },
        { name: 'email', type: 'text', maxLength: 80 },
      ],
    },
    clock,
  );
});
afterAll(async () => {
  await t?.cleanup();
  await new Promise((resolve) => api?.close(resolve));
});

async function contacts(onRecordError: 'fail' | 'skip', writeMode: 'insert' | 'upsert', emailPath = 'contact.email'): Promise<void> {
  await declareIntegration(
    t.service.db,
    {
      sortingOrder: 30,
      name: 'Contacts',
      type: 'file',
      targetTable: 'contact',
      writeMode,
      onRecordError,
      fields: [
        { fieldNo: 1, title: 'No', sourcePath: 'no' },
        { fieldNo: 2, title: 'Name', sourcePath: 'contact.name' },
        { fieldNo: 3, title: 'Email', sourcePath: emailPath },
      ],
      mappings: [
        { fieldNo: 1, targetField: 'no' },
        { fieldNo: 2, targetField: 'name' },
        { fieldNo: 3, targetField: 'email' },
      ],
    },
    clock,
  );
}

const payload = JSON.stringify([
  { no: 'C1', contact: { name: 'Ann', email: 'ann@example.com' } },
  { no: 'C2', contact: { name: 'Bartholomew', email: 'bart@example.com' } },
  { no: 'C3', contact: { name: 'Cy', email: 'cy@example.com' } },
]);
const tryIt = (text: string) => console_.post('/integrations/30/try', { _csrf: console_.csrf, payload: text });
const contactNos = async () =>
  (
    await t.service.db
      .selectFrom('contact' as never)
      .select('no' as never)
      .execute()
  ).length;

describe('Try a payload', () => {
  it('with On record error = fail and one bad record of three: would end Failed, nothing would be written', async () => {
    await contacts('fail', 'insert');
    const page = await tryIt(payload);
    expect(page.status).toBe(200);
    expect(page.text).toContain('The import would end Failed: nothing would be written.');
    expect(page.text).toContain('record 2: field &quot;name&quot; value &quot;Bartholomew&quot; exceeds 8 characters');
    expect(page.text).not.toContain('would be inserted');
    expect(await contactNos()).toBe(0);
  });

  it('with skip: the counts of inserted, updated and skipped, as the real import would give them', async () => {
    await contacts('skip', 'upsert');
    await t.service.db
      .insertInto('contact' as never)
      .values({ no: 'C1', name: 'Old' })
      .execute();
    const page = await tryIt(payload);
    expect(page.text).toContain('The import would end Completed: 1 would be inserted, 1 updated, 1 skipped.');
    expect(page.text).toContain('1 record skipped: record 2: field &quot;name&quot;');
    expect(
      await t.service.db
        .selectFrom('contact' as never)
        .selectAll()
        .execute(),
    ).toEqual([{ no: 'C1', name: 'Old', email: null }]);
    await t.service.db.deleteFrom('contact' as never).execute();
  });

  it('a source path that matches nothing warns in amber, naming the path and the keys the records have', async () => {
    await contacts('skip', 'insert', 'contact.emial');
    const page = await tryIt(payload);
    expect(page.text).toMatch(/<div class="warning" role="status">\s*<strong>Warnings<\/strong>/);
    expect(page.text).toContain(
      'Source path &quot;contact.emial&quot; (field &quot;email&quot;) matches nothing in the 3 records; they have contact.name, contact.email.',
    );
  });
});

describe('Preview first page and the run after it', () => {
  let runId: string;

  beforeAll(async () => {
    await addEndpoint(t.service.db, clock, 'short', {
      path: '/numbered',
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      pageSize: 25,
      responseDataPath: 'data',
    });
    await addEndpoint(t.service.db, clock, 'fits', {
      path: '/numbered',
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      pageSize: 10,
      responseDataPath: 'data',
    });
    await declareIntegration(t.service.db, { ...ITEMS_INTEGRATION, writeMode: 'upsert' }, clock);
  });

  it('warns in amber when pagination would stop after page 1 with fewer records than Page Size, with the fix, and gives the outcome', async () => {
    const page = await console_.post('/rest/endpoints/short/preview', { _csrf: console_.csrf });
    expect(page.status).toBe(200);
    const warning = /<div class="warning" role="status">([\s\S]*?)<\/div>/.exec(page.text)?.[1] ?? '';
    expect(warning).toContain(
      'Pagination would stop after page 1. Only the first page is imported: page 1 has 10 records, fewer than Page Size 25',
    );
    expect(warning).toContain('match Page Size (set it to 10, the records the API returned on page 1)');
    expect(page.text).toContain('The import would end Completed: 10 would be inserted, 0 updated, 0 skipped.');
    // A preview writes nothing.
    expect(
      await t.service.db
        .selectFrom('item' as never)
        .selectAll()
        .execute(),
    ).toEqual([]);
  });

  it('a run that stopped short is Completed with warnings (amber) in the runs list, on its page and on the dashboard', async () => {
    const queued = await console_.post('/rest/endpoints/short/run', { _csrf: console_.csrf });
    expect(queued.status).toBe(303);
    runId = /\/runs\/([0-9a-f-]{36})/.exec(queued.headers.get('location') ?? '')![1]!;
    await console_.post('/rest/endpoints/fits/run', { _csrf: console_.csrf });
    await runQueuedImports(runContext(t.service.db, clock, createSecretBox(t.config)));

    const list = await console_.get('/runs');
    expect(list.text.match(/class="status status-Completedwithwarnings">Completed with warnings</g)).toHaveLength(1);
    expect(list.text.match(/class="status status-Completed">Completed</g)).toHaveLength(1);

    const runPage = await console_.get(`/runs/${runId}`);
    expect(runPage.text).toContain('<span class="status status-Completedwithwarnings">Completed with warnings</span>');
    expect(runPage.text).toContain('Warnings: records may be missing');
    expect(runPage.text).toContain('Page Size differs from the API&#39;s real page size');

    const dashboard = await console_.get('/');
    const runs = /<section aria-label="REST import runs, last 24 hours">([\s\S]*?)<\/section>/.exec(dashboard.text)?.[1] ?? '';
    expect(runs).toMatch(
      /<div class="n">1<\/div>\s*<div><span class="status status-Completedwithwarnings">Completed with warnings<\/span><\/div>/,
    );
    expect(runs).toMatch(/<div class="n">2<\/div>\s*<div><span class="status status-Completed">Completed<\/span><\/div>/);
  });
});
