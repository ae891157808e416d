/**
 * Submit throughput with every 202 durable, as a ratio to two baselines measured in the same run: a
 * bare fastify route that validates the same body and stores nothing (bare-server.ts), and the same
 * route that also makes each request durable the cheapest honest way, a group-committed insert of id
 * and body on a writer thread with synchronous=FULL (durable-server.ts). BENCH_METRICS=compare also
 * measures the service with IFW_METRICS=false in each round, for the cost of counting. Both servers run as child processes (the
 * service exactly as `ifw serve --no-workers` on a fresh SQLite file with synchronous=FULL); the
 * load comes from autocannon in a third process. Rounds alternate baseline and service and the
 * medians are compared. Afterwards every 202 the service answered must be a row in the database.
 *
 * Every request carries `Authorization: Bearer <token>` from the development token issuer for an
 * application registered with VENDOR IF ALL (`ifw apps add bench`, `ifw token --app bench`), the
 * way an OAuth client calls the service; the service validates the token once and remembers it. The
 * baseline receives the same header and ignores it, so both parse the same request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import BetterSqlite3 from 'better-sqlite3';

const root = path.resolve(import.meta.dirname, '..');
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
/** BENCH_METRICS=compare: each round also runs the service with IFW_METRICS=false, and the cost of counting is printed. */
const compareMetrics = process.env.BENCH_METRICS === 'compare';
const PATH = '/api/vendor/integrationFramework/v1.0/bulkImportRequests';
const body = JSON.stringify({
  integrationSortingOrder: 10,
  payload: JSON.stringify([
    { no: 'C001', name: 'Contoso Ltd', email: 'info@contoso.example', address: { city: 'Oslo' }, country: 'NO' },
    { no: 'C002', name: 'Fabrikam', email: 'sales@fabrikam.example', address: { city: 'Lyon' }, country: 'FR' },
  ]),
});

function waitForLine(child: ChildProcess, match: (line: string) => number | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const port = match(line);
      if (port !== undefined) resolve(port);
    });
    child.once('exit', (code) => reject(new Error(`server exited early with code ${code}`)));
  });
}

/** Runs `ifw …` to completion and answers its stdout. */
function ifw(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin/ifw.js'), ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`ifw ${args.join(' ')} exited with ${code}`))));
  });
}

const serviceEnv = (dataDir: string): NodeJS.ProcessEnv => ({
  ...process.env,
  IFW_DATA_DIR: dataDir,
  IFW_PORT: '0',
  IFW_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  IFW_DEV_TOKEN_ISSUER: 'true',
});

/** A fresh data directory with the example config and a registered application; answers its bearer token. */
async function prepareService(dataDir: string): Promise<string> {
  const env = serviceEnv(dataDir);
  await ifw(['apply', path.join(root, 'examples/customers.yaml')], env);
  await ifw(['apps', 'add', 'bench', '-p', 'VENDOR IF ALL'], env);
  return (await ifw(['token', '--app', 'bench', '--minutes', '120'], env)).trim();
}

async function startBaseline(
  script: 'bare-server.ts' | 'durable-server.ts',
  ...args: string[]
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'bench', script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await waitForLine(child, (line) => (line.startsWith('{"port"') ? (JSON.parse(line) as { port: number }).port : undefined));
  return { child, port };
}

/**
 * The service logs a line per request at info level. Its stdout goes to a file, as a deployment's log
 * would: read through a pipe by this process, the lines would cost CPU on the same cores as the load.
 */
