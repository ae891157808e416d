/**
 * Scaling out on PostgreSQL, measured with the built service in real processes, each configuration on a
 * fresh database (PostgreSQL `ifw_bench_<random>`, dropped afterwards; SQLite a fresh file):
 *
 * - Processing: a backlog (400 requests × 250 records by default, through examples/customers.yaml) is
 *   submitted through `ifw serve --no-workers`, which is then stopped; then 1, 2 or 4 `ifw worker`
 *   processes drain it. Timed from spawning the workers to the last request's `ended_at`; every request
 *   must be Completed and the target table must hold every record. Also printed: the same from the
 *   first claim on (without process start-up). Ratios are to 1 worker in the same run.
 * - Submit: autocannon against 1 and 2 `ifw serve --no-workers` processes (with 2, two autocannon
 *   processes at once, half the connections each), every 202 durable; afterwards every 202 must be a row.
 * - SQLite against PostgreSQL for one process: the same backlog drained by one `ifw serve` (API and
 *   workers), and the same submit load on one `ifw serve --no-workers`.
 *
 * Every configuration runs BENCH_ROUNDS times (rotating the order) and the medians are compared.
 * PostgreSQL: BENCH_POSTGRES_URL, else IFW_TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/postgres.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';

const root = path.resolve(import.meta.dirname, '..');
const BIN = path.join(root, 'bin/ifw.js');
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const backlogRequests = Number(process.env.BENCH_BACKLOG_REQUESTS ?? 400);
const backlogRecords = Number(process.env.BENCH_BACKLOG_RECORDS ?? 250);
const workerCounts = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number);
const logLevel = process.env.BENCH_LOG_LEVEL ?? 'info';
const adminUrl = process.env.BENCH_POSTGRES_URL ?? process.env.IFW_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const API = '/api/vendor/integrationFramework/v1.0/bulkImportRequests';
const submitBody = JSON.stringify({
  integrationSortingOrder: 10,
  payload: JSON.stringify([
    { no: 'C001', name: 'Contoso Ltd', email: 'info@contoso.example', address: { city: 'Oslo', country: 'NO' } },
    { no: 'C002', name: 'Fabrikam', email: 'sales@fabrikam.example', address: { city: 'Lyon', country: 'FR' } },
  ]),
});

type Backend = 'sqlite' | 'postgres';

// ---- processes ---------------------------------------------------------------------------------

/** This process's environment without any IFW_* setting, plus `extra`. */
function childEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('IFW_'))), ...extra };
}

/** Runs `ifw …` to completion and answers its stdout. */
function ifw(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`ifw ${args.join(' ')} exited with ${code}: ${err.trim()}`)),
    );
  });
}

interface Proc {
  readonly child: ChildProcess;
  readonly stderr: string[];
  stop(): Promise<void>;
}

/**
 * Spawns `ifw <args>` and resolves once a stdout line gives `ready` an answer. Stdout is drained (a
 * full pipe would stall the process's logging) and kept only for that.
 */
function startIfw<T>(args: string[], env: NodeJS.ProcessEnv, ready: (line: string) => T | undefined): Promise<{ proc: Proc; value: T }> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const proc: Proc = {
    child,
    stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return closed;
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await closed;
      clearTimeout(kill);
    },
  };
  return new Promise((resolve, reject) => {
    let done = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (done) return;
      const value = ready(line);
      if (value === undefined) return;
      done = true;
      resolve({ proc, value });
    });
    void closed.then(() => {
      if (done) return;
      const said = stderr.join(' ').trim();
      const missing = /unknown command '([^']+)'/.exec(said);
      reject(
        new Error(
          missing !== null
            ? `this build has no \`ifw ${missing[1]}\` command ("${stderr[0]}"); bench:scale needs it`
            : `ifw ${args.join(' ')} exited with ${child.exitCode ?? child.signalCode} before it was ready: ${said}`,
        ),
      );
    });
  });
}

const listeningPort = (line: string): number | undefined => {
  if (!line.includes('integration service listening')) return undefined;
  return Number(new URL((JSON.parse(line) as { address: string }).address).port);
};

/** `msg` of the line `ifw worker` logs once it runs, e.g. "worker started" (as in test/helpers/process.ts). */
const WORKER_STARTED = /"msg":"[^"]*\bworkers?\b[^"]*\b(started|ready|running)\b[^"]*"/i;

