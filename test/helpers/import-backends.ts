/**
 * The SQLite and PostgreSQL importers behind one test interface, so one table of cases proves them
 * equal. Each backend runs an import the way its callers do: SQLite's importer owns its transaction;
 * on PostgreSQL the harness begins a transaction, imports, checks that the transaction is still usable
 * (a COMMIT of an aborted transaction would silently roll back and hide that) and commits.
 *
 * PostgreSQL (IFW_TEST_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres): one fresh
 * database per test file (`ifw_imp_<random>`, dropped at the end), a fresh `public` schema per test.
 * Target tables are created here with plain SQL in the column types the service uses on PostgreSQL
 * (TEXT, BIGINT, NUMERIC, INTEGER 0/1), independent of the target-table DDL being built alongside.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import {
  importPayload,
  importRecordBatches,
  importStagedRows,
  type ImportFinish,
  type ImportInput,
  type ImportOutcome,
  type ImportResult,
  type RecordBatchesInput,
} from '../../src/table-writer/sqlite/importer.js';
import { compileImport, isRecordError, payloadSource } from '../../src/table-writer/plan.js';
import { createStagedRows, dropStagedRows, stagedRowsTable, stagedRowsWriter } from '../../src/table-writer/sqlite/staged-rows.js';
import type { ImportTarget } from '../../src/table-writer/model.js';
import { importPayloadPg, importRecordBatchesPg, type RecordBatchesInputPg } from '../../src/table-writer/postgres/importer.js';
import { openSqliteFile } from '../../src/storage/sqlite/dialect.js';
import { POSTGRES_ADMIN_URL } from './databases.js';
import { createTableSql } from '../../src/tables/ddl.js';
import { isFieldRequired, type FieldType, type TargetTable } from '../../src/tables/model.js';

/** The admin URL with another database name (and no password in what is printed). */
function urlOf(database: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** What finish does: return a result (or throw), after logging the outcome in `finish_log` when asked. */
export interface FinishSpec {
  readonly result: boolean | Error;
  /** INSERT INTO finish_log (message, customers) the outcome's message and the customer count it sees. */
  readonly log?: boolean;
}

export type ImportRun = ImportResult & { seen: ImportOutcome[] };

export interface ImportBackend {
  readonly name: 'sqlite' | 'sqlite, staged rows' | 'postgres';
  /** Drops what the previous test made and creates these tables; `edit` may change a table's DDL text. */
  reset(tables: readonly TargetTable[], edit?: (ddl: string) => string): Promise<void>;
  exec(sql: string): Promise<void>;
  /** Rows with BIGINT and NUMERIC as JS numbers, as SQLite returns them. */
  all(sql: string): Promise<unknown[]>;
  importPayload(input: ImportInput, finish: FinishSpec): Promise<ImportRun>;
  importRecordBatches(input: RecordBatchesInput | RecordBatchesInputPg, finish: FinishSpec): Promise<ImportRun>;
  close(): Promise<void>;
}

/** The PostgreSQL backend also hands out its client, for tests that play the caller's transaction themselves. */
export interface PostgresImportBackend extends ImportBackend {
  readonly client: pg.Client;
}

/** A synchronous call as a promise: a throw becomes a rejection, as it is for the async PostgreSQL importer. */
const settle = <T>(fn: () => T): Promise<T> => new Promise((resolve) => resolve(fn()));

const FINISH_LOG = 'CREATE TABLE finish_log (message TEXT NOT NULL, customers INTEGER NOT NULL)';

// ---------------------------------------------------------------------------------------------- SQLite

/** Records staged in pages of this many, so that record numbers run on across pages. */
const STAGED_PAGE_RECORDS = 3;

/**
 * The import a paginated run makes on SQLite: the records mapped and staged page by page as they would
 * arrive (staged-rows.ts), then importStagedRows. Records that never reach staging (a payload that is
 * not a record array, an integration that does not compile: a run fails before its first page for
 * those) take the payload importer, which reports them.
 */
function importAsStaged(
  sqlite: BetterSqlite3.Database,
  target: ImportTarget,
  pages: readonly (readonly unknown[])[],
  finish: ImportFinish,
): ImportResult {
  const runId = 'test-run';
  const compiled = compileImport(target, () => pages);
  if (isRecordError(compiled)) throw new Error(`not stageable (see stageable): ${compiled.rule}`);
  createStagedRows(sqlite, runId, compiled.mapping.columns.length);
  try {
    const write = stagedRowsWriter(sqlite, runId, compiled.mapping);
    for (const records of pages) {
      for (let from = 0; from < records.length; from += STAGED_PAGE_RECORDS) write.stage(records.slice(from, from + STAGED_PAGE_RECORDS));
    }
    write.flush();
    return importStagedRows(sqlite, { ...target, table: stagedRowsTable(sqlite, runId) }, finish);
  } finally {
    dropStagedRows(sqlite, runId);
  }
}

/** The records of `input` in pages, or undefined when they cannot be staged at all (see importAsStaged). */
function stageable(input: ImportInput | RecordBatchesInput): readonly (readonly unknown[])[] | undefined {
  const compiled = compileImport(
    input,
    'payload' in input
      ? (mapping) => {
          const batches = payloadSource(input)(mapping);
          return isRecordError(batches) ? batches : [...batches];
        }
      : () => [...input.batches],
  );
  return isRecordError(compiled) ? undefined : compiled.batches;
}

export function sqliteBackend(options: { readonly staged?: boolean } = {}): ImportBackend {
  const staged = options.staged === true;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-imp-'));
  let n = 0;
  let sqlite: BetterSqlite3.Database | undefined;
  const db = (): BetterSqlite3.Database => {
    if (sqlite === undefined) throw new Error('reset() first');
    return sqlite;
  };
  const finishFn =
    (spec: FinishSpec, seen: ImportOutcome[]) =>
    (outcome: ImportOutcome): boolean => {
      seen.push(outcome);
      if (spec.log === true)
        db().prepare('INSERT INTO finish_log (message, customers) VALUES (?, (SELECT count(*) FROM customer))').run(outcome.errorMessage);
      if (spec.result instanceof Error) throw spec.result;
      return spec.result;
    };
  return {
    name: staged ? 'sqlite, staged rows' : 'sqlite',
    reset(tables, edit = (ddl) => ddl) {
      sqlite?.close();
      sqlite = openSqliteFile(path.join(dir, `import-${++n}.db`), 0);
      for (const table of tables) sqlite.exec(edit(createTableSql(table, 'sqlite')));
      sqlite.exec(FINISH_LOG);
      return Promise.resolve();
    },
    exec(sql) {
      db().exec(sql);
      return Promise.resolve();
    },
    all(sql) {
      return Promise.resolve(db().prepare(sql).all());
    },
    importPayload(input, spec) {
      const seen: ImportOutcome[] = [];
      const pages = staged ? stageable(input) : undefined;
      if (pages !== undefined) return settle(() => ({ ...importAsStaged(db(), input, pages, finishFn(spec, seen)), seen }));
      return settle(() => ({ ...importPayload(db(), input, finishFn(spec, seen)), seen }));
    },
    importRecordBatches(input, spec) {
      const { batches } = input;
      if (!(Symbol.iterator in batches)) throw new Error('the SQLite importer reads synchronous batches only');
      const seen: ImportOutcome[] = [];
      return settle(() => {
        const pages = staged ? stageable({ ...input, batches }) : undefined;
        const result =
          pages === undefined
            ? importRecordBatches(db(), { ...input, batches }, finishFn(spec, seen))
            : importAsStaged(db(), input, pages, finishFn(spec, seen));
        return { ...result, seen };
      });
    },
    close() {
      sqlite?.close();
      fs.rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

// ------------------------------------------------------------------------------------------ PostgreSQL

const PG_TYPES: Record<FieldType, string> = {
  text: 'TEXT',
  code: 'TEXT',
  option: 'TEXT',
  guid: 'TEXT',
  date: 'TEXT',
  datetime: 'TEXT',
  integer: 'BIGINT',
  // Upper case like SQLite's DDL, so one `edit` (e.g. adding a CHECK) fits both.
  decimal: 'NUMERIC',
  boolean: 'INTEGER',
};

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

export function pgCreateTableSql(table: TargetTable): string {
  const parts = table.fields.map((f) => `${quote(f.name)} ${PG_TYPES[f.type]}${isFieldRequired(table, f) ? ' NOT NULL' : ''}`);
  parts.push(`PRIMARY KEY (${table.primaryKey.map(quote).join(', ')})`);
  for (const f of table.fields) {
    if (f.relation !== undefined)
      parts.push(`FOREIGN KEY (${quote(f.name)}) REFERENCES ${quote(f.relation.table)} (${quote(f.relation.field)})`);
  }
  return `CREATE TABLE ${quote(table.name)} (\n  ${parts.join(',\n  ')}\n)`;
}

/** int8 and numeric as JS numbers (what SQLite returns), this client only. */
const numericTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): ((text: string) => unknown) =>
    oid === 20 || oid === 1700
      ? Number
      : (pg.types.getTypeParser(oid, format) as (text: string) => unknown)) as typeof pg.types.getTypeParser,
};

/** Creates `ifw_imp_<random>`; close() drops it. */
export async function postgresBackend(): Promise<PostgresImportBackend> {
  const database = `ifw_imp_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const client = new pg.Client({ connectionString: urlOf(database), types: numericTypes });
  await client.connect();

  /** As the service's processors will: BEGIN, import, COMMIT (ROLLBACK when the import throws). */
  const inTransaction = async (
    run: (finish: (outcome: ImportOutcome) => Promise<boolean>) => Promise<ImportResult>,
    spec: FinishSpec,
  ): Promise<ImportRun> => {
    const seen: ImportOutcome[] = [];
    const finish = async (outcome: ImportOutcome): Promise<boolean> => {
      seen.push(outcome);
      if (spec.log === true)
        await client.query('INSERT INTO finish_log (message, customers) VALUES ($1, (SELECT count(*) FROM customer))', [
          outcome.errorMessage,
        ]);
      if (spec.result instanceof Error) throw spec.result;
      return spec.result;
    };
    await client.query('BEGIN');
    try {
      const result = await run(finish);
      await client.query('SELECT 1'); // fails if the import left the transaction aborted
      await client.query('COMMIT');
      return { ...result, seen };
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
  };

  return {
    name: 'postgres',
    client,
    async reset(tables, edit = (ddl) => ddl) {
      await client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
      for (const table of tables) await client.query(edit(pgCreateTableSql(table)));
      await client.query(FINISH_LOG);
    },
    async exec(sql) {
      await client.query(sql);
    },
    async all(sql) {
      return (await client.query<Record<string, unknown>>(sql)).rows;
    },
    importPayload(input, spec) {
      return inTransaction((finish) => importPayloadPg(client, input, finish), spec);
    },
    importRecordBatches(input, spec) {
      return inTransaction((finish) => importRecordBatchesPg(client, input, finish), spec);
    },
    async close() {
      await client.end();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    },
  };
}
