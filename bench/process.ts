/**
 * Processing throughput: importPayload() on a 100 000-record JSON payload through real mappings,
 * against a raw better-sqlite3 prepared-statement insert loop of already-converted rows into the same
 * table shape. Both run in one transaction on a file opened like the service's (WAL, synchronous=FULL).
 * JSON.parse of the payload counts as processing. The importer is the built one (`dist/`, as the
 * service runs it: `npm run bench:process` builds first); runs alternate, and the medians are compared.
 * Then the same on PostgreSQL (bench/process-postgres.ts): importPayloadPg against a raw COPY FROM STDIN.
 * BENCH_BACKENDS (sqlite,postgres) picks which run. Last line: `process records/s ratio=… target=0.7`
 * (SQLite's; PostgreSQL's is the line before it).
 * BENCH_WEBHOOKS=1 adds, after them, the whole service draining many small requests with and without a
 * webhook against a slow local receiver, in the same run (bench/process-webhooks.ts): its last line is
 * `process with webhooks requests/s … ratio=…`.
 */
import type BetterSqlite3 from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Importer from '../src/table-writer/sqlite/importer.js';
import type { IntegrationField, IntegrationMapping, IntegrationPlan } from '../src/integrations/model.js';
import type * as Dialect from '../src/storage/sqlite/dialect.js';
import type { TargetTable } from '../src/tables/model.js';
import { openPostgresBench, type Timed } from './process-postgres.js';

const built = (module: string): Promise<unknown> => import(pathToFileURL(path.resolve(import.meta.dirname, '../dist', module)).href);
const { importPayload } = (await built('table-writer/sqlite/importer.js')) as typeof Importer;
const { openSqliteFile } = (await built('storage/sqlite/dialect.js')) as typeof Dialect;

const RECORDS = 100_000;
const RUNS = 5;
const COUNTRIES = ['DE', 'FR', 'US', 'GB', 'NL'];

const table: TargetTable = {
  name: 'customer',
  primaryKey: ['no'],
  fields: [
    { name: 'no', type: 'code', maxLength: 20 },
    { name: 'name', type: 'text', maxLength: 100, required: true },
    { name: 'email', type: 'text', maxLength: 80 },
    { name: 'city', type: 'text', maxLength: 30 },
    { name: 'country', type: 'option', options: COUNTRIES },
    { name: 'balance', type: 'decimal' },
    { name: 'active', type: 'boolean' },
    { name: 'createdAt', type: 'datetime' },
  ],
};

const CREATE_TABLE = `CREATE TABLE "customer" (
  "no" TEXT NOT NULL PRIMARY KEY, "name" TEXT NOT NULL, "email" TEXT, "city" TEXT,
  "country" TEXT, "balance" REAL, "active" INTEGER, "createdAt" TEXT)`;

const sources: readonly [string, string][] = [
  ['no', 'no'],
  ['name', 'name'],
  ['email', 'email'],
  ['city', 'address.city'],
  ['country', 'address.country'],
  ['balance', 'balance'],
  ['active', 'active'],
  ['createdAt', 'createdAt'],
];

const plan: IntegrationPlan = {
  integration: {
    sortingOrder: 1,
    name: 'Customers',
    type: 'restApi',
    targetTable: 'customer',
    recordsPath: '',
    acceptBulkImportRequests: true,
    maxPayloadSizeKb: null,
    writeMode: 'insert',
    onRecordError: 'fail',
  },
  fields: sources.map(([target, sourcePath], i): IntegrationField => ({
    integrationSortingOrder: 1,
    fieldNo: i + 1,
    title: target,
    sourcePath,
    columnType: 'standard',
    constantValue: null,
  })),
  mappings: sources.map(([target], i): IntegrationMapping => ({
    integrationSortingOrder: 1,
    fieldNo: i + 1,
    targetField: target,
    required: false,
  })),
};

function generate(): { payload: string; rows: (string | number)[][] } {
  const records: unknown[] = [];
  const rows: (string | number)[][] = [];
  const base = Date.UTC(2024, 0, 1);
  for (let i = 0; i < RECORDS; i++) {
    const no = `C${String(i).padStart(6, '0')}`;
    const country = COUNTRIES[i % COUNTRIES.length]!;
    const balance = Math.round(i * 137.31) / 100;
    const createdAt = new Date(base + i * 61_000).toISOString().replace('.000Z', '+00:00');
    records.push({
      no,
      name: `Customer ${i}`,
      email: `customer${i}@example.com`,
      address: { city: `City ${i % 997}`, country },
      balance,
      active: i % 3 !== 0,
      createdAt,
    });
    rows.push([
      no,
      `Customer ${i}`,
      `customer${i}@example.com`,
      `City ${i % 997}`,
      country,
      balance,
      i % 3 !== 0 ? 1 : 0,
      new Date(createdAt).toISOString(),
    ]);
  }
  return { payload: JSON.stringify(records), rows };
}

function resetTable(db: BetterSqlite3.Database): void {
  db.exec('DROP TABLE IF EXISTS "customer"');
  db.exec(CREATE_TABLE);
  db.pragma('wal_checkpoint(TRUNCATE)');
}

function count(db: BetterSqlite3.Database): number {
  return db.prepare('SELECT count(*) FROM "customer"').pluck().get() as number;
}

function verify(db: BetterSqlite3.Database, what: string): void {
  const n = count(db);
  if (n !== RECORDS) throw new Error(`${what}: expected ${RECORDS} rows, found ${n}`);
}

function runBaseline(db: BetterSqlite3.Database, rows: readonly (string | number)[][]): number {
  resetTable(db);
  const started = performance.now();
  const insert = db.prepare(
    'INSERT INTO "customer" ("no", "name", "email", "city", "country", "balance", "active", "createdAt") VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (let i = 0; i < rows.length; i++) insert.run(rows[i]!);
  }).immediate();
  const ms = performance.now() - started;
  verify(db, 'baseline');
  return ms;
}