async function startService(dataDir: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; port: number }> {
  const env = { ...serviceEnv(dataDir), ...extraEnv };
  const logFile = path.join(dataDir, 'serve.log');
  const log = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, [path.join(root, 'bin/ifw.js'), 'serve', '--no-workers'], {
    env,
    stdio: ['ignore', log, 'inherit'],
  });
  fs.closeSync(log);
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  for (;;) {
    if (exited !== undefined) throw new Error(`server exited early with code ${exited}`);
    const line = fs
      .readFileSync(logFile, 'utf8')
      .split('\n')
      .find((l) => l.includes('integration service listening'));
    const m = line === undefined ? null : /:(\d+)$/.exec((JSON.parse(line) as { address: string }).address);
    if (m) return { child, port: Number(m[1]) };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface LoadResult {
  rps: number;
  accepted: number;
  non2xx: number;
  errors: number;
}

function load(port: number, authorization: string): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        path.join(root, 'node_modules/autocannon/autocannon.js'),
        '--json',
        '-c',
        String(connections),
        '-d',
        String(seconds),
        '-m',
        'POST',
        '-H',
        'content-type=application/json',
        '-H',
        `authorization=${authorization}`,
        '-b',
        body,
        `http://127.0.0.1:${port}${PATH}`,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', () => {
      try {
        const r = JSON.parse(out) as { requests: { average: number }; '2xx': number; non2xx: number; errors: number; duration: number };
        resolve({ rps: r['2xx'] / r.duration, accepted: r['2xx'], non2xx: r.non2xx, errors: r.errors });
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-bench-submit-'));
const baseline: number[] = [];
const durableBaseline: number[] = [];
const measured: number[] = [];
const withoutMetrics: number[] = [];
let accepted = 0;
try {
  for (let round = 1; round <= rounds; round++) {
    const authorization = `Bearer ${await prepareService(path.join(tmp, `round-${round}`))}`;
    const bare = await startBaseline('bare-server.ts');
    const b = await load(bare.port, authorization);
    await stop(bare.child);
    const durableFile = path.join(tmp, `round-${round}`, 'durable-baseline.db');
    const durable = await startBaseline('durable-server.ts', durableFile);
    const d = await load(durable.port, authorization);
    await stop(durable.child);
    const durableDb = new BetterSqlite3(durableFile, { readonly: true });
    const durableRows = (durableDb.prepare('select count(*) as n from request').get() as { n: number }).n;
    durableDb.close();
    if (durableRows < d.accepted)
      throw new Error(`round ${round}: the durable baseline answered ${d.accepted} 202s but stored ${durableRows}`);
    if (compareMetrics) {
      // First, so that the measured service below finds the same database as without the comparison.
      const dir = path.join(tmp, `round-${round}-no-metrics`);
      const token = `Bearer ${await prepareService(dir)}`;
      const plain = await startService(dir, { IFW_METRICS: 'false' });
      withoutMetrics.push((await load(plain.port, token)).rps);
      await stop(plain.child);
    }
    const service = await startService(path.join(tmp, `round-${round}`));
    const m = await load(service.port, authorization);
    await stop(service.child);
    const db = new BetterSqlite3(path.join(tmp, `round-${round}`, 'ifw.db'), { readonly: true });
    const rows = (db.prepare('select count(*) as n from ifw_bulk_import_request').get() as { n: number }).n;
    db.close();
    // Requests still in flight when the load stops are stored without their 202 being counted.
    if (rows < m.accepted || rows > m.accepted + connections) {
      throw new Error(`round ${round}: ${m.accepted} requests got 202 but ${rows} rows are stored`);
    }
    if (m.non2xx > 0 || m.errors > 0) throw new Error(`round ${round}: ${m.non2xx} non-2xx answers and ${m.errors} errors`);
    accepted += m.accepted;
    baseline.push(b.rps);
    durableBaseline.push(d.rps);
    measured.push(m.rps);
    console.log(
      `round ${round}: bare fastify ${b.rps.toFixed(0)} req/s, durable bare route ${d.rps.toFixed(0)} req/s, ` +
        `service (durable 202) ${m.rps.toFixed(0)} req/s, ${rows} rows stored`,
    );
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
const b = median(baseline);
const d = median(durableBaseline);
const m = median(measured);
console.log(
  `cores ${os.cpus().length}, ${connections} connections, ${seconds} s per run, ${rounds} rounds, bearer token (dev issuer); every one of ${accepted} accepted requests was stored`,
);
console.log(`baseline bare fastify: ${b.toFixed(0)} req/s (median)`);
console.log(`baseline durable bare route (group-committed insert, synchronous=FULL): ${d.toFixed(0)} req/s (median)`);
console.log(`service submit: ${m.toFixed(0)} req/s (median)`);
console.log(`submit requests/s ratio=${(m / b).toFixed(2)} target=0.8`);
console.log(`submit vs durable baseline requests/s ratio=${(m / d).toFixed(2)} target=0.9`);
if (compareMetrics) {
  const w = median(withoutMetrics);
  console.log(`service submit with IFW_METRICS=false: ${w.toFixed(0)} req/s (median)`);
  console.log(`submit with metrics vs without requests/s ratio=${(m / w).toFixed(2)}`);
}
