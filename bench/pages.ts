/**
 * Pagination throughput and memory. A paging server runs in a child process (so client and server
 * do not share an event loop) with 1 000 pages of 20 records in five shapes: Next Link
 * (`/next-absolute`, `next`), Page Number (`/page-number`, `data`), Offset/Limit (`/offset-limit`,
 * `results.items`), Link Header (GitHub's `/github/issues`, a root array) and Cursor (Slack's
 * `/slack/users.list`, `members`).
 *
 * - Measured: a whole endpoint import run, as `ifw run-endpoint` does it, on a fresh SQLite file:
 *   every page fetched and its records staged as they arrive, then all 20 000 records imported through
 *   an integration into the target table in one transaction. The service's code is the built `dist/`
 *   that users run (the npm script builds it first), not the sources run through tsx.
 * - Baseline: a hand-written undici loop over the same server, with an agent of the same settings
 *   (createAgent), following the same links / offsets and parsing the same JSON (and storing nothing).
 * - Also printed: fetchPages alone (the fetch loop without staging and import).
 * - Memory: import runs of 100 and of 1 000 pages, sampling the live heap (after a forced GC) and RSS
 *   every 20 ms; the ratio compares the live-heap high-water marks.
 *
 * Last lines: `<figure> ratio=<measured/baseline> target=<target>`. `BENCH_PAGES_TYPES=cursor,linkHeader`
 * measures only those types; `BENCH_PAGES_ROUNDS` sets the paired rounds per type (21).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { request } from 'undici';
import type * as Clock from '../src/core/clock.js';
import type * as Integrations from '../src/integrations/service.js';
import type * as RunEndpoint from '../src/import-runs/run-endpoint.js';
import type * as Sources from '../src/import-runs/sources.js';
import type * as Logger from '../src/core/logger.js';
import type { PaginationSettings } from '../src/pagination/types.js';
import type * as FetchPages from '../src/rest-source/fetch-pages.js';
import type * as HttpClient from '../src/rest-source/http-client.js';
import type { RestConnection, RestEndpoint } from '../src/rest-source/model.js';
import type * as Secrets from '../src/rest-source/secrets.js';
import type * as RestService from '../src/rest-source/service.js';
import type { EndpointInput } from '../src/rest-source/schemas.js';
import type * as Storage from '../src/storage/database.js';
import type * as Tables from '../src/tables/service.js';
import { ITEMS, ITEMS_INTEGRATION, itemTable } from '../test/helpers/import-fixtures.js';
import { startPagingServer } from '../test/helpers/paging-server.js';

/** A module of the built service (dist/), typed by its source. */
async function built<T>(modulePath: string): Promise<T> {
  const url = new URL(`../dist/${modulePath}`, import.meta.url);
  if (!fs.existsSync(url)) throw new Error(`${url.pathname} is missing: run npm run build (npm run bench:pages does)`);
  return (await import(url.href)) as T;
}

const { systemClock } = await built<typeof Clock>('core/clock.js');
const { declareIntegration } = await built<typeof Integrations>('integrations/service.js');
const { runEndpointNow } = await built<typeof RunEndpoint>('import-runs/run-endpoint.js');
const { defaultImportSources } = await built<typeof Sources>('import-runs/sources.js');
const { createLogger } = await built<typeof Logger>('core/logger.js');
const { fetchPages } = await built<typeof FetchPages>('rest-source/fetch-pages.js');
const { createAgent } = await built<typeof HttpClient>('rest-source/http-client.js');
const { createSecretBox } = await built<typeof Secrets>('rest-source/secrets.js');
const { createConnection, createEndpoint } = await built<typeof RestService>('rest-source/service.js');
const { migrate, openDatabase } = await built<typeof Storage>('storage/database.js');
const { createTargetTable } = await built<typeof Tables>('tables/service.js');

const PAGES = 1000;
const PAGE_SIZE = 20;
/**
 * Paired rounds per type (BENCH_PAGES_ROUNDS). A round is one run of each, about 0.2 s: on a machine
 * whose speed comes in bursts single rounds scatter widely (0.44 to 2.43; the range is printed). With 9
 * rounds one type's median moved by up to 0.22 over four runs of the same code in one morning, with 21
 * by up to 0.15 over five (docs/benchmarks.md).
 */
