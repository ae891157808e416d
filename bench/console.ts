/**
 * The console's request list with a million requests in the table. A fresh SQLite file gets
 * 1 000 000 bulk import requests (submitted over 30 days by two applications and two users, to ten
 * integrations; 98 % Completed, 1 % Failed, the rest Cancelled, Pending or Processing), then the
 * service (built dist/, as users run it) listens on 127.0.0.1 and one client asks, one after another:
 *
 * - Measured: the console's Bulk Import Requests page (`/requests?…`, a whole HTML page with the
 *   filter form, 50 rows, signed in with a session cookie).
 * - Baseline: the same 50 requests through the JSON API (`GET bulkImportRequests?$filter=…&$top=50
 *   &$orderby=submittedAt desc`, Basic authentication of the same user).
 *
 * for each filter the page offers (none, status, integration, submitter, a day's window) and for a
 * page deep into a filtered list (the console follows its keyset link, the API skips with $skip).
 * Each figure is the median of ROUNDS requests after a warm-up. Last lines:
 * `<list> console=<ms> api=<ms> ratio=<console/api> target=2`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import type * as Config from '../src/core/config.js';
import type * as Logger from '../src/core/logger.js';
import type * as ServiceModule from '../src/main/service.js';
import type * as Storage from '../src/storage/database.js';

async function built<T>(modulePath: string): Promise<T> {
  const url = new URL(`../dist/${modulePath}`, import.meta.url);
  if (!fs.existsSync(url)) throw new Error(`${url.pathname} is missing: run npm run build (npm run bench:console does)`);
  return (await import(url.href)) as T;
}

const { loadConfig } = await built<typeof Config>('core/config.js');
const { createLogger } = await built<typeof Logger>('core/logger.js');
const { createService } = await built<typeof ServiceModule>('main/service.js');
const { migrate, openDatabase } = await built<typeof Storage>('storage/database.js');

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const TARGET = 2;
const API = '/api/vendor/integrationFramework/v1.0/bulkImportRequests';
const USER = 'bench-admin';
const PASSWORD = 'bench-console-password';
const DAY = 86_400_000;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-bench-console-'));
const file = path.join(dir, 'ifw.db');

// 1. A million requests, written straight into the table (the submit path is measured elsewhere).
{
  const started = performance.now();
  const db = openDatabase({ kind: 'sqlite', file });
  await migrate(db);
  if (db.dialect !== 'sqlite') throw new Error('expected SQLite');
  const insert = db.sqlite.prepare(
    `insert into ifw_bulk_import_request (request_id, integration_sorting_order, payload, status, submitted_at, processed_at,
       record_count, error_message, inserted_count, updated_count, attempts, ended_at, submitted_by)
     values (?, ?, '[]', ?, ?, ?, ?, ?, ?, 0, 1, ?, ?)`,
  );
  const now = Date.now();
  const submitters = ['app:erp', 'app:shop', 'user:alice'];
  const write = db.sqlite.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const at = now - Math.floor(((REQUESTS - i) / REQUESTS) * 30 * DAY);
      const submitted = new Date(at).toISOString();
      const ended = new Date(at + 400).toISOString();
      const r = i % 100;
      const status = r === 0 ? 'Failed' : r === 1 && i % 300 === 1 ? 'Cancelled' : 'Completed';
      const id = `${at.toString(16).padStart(12, '0').slice(0, 8)}-${at.toString(16).padStart(12, '0').slice(8, 12)}-7000-8000-${i.toString(16).padStart(12, '0')}`;
      insert.run(
        id,
        10 + (i % 10) * 10,
        status,
        submitted,
        ended,
        10,
        status === 'Failed' ? 'record 3: field "no" is required' : '',
        status === 'Completed' ? 10 : 0,
        ended,
        i < 60 ? 'user:bob' : i % 1000 === 7 ? submitters[2] : submitters[i % 2],
      );
    }
  });
  for (let i = 0; i < REQUESTS; i += 50_000) write(i, Math.min(REQUESTS, i + 50_000));
  db.sqlite.exec('analyze');
  await db.close();
  console.log(`${REQUESTS} requests written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

// 2. The service on that file.
const config = loadConfig(
  {},
  { dataDir: dir, host: '127.0.0.1', port: 0, logLevel: 'warn', workers: false, adminUser: USER, adminPassword: PASSWORD },
);
const service = await createService(config, { logger: createLogger(config) });
const base = (await service.listen()).replace('localhost', '127.0.0.1');

async function get(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const answer = await request(`${base}${url}`, { headers });
  return { status: answer.statusCode, body: await answer.body.text(), headers: answer.headers };
}

// Sign in through the form, as a browser does.
const form = await request(`${base}/login`);
const loginCookie = String(([] as string[]).concat(form.headers['set-cookie'] as string[] | string)[0]).split(';')[0]!;
const loginToken = /name="_csrf" value="([^"]+)"/.exec(await form.body.text())![1]!;
const signIn = await request(`${base}/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie, origin: base },
  body: new URLSearchParams({ _csrf: loginToken, userName: USER, password: PASSWORD }).toString(),
});
await signIn.body.text();
const sessionCookie = ([] as string[])
  .concat(signIn.headers['set-cookie'] as string[] | string)
  .find((c) => c.startsWith('ifw_session='))!
  .split(';')[0]!;
const consoleHeaders = { cookie: sessionCookie };
const apiHeaders = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function time(url: string, headers: Record<string, string>, check: (body: string) => void): Promise<number> {
  const first = await get(url, headers);
  if (first.status !== 200) throw new Error(`${url} answered ${first.status}: ${first.body.slice(0, 300)}`);
  check(first.body);
  for (let i = 0; i < 3; i++) await get(url, headers);
  const ms: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    const answer = await get(url, headers);
    ms.push(performance.now() - t0);
    if (answer.status !== 200) throw new Error(`${url} answered ${answer.status}`);
  }
  return median(ms);
}

const rowsOnPage = (body: string) => body.match(/<tr data-request=/g)?.length ?? 0;
const valuesOf = (body: string) => (JSON.parse(body) as { value: unknown[] }).value.length;

const dayStart = new Date(Date.now() - 10 * DAY);
dayStart.setUTCHours(0, 0, 0, 0);
const dayEnd = new Date(dayStart.getTime() + DAY);
const local = (d: Date) => d.toISOString().slice(0, 16);

/** The link to the n-th page of a console list, following each page's "Older" link. */
async function consolePage(first: string, n: number): Promise<string> {
  let url = first;
  for (let i = 1; i < n; i++) {
    const page = await get(url, consoleHeaders);
    const next = /href="(\/requests\?[^"]*after=[^"]*)"/.exec(page.body);
    if (next === null) throw new Error(`no next page after ${url}`);
    url = next[1]!.replace(/&amp;/g, '&');
  }
  return url;
}

