/**
 * `bench:process` on PostgreSQL: importPayloadPg() of the same payload through the same integration,
 * inside one transaction on a fresh database, against a raw `COPY … FROM STDIN` (text format) of the
 * already-prepared rows into the same table shape, on the same pg client in the same run. The
 * baseline's time includes writing the rows as COPY text (as any loader must) and its COMMIT, as the
 * import's includes parsing, mapping, staging, applying and its COMMIT.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type * as PgImporter from '../src/table-writer/postgres/importer.js';
import type * as Ddl from '../src/tables/ddl.js';
import type { IntegrationPlan } from '../src/integrations/model.js';
import type { ImportInput } from '../src/table-writer/model.js';
import type { TargetTable } from '../src/tables/model.js';

const built = (module: string): Promise<unknown> => import(pathToFileURL(path.resolve(import.meta.dirname, '../dist', module)).href);
const { importPayloadPg } = (await built('table-writer/postgres/importer.js')) as typeof PgImporter;
const { createTableSql } = (await built('tables/ddl.js')) as typeof Ddl;

const adminUrl = process.env.IFW_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Wall time of a run, and the CPU time it took: this process's and the PostgreSQL server process's. */
export interface Timed {
  readonly ms: number;
  readonly nodeCpuMs: number;
  readonly serverCpuMs: number;
}

export interface PostgresRuns {
  readonly baseline: Timed;
  readonly measured: Timed;
  readonly chunked: Timed;
}

/** CPU time (user + system) of a process of this machine, in ms (clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Runs one round of each (baseline, whole text, 1 MB chunks) per call of `round`, on one client. */
export async function openPostgresBench(
  table: TargetTable,
  plan: IntegrationPlan,
  records: number,
): Promise<{
  round: (payload: string, bytes: Buffer, rows: readonly (string | number)[][]) => Promise<PostgresRuns>;
  close: () => Promise<void>;
}> {
  const database = `ifw_bench_process_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.href });
  await client.connect();
  const tables = new Map([[table.name, table]]);

  const reset = async (): Promise<void> => {
    await client.query(`DROP TABLE IF EXISTS "${table.name}"`);
    await client.query(createTableSql(table, 'postgres'));
    await client.query('CHECKPOINT');
  };
  const verify = async (what: string): Promise<void> => {
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${table.name}"`);
    if (Number(rows[0]!.n) !== records) throw new Error(`${what}: expected ${records} rows, found ${rows[0]!.n}`);
  };
  const { rows: backend } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const serverPid = backend[0]!.pid;
  const timed = async (what: string, work: () => Promise<void>): Promise<Timed> => {
    await reset();
    const nodeCpu = process.cpuUsage();
    const serverCpu = processCpuMs(serverPid);
    const started = performance.now();
    await client.query('BEGIN');
    await work();
    await client.query('COMMIT');
    const ms = performance.now() - started;
    const { user, system } = process.cpuUsage(nodeCpu);
    const serverCpuMs = processCpuMs(serverPid) - serverCpu;
    await verify(what);
    return { ms, nodeCpuMs: (user + system) / 1000, serverCpuMs };
  };
  const importOnce = async (payload: ImportInput['payload']): Promise<void> => {
    const { committed, outcome } = await importPayloadPg(client, { plan, tables, payload }, () => true);
    if (!committed || !outcome.ok || outcome.inserted !== records) throw new Error(`import failed: ${outcome.errorMessage}`);
  };
  const names = table.fields.map((f) => `"${f.name}"`).join(', ');

  return {
    round: async (payload, bytes, rows) => {
      const baseline = await timed('raw COPY', async () => {
        const pieces = function* (): Generator<string> {
          for (let from = 0; from < rows.length; from += 500) {
            let piece = '';
            for (const row of rows.slice(from, from + 500)) piece += row.join('\t') + '\n';
            yield piece;
          }
        };
        await pipeline(Readable.from(pieces()), client.query(copyFrom(`COPY "${table.name}" (${names}) FROM STDIN`)));
      });
      const measured = await timed('importPayloadPg', () => importOnce(payload));
      const chunk = 1 << 20;
      // As the service reads a stored payload: one chunk per query, so asynchronously.
      const chunks = async function* (): AsyncGenerator<Uint8Array> {
        for (let from = 0; from < bytes.length; from += chunk) yield await Promise.resolve(bytes.subarray(from, from + chunk));
      };
      const chunked = await timed('importPayloadPg (chunks)', () => importOnce({ bytes: bytes.length, chunks }));
      return { baseline, measured, chunked };
    },
    close: async () => {
      await client.end();
      await admin.query(`DROP DATABASE ${database}`);
      await admin.end();
    },
  };
}