const ROUNDS = Number(process.env.BENCH_PAGES_ROUNDS ?? 21);
if (!Number.isSafeInteger(ROUNDS) || ROUNDS < 1)
  throw new Error(`BENCH_PAGES_ROUNDS must be a whole number of 1 or more, not ${process.env.BENCH_PAGES_ROUNDS}`);
const TIMEOUT_MS = 10_000;

function startServerProcess(): Promise<{ origin: string; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, 'serve'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the paging server exited (${code})`)));
    createInterface({ input: child.stdout }).once('line', (line) => {
      const { origin } = JSON.parse(line) as { origin: string };
      resolve({ origin, stop: () => void child.kill('SIGTERM') });
    });
  });
}

const connection = (origin: string): RestConnection => ({
  code: 'bench',
  baseUrl: origin,
  auth: { type: 'none' },
  headers: {},
  query: {},
  timeoutMs: TIMEOUT_MS,
  retry: { maxRetries: 0, initialDelayMs: 100 },
});

const endpoint = (path: string, pagination: PaginationSettings): RestEndpoint => ({
  code: 'bench',
  connectionCode: 'bench',
  path,
  method: 'GET',
  headers: {},
  query: {},
  body: null,
  integrationSortingOrder: 1,
  pagination,
  scheduleSeconds: null,
  responseActions: [],
  sessionCookies: false,
});

const settings = {
  nextLink: (maxPages: number): PaginationSettings => ({
    type: 'nextLink',
    nextLinkPath: 'next',
    allowCrossOrigin: false,
    maxPages,
    pageSize: null,
    responseDataPath: 'data',
  }),
  pageNumber: (maxPages: number): PaginationSettings => ({
    type: 'pageNumber',
    pageParam: 'page',
    pageSize: PAGE_SIZE,
    maxPages,
    responseDataPath: 'data',
  }),
  offsetLimit: (maxPages: number): PaginationSettings => ({
    type: 'offsetLimit',
    offsetParam: 'offset',
    limitParam: 'limit',
    pageSize: PAGE_SIZE,
    maxPages,
    responseDataPath: 'results.items',
  }),
  linkHeader: (maxPages: number): PaginationSettings => ({ type: 'linkHeader', maxPages, pageSize: null, responseDataPath: '' }),
  cursor: (maxPages: number): PaginationSettings => ({
    type: 'cursor',
    cursorPath: 'response_metadata.next_cursor',
    cursorParam: 'cursor',
    maxPages,
    pageSize: null,
    responseDataPath: 'members',
  }),
};

type Strategy = keyof typeof settings;
const STRATEGIES = ['nextLink', 'pageNumber', 'offsetLimit', 'linkHeader', 'cursor'] as const satisfies readonly Strategy[];
const PATHS: Record<Strategy, string> = {
  nextLink: '/next-absolute',
  pageNumber: '/page-number',
  offsetLimit: '/offset-limit',
  linkHeader: `/github/issues?per_page=${PAGE_SIZE}`,
  cursor: `/slack/users.list?limit=${PAGE_SIZE}`,
};

/** The baseline: what someone would write by hand with undici for this one API. Returns pages fetched. */
async function baseline(origin: string, strategy: Strategy): Promise<number> {
  const agent = createAgent(TIMEOUT_MS);
  const headers = { accept: 'application/json' };
  let pages = 0;
  try {
    if (strategy === 'nextLink') {
      let url: string | null = `${origin}/next-absolute`;
      while (url !== null) {
        const res = await request(url, { dispatcher: agent, headers });
        const body = (await res.body.json()) as { data: unknown[]; next: string | null };
        pages++;
        url = body.next === null ? null : new URL(body.next, url).href;
      }
    } else if (strategy === 'linkHeader') {
      let url: string | null = `${origin}${PATHS.linkHeader}`;
      while (url !== null) {
        const res = await request(url, { dispatcher: agent, headers });
        await res.body.json();
        pages++;
        const next = /<([^>]*)>;\s*rel="next"/.exec(String(res.headers.link ?? ''));
        url = next === null ? null : new URL(next[1]!, url).href;
      }
    } else if (strategy === 'cursor') {
      let cursor = '';
      do {
        const res = await request(`${origin}${PATHS.cursor}${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, {
          dispatcher: agent,
          headers,
        });
        const body = (await res.body.json()) as { members: unknown[]; response_metadata: { next_cursor: string } };
        pages++;
        cursor = body.response_metadata.next_cursor;
      } while (cursor !== '');
    } else if (strategy === 'pageNumber') {
      for (let page = 1; ; page++) {
        const res = await request(`${origin}/page-number?page=${page}`, { dispatcher: agent, headers });
        const body = (await res.body.json()) as { data: unknown[] };
        pages++;
        if (body.data.length < PAGE_SIZE) break;
      }
    } else {
      for (let offset = 0; ; offset += PAGE_SIZE) {
        const res = await request(`${origin}/offset-limit?offset=${offset}&limit=${PAGE_SIZE}`, { dispatcher: agent, headers });
        const body = (await res.body.json()) as { results: { items: unknown[] } };
        pages++;
        if (body.results.items.length < PAGE_SIZE) break;
      }
    }
  } finally {
    await agent.close();
  }
  return pages;
}