const apiList = (filter?: string, skip = 0) =>
  `${API}?${new URLSearchParams({ ...(filter === undefined ? {} : { $filter: filter }), $top: '50', ...(skip === 0 ? {} : { $skip: String(skip) }), $orderby: 'submittedAt desc' }).toString()}`;

const lists: { name: string; console: string; api: string }[] = [
  { name: 'all requests', console: '/requests', api: apiList() },
  { name: 'status Failed', console: '/requests?status=Failed', api: apiList("status eq 'Failed'") },
  { name: 'integration 50', console: '/requests?integration=50', api: apiList('integrationSortingOrder eq 50') },
  { name: 'submitted by user:alice', console: '/requests?submitter=user%3Aalice', api: apiList("submittedBy eq 'user:alice'") },
  {
    name: 'submitted by user:bob (60 requests, all 30 days old)',
    console: '/requests?submitter=user%3Abob',
    api: apiList("submittedBy eq 'user:bob'"),
  },
  {
    name: 'one day, 10 days ago',
    console: `/requests?from=${encodeURIComponent(local(dayStart))}&to=${encodeURIComponent(local(dayEnd))}`,
    api: apiList(`submittedAt ge ${dayStart.toISOString()} and submittedAt lt ${dayEnd.toISOString()}`),
  },
  {
    name: 'status Failed, page 20',
    console: await consolePage('/requests?status=Failed', 20),
    api: apiList("status eq 'Failed'", 19 * 50),
  },
];

const results: string[] = [];
for (const list of lists) {
  const consoleMs = await time(list.console, consoleHeaders, (body) => {
    if (rowsOnPage(body) !== 50) throw new Error(`${list.console}: ${rowsOnPage(body)} rows, expected 50`);
  });
  const apiMs = await time(list.api, apiHeaders, (body) => {
    if (valuesOf(body) !== 50) throw new Error(`${list.api}: ${valuesOf(body)} requests, expected 50`);
  });
  results.push(
    `${list.name}: console=${consoleMs.toFixed(2)}ms api=${apiMs.toFixed(2)}ms ratio=${(consoleMs / apiMs).toFixed(2)} target=${TARGET}`,
  );
}

await service.close();
fs.rmSync(dir, { recursive: true, force: true });
console.log(`\nrequest list pages with ${REQUESTS} requests in the table (median of ${ROUNDS}; lower ratio is better):`);
for (const line of results) console.log(line);