function runMeasured(db: BetterSqlite3.Database, payload: string): number {
  resetTable(db);
  const started = performance.now();
  const { committed, outcome } = importPayload(db, { plan, tables: new Map([['customer', table]]), payload }, () => true);
  const ms = performance.now() - started;
  if (!committed || !outcome.ok || outcome.inserted !== RECORDS) throw new Error(`import failed: ${outcome.errorMessage}`);
  verify(db, 'importPayload');
  return ms;
}

/** The same payload as the service stores one over 1 MB: in 1 MB chunks, read back and parsed as a stream. */
function runMeasuredChunked(db: BetterSqlite3.Database, payload: Buffer): number {
  resetTable(db);
  const chunk = 1 << 20;
  const chunks = function* (): Generator<Uint8Array> {
    for (let from = 0; from < payload.length; from += chunk) yield payload.subarray(from, from + chunk);
  };
  const started = performance.now();
  const input = { plan, tables: new Map([['customer', table]]), payload: { bytes: payload.length, chunks } };
  const { committed, outcome } = importPayload(db, input, () => true);
  const ms = performance.now() - started;
  if (!committed || !outcome.ok || outcome.inserted !== RECORDS) throw new Error(`import failed: ${outcome.errorMessage}`);
  verify(db, 'importPayload (chunks)');
  return ms;
}

const backends = (process.env.BENCH_BACKENDS ?? 'sqlite,postgres').split(',');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rate = (ms: number): number => RECORDS / (ms / 1000);

async function mainPostgres(payload: string, bytes: Buffer, rows: readonly (string | number)[][]): Promise<void> {
  const bench = await openPostgresBench(table, plan, RECORDS);
  try {
    const runs = { baseline: [] as number[], measured: [] as number[], chunked: [] as number[] };
    const cpu = (t: Timed): string => `${t.ms.toFixed(0)} ms (CPU: node ${t.nodeCpuMs.toFixed(0)}, server ${t.serverCpuMs.toFixed(0)})`;
    for (let run = 1; run <= RUNS; run++) {
      const r = await bench.round(payload, bytes, rows);
      console.log(`postgres run ${run}: baseline ${cpu(r.baseline)}, importPayloadPg ${cpu(r.measured)}, in 1 MB chunks ${cpu(r.chunked)}`);
      runs.baseline.push(r.baseline.ms);
      runs.measured.push(r.measured.ms);
      runs.chunked.push(r.chunked.ms);
    }
    const baselineRate = rate(median(runs.baseline));
    const chunkedRate = rate(median(runs.chunked));
    console.log(`postgres baseline (raw COPY FROM STDIN of the prepared rows): ${Math.round(baselineRate)} records/s`);
    console.log(
      `postgres importPayloadPg in 1 MB chunks: ${Math.round(chunkedRate)} records/s, ratio=${(chunkedRate / baselineRate).toFixed(2)}`,
    );
    const measuredRate = rate(median(runs.measured));
    console.log(`process postgres records/s ${Math.round(measuredRate)} ratio=${(measuredRate / baselineRate).toFixed(2)} target=0.7`);
  } finally {
    await bench.close();
  }
}

async function main(): Promise<void> {
  const { payload, rows } = generate();
  const bytes = Buffer.from(payload);
  if (backends.includes('postgres')) await mainPostgres(payload, bytes, rows);
  if (backends.includes('sqlite')) mainSqlite(payload, bytes, rows);
  if (process.env.BENCH_WEBHOOKS === '1') await (await import('./process-webhooks.js')).mainWebhooks();
}

function mainSqlite(payload: string, bytes: Buffer, rows: readonly (string | number)[][]): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-bench-process-'));
  const baselineDb = openSqliteFile(path.join(dir, 'baseline.db'), 5000);
  const measuredDb = openSqliteFile(path.join(dir, 'measured.db'), 5000);
  try {
    console.log(`records: ${RECORDS}, payload: ${(payload.length / 1024 / 1024).toFixed(1)} MB, runs: ${RUNS} each (medians compared)`);
    const baselines: number[] = [];
    const measures: number[] = [];
    const chunkedMeasures: number[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const b = runBaseline(baselineDb, rows);
      const m = runMeasured(measuredDb, payload);
      const c = runMeasuredChunked(measuredDb, bytes);
      console.log(`run ${run}: baseline ${b.toFixed(0)} ms, importPayload ${m.toFixed(0)} ms, in 1 MB chunks ${c.toFixed(0)} ms`);
      baselines.push(b);
      measures.push(m);
      chunkedMeasures.push(c);
    }
    const baseline = median(baselines);
    const measured = median(measures);
    const chunked = median(chunkedMeasures);
    const baselineRate = RECORDS / (baseline / 1000);
    const measuredRate = RECORDS / (measured / 1000);
    const chunkedRate = RECORDS / (chunked / 1000);
    console.log(`baseline (raw prepared insert loop): ${Math.round(baselineRate)} records/s`);
    console.log(`importPayload (JSON.parse + mapping + insert): ${Math.round(measuredRate)} records/s`);
    // A payload over 1 MB is stored in chunks and read back as a stream: the path this payload takes in the service.
    console.log(
      `importPayload in 1 MB chunks (streamed parse + mapping + insert): ${Math.round(chunkedRate)} records/s, ratio=${(chunkedRate / baselineRate).toFixed(2)}`,
    );
    console.log(`process records/s ratio=${(measuredRate / baselineRate).toFixed(2)} target=0.7`);
  } finally {
    baselineDb.close();
    measuredDb.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