async function measured(origin: string, strategy: Strategy, maxPages = PAGES + 1, onPage: () => void = () => {}): Promise<number> {
  let records = 0;
  const summary = await fetchPages(connection(origin), endpoint(PATHS[strategy], settings[strategy](maxPages)), (page) => {
    records += page.records?.length ?? 0;
    onPage();
  });
  if (records !== Math.min(maxPages, PAGES) * PAGE_SIZE) throw new Error(`expected all records, got ${records}`);
  return summary.pagesFetched;
}

const IMPORT_ENDPOINTS = {
  nextLink: { path: '/next-absolute', paginationType: 'nextLink', nextLinkJsonPath: 'next', responseDataPath: 'data' },
  pageNumber: {
    path: '/page-number',
    paginationType: 'pageNumber',
    pageParameterName: 'page',
    pageSize: PAGE_SIZE,
    responseDataPath: 'data',
  },
  offsetLimit: {
    path: '/offset-limit',
    paginationType: 'offsetLimit',
    offsetParameterName: 'offset',
    limitParameterName: 'limit',
    pageSize: PAGE_SIZE,
    responseDataPath: 'results.items',
  },
  linkHeader: { path: PATHS.linkHeader, paginationType: 'linkHeader', responseDataPath: '' },
  cursor: {
    path: PATHS.cursor,
    paginationType: 'cursor',
    cursorJsonPath: 'response_metadata.next_cursor',
    cursorParameterName: 'cursor',
    responseDataPath: 'members',
  },
} as const;

const logger = createLogger({ logLevel: 'silent' });

