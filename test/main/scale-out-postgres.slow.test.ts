/**
 * Several processes on one PostgreSQL database, as in a scaled-out deployment: one API process
 * (`ifw serve --no-workers`) and three worker processes (`ifw worker`), real processes from the built
 * `bin/ifw.js`. 2 000 requests from concurrent clients must each be imported exactly once, spread over
 * the workers; then a worker is killed with -9 in the middle of a large import, and another one must
 * take the request over once its lease expires and import each record exactly once.
 *
 * Which worker processed a request is read from the workers' logs: the processor logs
 * "bulk import request completed" with the requestId, and every line carries the process's pid. Which
 * worker holds a request while it is Processing is its `lease_owner` (host:pid:…).
 *
 * PostgreSQL is expected at IFW_TEST_POSTGRES_URL (see helpers/databases.ts): without it the suite
 * fails, unless IFW_TEST_SKIP_POSTGRES=1 asks to skip it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import {
  assertBuilt,
  basicAuth,
  runIfw,
  startServer,
  startWorker,
  stopAll,
  waitUntilDrained,
  type ServerProcess,
  type WorkerProcess,
} from '../helpers/process.js';
import { until } from '../helpers/until.js';

const API = '/api/vendor/integrationFramework/v1.0';
const ADMIN_PASSWORD = 'scale-test-administrator';
const admin = basicAuth('admin', ADMIN_PASSWORD);
const postgres = BACKENDS.find((b) => b.name === 'postgres')!;

const WORKERS = 3;
const REQUESTS = 2_000;
const RECORDS_PER_REQUEST = 10;
const CLIENTS = 24;
/** Large enough that the import takes a while, so that the kill lands in the middle of it. */
const BIG_RECORDS = 150_000;

const config = `
targetTables:
  - name: scale_row
    primaryKey: [code]
    fields:
      - { name: code, type: code, maxLength: 40 }
      - { name: request_no, type: integer, required: true }
      - { name: amount, type: decimal }
integrations:
  - sortingOrder: 50
    name: Scale test rows
    type: file
    targetTable: scale_row
    acceptBulkImportRequests: true
    writeMode: insert
    fields:
      - { fieldNo: 1, title: Code, sourcePath: code, columnType: standard }
      - { fieldNo: 2, title: Request, sourcePath: request, columnType: standard }
      - { fieldNo: 3, title: Amount, sourcePath: amount, columnType: standard }
    mappings:
      - { fieldNo: 1, targetField: code }
      - { fieldNo: 2, targetField: request_no, required: true }
      - { fieldNo: 3, targetField: amount }
`;

const payloadFor = (requestNo: number, count: number): string =>
  JSON.stringify(Array.from({ length: count }, (_, i) => ({ code: `R${requestNo}-${i}`, request: requestNo, amount: i * 1.5 })));

let dir: string;
let database: FreshDatabase | undefined;
let env: NodeJS.ProcessEnv;
let db: pg.Pool;
let api: ServerProcess | undefined;
let workers: WorkerProcess[] = [];

/** The requestIds a worker's log says it completed. */
function completedBy(worker: WorkerProcess): string[] {
  const ids: string[] = [];
  for (const line of worker.stdout) {
    if (!line.includes('bulk import request completed')) continue;
    const entry = JSON.parse(line) as { msg?: string; requestId?: string; pid?: number };
    if (entry.msg !== 'bulk import request completed' || entry.requestId === undefined) continue;
    // A worker's log is its own process's; a pid on the line that is not that process would be a mix-up here.
    if (entry.pid !== undefined && entry.pid !== worker.pid) throw new Error(`worker ${worker.pid} logged a line of pid ${entry.pid}`);
    ids.push(entry.requestId);
  }
  return ids;
}

/** The pid in a lease owner token (host:pid:…), or undefined when none of the workers' pids is in it. */
function workerOfOwner(owner: string): WorkerProcess | undefined {
  const parts = owner.split(':');
  return workers.find((w) => parts.includes(String(w.pid)));
}

