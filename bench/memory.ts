/**
 * `npm run bench:memory`: memory and records/s of large payloads, on SQLite and on PostgreSQL.
 *
 * The built service as users run it (`ifw serve`, workers on, a fresh data directory, and on PostgreSQL a
 * fresh database `ifw_bench_mem_<random>`, dropped afterwards) imports one payload of 10 000, 100 000 and
 * 1 000 000 customers (about 150 MB) through the example integration (examples/customers.yaml, upsert;
 * its Max Payload Size of 1024 KB is lifted for the benchmark, and IFW_BODY_LIMIT_MB is 256). A fresh
 * service per payload: its idle RSS is measured after start-up, then its RSS (VmRSS of /proc/<pid>/status)
 * is sampled every 10 ms from the first byte sent until the request is Completed. The client streams
 * the body (chunked) without building it whole.
 *
 * Printed per backend and size: `memory ratio=<peak RSS above idle / payload bytes> target=1.0` and the
 * records/s from the first byte sent to Completed; per backend `linearity ratio=<records/s at 1 000 000 /
 * records/s at 100 000> target=0.9`. BENCH_SIZES (comma-separated) and BENCH_BACKENDS (sqlite,postgres)
 * choose what runs. BENCH_RECORDS=wide sends wide records instead: four texts of about 1 900
 * characters each (7.6 KB a record, into the same table with texts of up to 2 000 characters), where
 * a chunk's COPY text, not its number of records, bounds what an import holds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';

const root = path.resolve(import.meta.dirname, '..');
const SET = '/api/vendor/integrationFramework/v1.0/bulkImportRequests';
const sizes = (process.env.BENCH_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const backends = (process.env.BENCH_BACKENDS ?? 'sqlite,postgres').split(',');
const adminUrl = process.env.IFW_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function ifw(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin/ifw.js'), ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`ifw ${args.join(' ')} exited with ${code}`))));
  });
}

function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kb === undefined ? 0 : Number(kb) * 1024;
}

async function startService(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [path.join(root, 'bin/ifw.js'), 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (!line.includes('integration service listening')) return;
      const m = /:(\d+)$/.exec((JSON.parse(line) as { address: string }).address);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`ifw serve exited early with code ${code}`)));
  });
  return { child, port };
}

const shape = process.env.BENCH_RECORDS ?? 'customers';
if (shape !== 'customers' && shape !== 'wide') throw new Error(`BENCH_RECORDS is customers or wide, not ${shape}`);
const WIDE = 'w'.repeat(1890);

const record = (i: number) =>
  shape === 'wide'
    ? {
        no: `C${String(i).padStart(7, '0')}`,
        name: `${WIDE} ${i}`,
        email: `${WIDE} e${i}`,
        address: { city: `${WIDE} c${i}`, country: `${WIDE} k${i}` },
      }
    : {
        no: `C${String(i).padStart(7, '0')}`,
        name: `Customer number ${i}`,
        email: `customer${i}@example.com`,
        address: { city: 'Oslo', country: 'NO' },
      };

/** The example's table and integration 10, Max Payload Size lifted; for wide records, texts of up to 2 000 characters. */
function exampleConfig(): string {
  const yaml = fs.readFileSync(path.join(root, 'examples/customers.yaml'), 'utf8').replace(/^\s*maxPayloadSizeKb:.*\n/m, '');
  if (shape === 'customers') return yaml;
  const fields = ['name', 'email', 'city', 'country'];
  const wide = yaml.replace(/\{ name: (\w+), type: (?:text|code), maxLength: \d+/g, (line: string, name: string) =>
    fields.includes(name) ? `{ name: ${name}, type: text, maxLength: 2000` : line,
  );
  if (wide.match(/maxLength: 2000/g)?.length !== fields.length)
    throw new Error('examples/customers.yaml no longer declares the fields this benchmark widens');
  return wide;
}

/** The body in pieces: `{"integrationSortingOrder":10,"payload":"[…]"}` with the payload escaped as a JSON string. */
function* bodyPieces(count: number): Generator<Buffer> {
  yield Buffer.from('{"integrationSortingOrder":10,"payload":"[');
  for (let from = 0; from < count; from += 2000) {
    const parts: string[] = [];
    for (let i = from; i < Math.min(count, from + 2000); i++) parts.push(JSON.stringify(record(i)));
    const text = (from === 0 ? '' : ',') + parts.join(',');
    yield Buffer.from(JSON.stringify(text).slice(1, -1));
  }
  yield Buffer.from(']"}');
}

function payloadBytes(count: number): number {
  let bytes = 2;
  for (let i = 0; i < count; i++) bytes += Buffer.byteLength(JSON.stringify(record(i))) + (i > 0 ? 1 : 0);
  return bytes;
}

function submit(port: number, token: string, count: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: SET,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          if (res.statusCode !== 202) reject(new Error(`submit answered ${res.statusCode}: ${text}`));
          else resolve((JSON.parse(text) as { requestId: string }).requestId);
        });
      },
    );
    req.on('error', reject);
    const pieces = bodyPieces(count);
    const pump = (): void => {
      for (;;) {
        const next = pieces.next();
        if (next.done === true) {
          req.end();
          return;
        }
        if (!req.write(next.value)) {
          req.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}

async function status(
  port: number,
  token: string,
  requestId: string,
): Promise<{ status: string; errorMessage: string; recordCount: number }> {
  const res = await fetch(`http://127.0.0.1:${port}${SET}(${requestId})`, { headers: { authorization: `Bearer ${token}` } });
  return (await res.json()) as { status: string; errorMessage: string; recordCount: number };
}

async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `ifw_bench_mem_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

interface Measured {
  readonly rps: number;
  readonly ratio: number;
}

async function measure(backend: string, count: number): Promise<Measured> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-bench-mem-'));
  const database = backend === 'postgres' ? await freshPostgres() : undefined;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    IFW_DATA_DIR: dataDir,
    IFW_PORT: '0',
    IFW_LOG_LEVEL: 'info',
    IFW_DEV_TOKEN_ISSUER: 'true',
    IFW_BODY_LIMIT_MB: '256',
    ...(database === undefined ? {} : { IFW_DATABASE_URL: database.url }),
  };
  try {
    const config = path.join(dataDir, 'customers.yaml');
    fs.writeFileSync(config, exampleConfig());
    await ifw(['apply', config], env);
    await ifw(['apps', 'add', 'bench', '-p', 'VENDOR IF ALL'], env);
    const token = (await ifw(['token', '--app', 'bench', '--minutes', '120'], env)).trim();
    const bytes = payloadBytes(count);
    const { child, port } = await startService(env);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const idle = rssBytes(child.pid!);
      let peak = idle;
      const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(child.pid!))), 10);
      const started = performance.now();
      const requestId = await submit(port, token, count);
      const submitted = performance.now();
      const peakSubmitting = peak;
      peak = rssBytes(child.pid!);
      let last = await status(port, token, requestId);
      while (last.status === 'Pending' || last.status === 'Processing') {
        await new Promise((resolve) => setTimeout(resolve, 20));
        last = await status(port, token, requestId);
      }
      const done = performance.now();
      clearInterval(sampler);
      if (last.status !== 'Completed' || last.recordCount !== count) throw new Error(`request ended ${JSON.stringify(last)}`);
      const rps = count / ((done - started) / 1000);
      const peakImporting = peak;
      peak = Math.max(peakSubmitting, peakImporting);
      const ratio = (peak - idle) / bytes;
      console.log(
        `${backend} ${count} records: payload ${(bytes / 1e6).toFixed(1)} MB, submit ${((submitted - started) / 1000).toFixed(2)} s, ` +
          `to Completed ${((done - started) / 1000).toFixed(2)} s, idle RSS ${(idle / 1e6).toFixed(0)} MB, peak ${(peak / 1e6).toFixed(0)} MB ` +
          `(${(peakSubmitting / 1e6).toFixed(0)} MB until the 202, ${(peakImporting / 1e6).toFixed(0)} MB after it)`,
      );
      console.log(`${backend} ${count} records: records/s=${Math.round(rps)}`);
      console.log(`${backend} ${count} records: memory ratio=${ratio.toFixed(2)} target=1.0`);
      return { rps, ratio };
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  } finally {
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

for (const backend of backends) {
  const results = new Map<number, Measured>();
  for (const count of sizes) results.set(count, await measure(backend, count));
  const at100k = results.get(100_000);
  const at1m = results.get(1_000_000);
  if (at100k !== undefined && at1m !== undefined) {
    console.log(`${backend} linearity ratio=${(at1m.rps / at100k.rps).toFixed(2)} target=0.9`);
  }
}