const startApi = (env: NodeJS.ProcessEnv) => startIfw(['serve', '--no-workers'], env, listeningPort);
const startServe = (env: NodeJS.ProcessEnv) => startIfw(['serve'], env, listeningPort);
const startWorker = (env: NodeJS.ProcessEnv) => startIfw(['worker'], env, (line) => (WORKER_STARTED.test(line) ? true : undefined));

// ---- stores ------------------------------------------------------------------------------------

interface Stats {
  readonly counts: Record<string, number>;
  readonly rows: number;
  /** Earliest claim and latest end of the Completed requests (ISO text). */
  readonly firstStarted: string | null;
  readonly lastEnded: string | null;
}

interface Store {
  readonly backend: Backend;
  readonly env: NodeJS.ProcessEnv;
  readonly authorization: string;
  stats(): Promise<Stats>;
  cleanup(): Promise<void>;
}

const COUNTS = 'select status, count(*) as n from ifw_bulk_import_request group by status';
const TIMES = "select min(started_at) as s, max(ended_at) as e from ifw_bulk_import_request where status = 'Completed'";
const ROWS = 'select count(*) as n from customer';

async function adminQuery(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A fresh database with examples/customers.yaml applied and an application `bench` registered; answers its bearer token too. */
async function freshStore(backend: Backend): Promise<Store> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `ifw-bench-scale-${backend}-`));
  const name = `ifw_bench_${randomBytes(6).toString('hex')}`;
  let url: string | undefined;
  if (backend === 'postgres') {
    await adminQuery(`create database ${name}`);
    const u = new URL(adminUrl);
    u.pathname = `/${name}`;
    url = u.toString();
  }
  const env = childEnv({
    IFW_DATA_DIR: dir,
    ...(url === undefined ? {} : { IFW_DATABASE_URL: url }),
    IFW_PORT: '0',
    IFW_LOG_LEVEL: logLevel,
    IFW_DEV_TOKEN_ISSUER: 'true',
  });
  const cleanup = async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    if (url !== undefined) await adminQuery(`drop database if exists ${name} with (force)`);
  };
  try {
    await ifw(['migrate'], env);
    await ifw(['apply', path.join(root, 'examples/customers.yaml')], env);
    await ifw(['apps', 'add', 'bench', '-p', 'VENDOR IF ALL'], env);
    const authorization = `Bearer ${(await ifw(['token', '--app', 'bench', '--minutes', '120'], env)).trim()}`;
    let stats: () => Promise<Stats>;
    let close: () => Promise<void>;
    if (url !== undefined) {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      stats = async () => {
        const counts = await pool.query<{ status: string; n: string }>(COUNTS);
        const times = await pool.query<{ s: string | null; e: string | null }>(TIMES);
        const rows = await pool.query<{ n: string }>(ROWS);
        return {
          counts: Object.fromEntries(counts.rows.map((r) => [r.status, Number(r.n)])),
          rows: Number(rows.rows[0]!.n),
          firstStarted: times.rows[0]!.s,
          lastEnded: times.rows[0]!.e,
        };
      };
      close = () => pool.end();
    } else {
      let db: BetterSqlite3.Database | undefined;
      stats = () => {
        // Opened on first use: by then the service has created the file's WAL and shared memory.
        db ??= new BetterSqlite3(path.join(dir, 'ifw.db'), { readonly: true });
        const times = db.prepare(TIMES).get() as { s: string | null; e: string | null };
        return Promise.resolve({
          counts: Object.fromEntries((db.prepare(COUNTS).all() as { status: string; n: number }[]).map((r) => [r.status, r.n])),
          rows: (db.prepare(ROWS).get() as { n: number }).n,
          firstStarted: times.s,
          lastEnded: times.e,
        });
      };
      close = () => {
        db?.close();
        return Promise.resolve();
      };
    }
    return {
      backend,
      env,
      authorization,
      stats,
      async cleanup() {
        await close();
        await cleanup();
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

// ---- processing --------------------------------------------------------------------------------

async function submitBacklog(store: Store): Promise<void> {
  const { proc, value: port } = await startApi(store.env);
  try {
    let next = 0;
    const client = async () => {
      while (next < backlogRequests) {
        const n = next++;
        const payload = JSON.stringify(
          Array.from({ length: backlogRecords }, (_, i) => ({
            no: `B${n}-${i}`,
            name: `Customer ${n}-${i}`,
            email: `c${n}-${i}@example.com`,
            address: { city: 'Oslo', country: 'NO' },
          })),
        );
        const res = await fetch(`http://127.0.0.1:${port}${API}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: store.authorization },
          body: JSON.stringify({ integrationSortingOrder: 10, payload }),
        });
        if (res.status !== 202) throw new Error(`backlog submit answered ${res.status}: ${await res.text()}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, client));
  } finally {
    await proc.stop();
  }
  const { counts } = await store.stats();
  if (counts.Pending !== backlogRequests)
    throw new Error(`backlog: expected ${backlogRequests} Pending requests, found ${JSON.stringify(counts)}`);
}

interface Drained {
  /** Records/s from spawning the processes to the last request's end. */
  readonly fromStart: number;
  /** Records/s from the first claim to the last request's end. */
  readonly fromClaim: number;
}

/** Starts the processes on a submitted backlog and times them until every request is Completed. */
async function drain(store: Store, start: () => Promise<Proc[]>): Promise<Drained> {
  const total = backlogRequests * backlogRecords;
  const spawnedAt = Date.now();
  const procs = await start();
  try {
    const deadline = Date.now() + 600_000;
    for (;;) {
      const s = await store.stats();
      if ((s.counts.Failed ?? 0) > 0 || (s.counts.Cancelled ?? 0) > 0)
        throw new Error(`requests did not complete: ${JSON.stringify(s.counts)}`);
      if (s.counts.Completed === backlogRequests) {
        if (s.rows !== total)
          throw new Error(`all ${backlogRequests} requests Completed but the target table holds ${s.rows} rows, not ${total}`);
        const end = Date.parse(s.lastEnded!);
        return { fromStart: total / ((end - spawnedAt) / 1000), fromClaim: total / ((end - Date.parse(s.firstStarted!)) / 1000) };
      }
      if (Date.now() > deadline) throw new Error(`not drained after 10 minutes: ${JSON.stringify(s.counts)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
  }
}

const workers = (n: number) => (store: Store) => async () => {
  const started = await Promise.allSettled(Array.from({ length: n }, () => startWorker(store.env)));
  const procs = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value.proc] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(procs.map((p) => p.stop()));
    throw failed.reason;
  }
  return procs;
};
const serve = (store: Store) => async () => [(await startServe(store.env)).proc];

// ---- submit ------------------------------------------------------------------------------------

interface Load {
  readonly accepted: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly duration: number;
}

function autocannon(port: number, conns: number, authorization: string): Promise<Load> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        path.join(root, 'node_modules/autocannon/autocannon.js'),
        '--json',
        '-c',
        String(conns),
        '-d',
        String(seconds),
        '-m',
        'POST',
        '-H',
        'content-type=application/json',
        '-H',
        `authorization=${authorization}`,
        '-b',
        submitBody,
        `http://127.0.0.1:${port}${API}`,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('close', () => {
      try {
        const r = JSON.parse(out) as { '2xx': number; non2xx: number; errors: number; duration: number };
        resolve({ accepted: r['2xx'], non2xx: r.non2xx, errors: r.errors, duration: r.duration });
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}

/** Durable 202s per second from `apis` API processes on one database, the connections split across them. */
async function submitThroughput(store: Store, apis: number): Promise<number> {
  const started = await Promise.all(Array.from({ length: apis }, () => startApi(store.env)));
  let loads: Load[];
  try {
    loads = await Promise.all(started.map((s) => autocannon(s.value, Math.floor(connections / apis), store.authorization)));
  } finally {
    await Promise.all(started.map((s) => s.proc.stop()));
  }
  const accepted = loads.reduce((sum, l) => sum + l.accepted, 0);
  const bad = loads.reduce((sum, l) => sum + l.non2xx + l.errors, 0);
  if (bad > 0) throw new Error(`${store.backend}, ${apis} API process(es): ${bad} non-2xx answers or errors`);
  const { counts } = await store.stats();
  const rows = counts.Pending ?? 0;
  // Requests still in flight when the load stops are stored without their 202 being counted.
  if (rows < accepted || rows > accepted + connections)
    throw new Error(`${store.backend}, ${apis} API process(es): ${accepted} requests got 202 but ${rows} are stored`);
  return accepted / Math.max(...loads.map((l) => l.duration));
}

// ---- the run -----------------------------------------------------------------------------------

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rotate = <T>(xs: T[], by: number): T[] => xs.map((_, i) => xs[(i + by) % xs.length]!);
const fmt = (x: number) => x.toFixed(0);

async function onFresh<T>(backend: Backend, body: (store: Store) => Promise<T>): Promise<T> {
  const store = await freshStore(backend);
  try {
    return await body(store);
  } finally {
    await store.cleanup();
  }
}

console.log(
  `cores ${os.cpus().length}; ${rounds} rounds; backlog ${backlogRequests} requests × ${backlogRecords} records; submit: ${connections} connections, ${seconds} s, bearer token (dev issuer); ` +
    `worker concurrency ${process.env.IFW_WORKER_CONCURRENCY ?? 'default'}`,
);

// Submit: one API process on SQLite, one and two on PostgreSQL.
type SubmitCase = 'sqlite-1' | 'postgres-1' | 'postgres-2';
const submitCases: SubmitCase[] = ['sqlite-1', 'postgres-1', 'postgres-2'];
const submitted: Record<SubmitCase, number[]> = { 'sqlite-1': [], 'postgres-1': [], 'postgres-2': [] };
for (let round = 0; round < rounds; round++) {
  for (const c of rotate(submitCases, round)) {
    const [backend, apis] = c.split('-') as [Backend, string];
    const rps = await onFresh(backend, (store) => submitThroughput(store, Number(apis)));
    submitted[c].push(rps);
    console.log(`round ${round + 1}: submit ${backend}, ${apis} API process(es): ${fmt(rps)} req/s`);
  }
}

// Processing: 1, 2, 4 workers on PostgreSQL; one `ifw serve` on SQLite and on PostgreSQL.
const processCases = ['serve-sqlite', ...workerCounts.map((n) => `workers-${n}`), 'serve-postgres'];
const processed: Record<string, Drained[]> = Object.fromEntries(processCases.map((c) => [c, []]));
for (let round = 0; round < rounds; round++) {
  for (const c of rotate(processCases, round)) {
    const backend: Backend = c === 'serve-sqlite' ? 'sqlite' : 'postgres';
    const d = await onFresh(backend, async (store) => {
      await submitBacklog(store);
      return drain(store, c.startsWith('workers-') ? workers(Number(c.slice('workers-'.length)))(store) : serve(store));
    });
    processed[c]!.push(d);
    console.log(`round ${round + 1}: process ${c}: ${fmt(d.fromStart)} records/s from spawn, ${fmt(d.fromClaim)} from the first claim`);
  }
}

const rate = (c: string, which: keyof Drained) => median(processed[c]!.map((d) => d[which]));
const one = `workers-${workerCounts[0]}`;
console.log('');
for (const n of workerCounts) {
  const c = `workers-${n}`;
  console.log(
    `process records/s with ${n} ifw worker process(es): ${fmt(rate(c, 'fromStart'))} from spawn, ${fmt(rate(c, 'fromClaim'))} from the first claim (median)`,
  );
}
console.log(
  `process records/s one ifw serve: SQLite ${fmt(rate('serve-sqlite', 'fromStart'))}, PostgreSQL ${fmt(rate('serve-postgres', 'fromStart'))} from spawn (median)`,
);
for (const c of submitCases) console.log(`submit req/s ${c.replace('-', ', ')} API process(es): ${fmt(median(submitted[c]))} (median)`);
console.log('');
for (const n of workerCounts.slice(1)) {
  const c = `workers-${n}`;
  console.log(
    `process records/s ${n} workers / ${workerCounts[0]} from spawn ratio=${(rate(c, 'fromStart') / rate(one, 'fromStart')).toFixed(2)} target=report`,
  );
  console.log(
    `process records/s ${n} workers / ${workerCounts[0]} from the first claim ratio=${(rate(c, 'fromClaim') / rate(one, 'fromClaim')).toFixed(2)} target=report`,
  );
}
console.log(
  `process records/s one ifw serve PostgreSQL / SQLite ratio=${(rate('serve-postgres', 'fromStart') / rate('serve-sqlite', 'fromStart')).toFixed(2)} target=report`,
);
console.log(
  `submit req/s PostgreSQL 2 API processes / 1 ratio=${(median(submitted['postgres-2']) / median(submitted['postgres-1'])).toFixed(2)} target=report`,
);
console.log(
  `submit req/s one API process PostgreSQL / SQLite ratio=${(median(submitted['postgres-1']) / median(submitted['sqlite-1'])).toFixed(2)} target=report`,
);