async function submit(requestNo: number, records: number): Promise<string> {
  const res = await fetch(`${api!.baseUrl}${API}/bulkImportRequests`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...admin },
    body: JSON.stringify({ integrationSortingOrder: 50, payload: payloadFor(requestNo, records) }),
  });
  if (res.status !== 202) throw new Error(`submit of request ${requestNo} answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { requestId: string }).requestId;
}

async function statusCounts(): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; n: string }>(
    'select status, count(*) as n from ifw_bulk_import_request group by status',
  );
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

const tail = (lines: string[], n = 15) => lines.slice(-n).join('\n');
const allLogs = () => [`api:\n${tail(api?.logs ?? [])}`, ...workers.map((w) => `worker ${w.pid}:\n${tail(w.logs)}`)].join('\n');

/** Waits until no request is Pending or Processing; fails with the counts and the processes' last log lines after `timeoutMs`. */
const drained = (timeoutMs: number): Promise<Record<string, number>> => waitUntilDrained(statusCounts, timeoutMs, allLogs);

describe.skipIf(postgres.skip)('one API process and three worker processes on PostgreSQL', () => {
  beforeAll(async () => {
    assertBuilt();
    database = await postgres.fresh();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-scale-'));
    env = {
      IFW_DATA_DIR: dir,
      IFW_DATABASE_URL: database.url,
      IFW_ADMIN_PASSWORD: ADMIN_PASSWORD,
      IFW_LEASE_SECONDS: '2',
      IFW_SCHEDULER_TICK_MS: '50',
      IFW_MAX_ATTEMPTS: '5',
      IFW_LOG_LEVEL: 'info',
    };
    db = new pg.Pool({ connectionString: database.url, max: 2 });
    fs.writeFileSync(path.join(dir, 'scale.yaml'), config);
    const migrated = await runIfw(['migrate'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    const applied = await runIfw(['apply', path.join(dir, 'scale.yaml')], env);
    expect(applied.code, applied.stderr).toBe(0);
    api = await startServer(env, ['--no-workers']);
    // Started together, so that none has a head start on the queue. allSettled: none is left running on failure.
    const started = await Promise.allSettled(Array.from({ length: WORKERS }, () => startWorker(env)));
    workers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }, 60_000);

  afterAll(async () => {
    // Every process goes, even after a failure: SIGTERM, then SIGKILL for any that did not stop in 10 s.
    const processes = [...workers, ...(api === undefined ? [] : [api])];
    const codes = await stopAll(processes);
    await db?.end();
    await database?.cleanup();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    // SIGTERM stops gracefully: exit code 0 (the worker killed with -9 has none).
    expect(
      codes.filter((code) => code !== null && code !== 0),
      processes.map((p) => tail(p.logs, 5)).join('\n'),
    ).toEqual([]);
  }, 30_000);

  it('imports 2 000 concurrently submitted requests exactly once each, spread over the three workers', async () => {
    const sent: string[] = [];
    let next = 0;
    const client = async () => {
      while (next < REQUESTS) sent.push(await submit(next++, RECORDS_PER_REQUEST));
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    expect(sent).toHaveLength(REQUESTS);
    expect(new Set(sent).size).toBe(REQUESTS);

    const counts = await drained(45_000);
    expect(counts).toEqual({ Completed: REQUESTS });

    const { rows } = await db.query<{ request_id: string; status: string; attempts: number; record_count: number; inserted_count: number }>(
      'select request_id, status, attempts, record_count, inserted_count from ifw_bulk_import_request',
    );
    const byId = new Map(rows.map((r) => [r.request_id, r]));
    for (const id of sent) {
      expect(byId.get(id), `request ${id}`).toMatchObject({
        status: 'Completed',
        record_count: RECORDS_PER_REQUEST,
        inserted_count: RECORDS_PER_REQUEST,
      });
    }

    // Each request was completed by exactly one worker, once.
    const owner = new Map<string, number[]>();
    for (const w of workers) for (const id of completedBy(w)) owner.set(id, [...(owner.get(id) ?? []), w.pid]);
    const twice = [...owner].filter(([, pids]) => pids.length > 1);
    expect(twice, 'requests logged as completed more than once').toEqual([]);
    expect(
      sent.filter((id) => !owner.has(id)),
      'Completed requests no worker logged as completed',
    ).toEqual([]);

    // A request is claimed once unless a lease expired under it; those a worker's reaper took back are the only exceptions.
    const reaped = new Set(
      workers.flatMap((w) =>
        w.stdout.filter((l) => l.includes('expired leases')).flatMap((l) => (JSON.parse(l) as { requestIds?: string[] }).requestIds ?? []),
      ),
    );
    const retried = rows.filter((r) => r.attempts !== 1);
    expect(
      retried.filter((r) => !reaped.has(r.request_id)),
      'requests claimed more than once without an expired lease',
    ).toEqual([]);

    // No record written twice: the rows are exactly the records submitted, each key once.
    const table = await db.query<{ n: string; keys: string; requests: string }>(
      'select count(*) as n, count(distinct code) as keys, count(distinct request_no) as requests from scale_row',
    );
    expect(table.rows[0]).toEqual({
      n: String(REQUESTS * RECORDS_PER_REQUEST),
      keys: String(REQUESTS * RECORDS_PER_REQUEST),
      requests: String(REQUESTS),
    });
    expect(rows.reduce((sum, r) => sum + r.inserted_count, 0)).toBe(REQUESTS * RECORDS_PER_REQUEST);

    // The work was spread: every worker processed a substantial share.
    const shares = workers.map((w) => ({ pid: w.pid, requests: completedBy(w).length }));
    console.log(
      `scale test: ${REQUESTS} requests over ${WORKERS} workers: ${shares.map((s) => `pid ${s.pid} ${s.requests}`).join(', ')}; ${retried.length} claimed more than once`,
    );
    for (const s of shares)
      expect(s.requests, `worker ${s.pid} processed ${s.requests} of ${REQUESTS}`).toBeGreaterThanOrEqual(REQUESTS * 0.1);
  }, 90_000);

  it('hands a request over to another worker after the one importing it is killed with -9, importing each record once', async () => {
    const requestNo = 1_000_000;
    const requestId = await submit(requestNo, BIG_RECORDS);

    // Wait until a worker holds it, then kill that worker while it imports.
    const deadline = Date.now() + 20_000;
    let victim: WorkerProcess | undefined;
    let leaseOwner = '';
    for (;;) {
      const { rows } = await db.query<{ status: string; lease_owner: string | null }>(
        'select status, lease_owner from ifw_bulk_import_request where request_id = $1',
        [requestId],
      );
      const row = rows[0]!;
      if (row.status === 'Processing' && row.lease_owner !== null) {
        leaseOwner = row.lease_owner;
        victim = workerOfOwner(leaseOwner);
        break;
      }
      if (row.status !== 'Pending' || Date.now() > deadline)
        throw new Error(`request ${requestId} is ${row.status}, never seen Processing\n${allLogs()}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(victim, `lease owner "${leaseOwner}" names none of the workers' pids (${workers.map((w) => w.pid).join(', ')})`).toBeDefined();
    // A moment into the import, not at its first statement: once its transaction has written rows to the
    // table (it holds a write lock on it until it commits) with COPY, straight into the table or through
    // the staging table (the last statement of a worker's connection says which), or has ended after all
    // (said just below).
    const atKill = await until(
      async () =>
        (
          await db.query<{ status: string; writers: number; staging: number }>(
            `select (select status from ifw_bulk_import_request where request_id = $1) as status,
                    (select count(*)::integer
                       from pg_locks l
                       join pg_class c on c.oid = l.relation
                      where l.database = (select oid from pg_database where datname = current_database())
                        and c.relname = 'scale_row' and l.mode = 'RowExclusiveLock' and l.granted) as writers,
                    (select count(*)::integer from pg_stat_activity
                      where datname = current_database() and pid <> pg_backend_pid()
                        and (query like '%ifw_import_stage%' or query like 'COPY %')) as staging`,
            [requestId],
          )
        ).rows[0]!,
      {
        holds: (row) => (row.writers > 0 && row.staging > 0) || row.status !== 'Processing',
        what: 'the import writing to scale_row with COPY',
      },
    );
    const { rows: before } = await db.query<{ status: string; lease_owner: string | null }>(
      'select status, lease_owner from ifw_bulk_import_request where request_id = $1',
      [requestId],
    );
    expect(before[0], 'the import finished before the kill: raise BIG_RECORDS').toEqual({ status: 'Processing', lease_owner: leaseOwner });
    // Killed in the middle of a COPY import: rows staged and applied, the transaction not committed.
    expect(atKill.staging, 'the import was not staging its rows with COPY').toBeGreaterThan(0);
    victim!.child.kill('SIGKILL');
    const killedAt = Date.now();
    expect(await victim!.closed).toBeNull();
    expect(completedBy(victim!)).not.toContain(requestId);

    await drained(60_000);
    const { rows } = await db.query<{ status: string; attempts: number; record_count: number; inserted_count: number }>(
      'select status, attempts, record_count, inserted_count from ifw_bulk_import_request where request_id = $1',
      [requestId],
    );
    expect(rows[0]).toEqual({ status: 'Completed', attempts: 2, record_count: BIG_RECORDS, inserted_count: BIG_RECORDS });
    const survivors = workers.filter((w) => w !== victim);
    const takers = survivors.filter((w) => completedBy(w).includes(requestId));
    expect(takers, 'the surviving workers that completed it').toHaveLength(1);
    console.log(
      `scale test: worker ${victim!.pid} killed importing ${BIG_RECORDS} records (lease ${leaseOwner}); worker ${takers[0]!.pid} completed it ${Date.now() - killedAt} ms later, attempt 2`,
    );

    const table = await db.query<{ n: string; keys: string }>(
      'select count(*) as n, count(distinct code) as keys from scale_row where request_no = $1',
      [requestNo],
    );
    expect(table.rows[0]).toEqual({ n: String(BIG_RECORDS), keys: String(BIG_RECORDS) });
    const total = await db.query<{ n: string }>('select count(*) as n from scale_row');
    expect(Number(total.rows[0]!.n)).toBe(REQUESTS * RECORDS_PER_REQUEST + BIG_RECORDS);
  }, 90_000);
});