/** A fresh database with the target table, integration, connection and endpoint; `run()` imports. */
async function prepareImport(
  origin: string,
  strategy: Strategy,
  maxPages = PAGES + 1,
): Promise<{ run(): Promise<number>; close(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-bench-pages-'));
  const db = openDatabase({ kind: 'sqlite', file: path.join(dir, 'ifw.db') }, { busyTimeoutMs: 10_000 });
  await migrate(db);
  const box = createSecretBox({ secretKey: 'bench-pages', dataDir: dir });
  const clock = systemClock;
  await createTargetTable(db, itemTable(), clock);
  await declareIntegration(db, ITEMS_INTEGRATION, clock);
  await createConnection(db, { code: 'paging', baseUrl: origin, maxRetries: 0 }, clock, box);
  const settings: Partial<EndpointInput> = { ...IMPORT_ENDPOINTS[strategy], maxPages };
  await createEndpoint(db, { code: 'bench', connectionCode: 'paging', path: '/', integrationSortingOrder: ITEMS, ...settings }, clock);
  const ctx = {
    db,
    clock,
    logger,
    owner: 'bench',
    leaseMs: 300_000,
    maxAttempts: 3,
    sources: defaultImportSources(() => box, { deny: [], allow: [] }),
  };
  return {
    async run() {
      const run = await runEndpointNow(ctx, 'bench');
      const rows = (db.sqlite.prepare('select count(*) as n from item').get() as { n: number }).n;
      const expected = Math.min(maxPages, PAGES) * PAGE_SIZE;
      if (run.status !== 'Completed' || rows !== expected)
        throw new Error(`import run ${run.status} with ${rows} rows, expected ${expected}: ${run.errorMessage}`);
      return run.pagesFetched;
    },
    async close() {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Times the import only (not the database set-up). */
async function importPagesPerSecond(origin: string, strategy: Strategy): Promise<number> {
  const prepared = await prepareImport(origin, strategy);
  try {
    return await pagesPerSecond(() => prepared.run());
  } finally {
    await prepared.close();
  }
}

async function pagesPerSecond(run: () => Promise<number>): Promise<number> {
  const started = process.hrtime.bigint();
  const pages = await run();
  return pages / (Number(process.hrtime.bigint() - started) / 1e9);
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Live heap (after a full GC) and RSS high-water marks of an import run, sampled every 20 ms. */
async function memoryPeak(origin: string, maxPages: number, gc: () => void): Promise<{ heap: number; rss: number }> {
  const prepared = await prepareImport(origin, 'nextLink', maxPages);
  gc();
  let heap = 0;
  let rss = 0;
  const sample = (): void => {
    gc();
    const usage = process.memoryUsage();
    heap = Math.max(heap, usage.heapUsed);
    rss = Math.max(rss, usage.rss);
  };
  const timer = setInterval(sample, 20);
  try {
    await prepared.run();
  } finally {
    clearInterval(timer);
    await prepared.close();
  }
  sample();
  return { heap, rss };
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function main(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const server = await startServerProcess();
  try {
    const ratios: Record<Strategy, number> = { nextLink: 0, pageNumber: 0, offsetLimit: 0, linkHeader: 0, cursor: 0 };
    // BENCH_PAGES_TYPES=cursor,linkHeader measures only those (while working on one); the default is all.
    const only = process.env.BENCH_PAGES_TYPES?.split(',').map((type) => type.trim());
    for (const strategy of STRATEGIES.filter((type) => only === undefined || only.includes(type))) {
      await baseline(server.origin, strategy); // warm-up: JIT and the server's first requests
      await measured(server.origin, strategy);
      await importPagesPerSecond(server.origin, strategy);
      const base: number[] = [];
      const ours: number[] = [];
      const fetchOnly: number[] = [];
      const paired: number[] = [];
      // Each round runs both back to back (alternating which goes first) and yields one ratio; the
      // median of those ratios is robust against load that drifts during the benchmark.
      for (let round = 0; round < ROUNDS; round++) {
        const runBase = async (): Promise<void> => void base.push(await pagesPerSecond(() => baseline(server.origin, strategy)));
        const runOurs = async (): Promise<void> => void ours.push(await importPagesPerSecond(server.origin, strategy));
        if (round % 2 === 0) {
          await runBase();
          await runOurs();
        } else {
          await runOurs();
          await runBase();
        }
        paired.push(ours.at(-1)! / base.at(-1)!);
        fetchOnly.push(await pagesPerSecond(() => measured(server.origin, strategy)));
      }
      ratios[strategy] = median(paired);
      console.log(
        `${strategy}: baseline ${median(base).toFixed(0)} pages/s, import run ${median(ours).toFixed(0)} pages/s ` +
          `(fetchPages alone ${median(fetchOnly).toFixed(0)}; medians of ${ROUNDS} rounds of ${PAGES} pages of ${PAGE_SIZE} records; ratio = median of per-round ratios, ` +
          `which ranged ${Math.min(...paired).toFixed(2)}–${Math.max(...paired).toFixed(2)})`,
      );
    }

    await memoryPeak(server.origin, PAGES, gc); // warm-up, so that both measurements start from the same heap
    const small = await memoryPeak(server.origin, 100, gc);
    const large = await memoryPeak(server.origin, PAGES, gc);
    console.log(
      `memory: live heap peak ${mb(small.heap)} at 100 pages, ${mb(large.heap)} at ${PAGES} pages; RSS peak ${mb(small.rss)} / ${mb(large.rss)}`,
    );

    console.log(`nextLink import pages/s ratio=${ratios.nextLink.toFixed(2)} target=0.9`);
    console.log(`pageNumber import pages/s ratio=${ratios.pageNumber.toFixed(2)} target=0.9`);
    console.log(`offsetLimit import pages/s ratio=${ratios.offsetLimit.toFixed(2)} target=0.9`);
    console.log(`linkHeader import pages/s ratio=${ratios.linkHeader.toFixed(2)} target=0.9`);
    console.log(`cursor import pages/s ratio=${ratios.cursor.toFixed(2)} target=0.9`);
    console.log(`memory 1000 vs 100 pages ratio=${(large.heap / small.heap).toFixed(2)} target=1.2`);
  } finally {
    server.stop();
  }
}

// Last, so that every constant above is initialised: the same file is the benchmark and the server.
if (process.argv[2] === 'serve') {
  const server = await startPagingServer({ records: PAGES * PAGE_SIZE, pageSize: PAGE_SIZE });
  console.log(JSON.stringify({ origin: server.origin }));
  process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
} else {
  await main();
}
