/**
 * importStagedRows, the import of a paginated run on SQLite: records mapped and staged page by page
 * (staged-rows.ts), then one transaction. When every record mapped cleanly, the write mode is insert or
 * upsert and every related key exists, the rows go in with one INSERT … SELECT; otherwise (or when that
 * statement runs into a constraint) the record loop reads the staged rows back. Either way the outcome,
 * the messages and the rows are those of importPayload over the same records, which each case checks
 * on a second database. The shared importer cases (test/table-writer/importer-postgres.test.ts) also run this way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importPayload, importStagedRows, type ImportResult } from '../../src/table-writer/sqlite/importer.js';
import {
  createStagedRows,
  dropStagedRows,
  hasStagedRows,
  HOT_BYTES,
  stagedRowsTable,
  stagedRowsWriter,
} from '../../src/table-writer/sqlite/staged-rows.js';
import type { IntegrationPlan, OnRecordError, WriteMode } from '../../src/integrations/model.js';
import { compileMapping } from '../../src/mapping/engine.js';
import { createTableSql } from '../../src/tables/ddl.js';
import type { TargetTable } from '../../src/tables/model.js';
import { columnsPlan, type PlanColumns } from '../helpers/plans.js';

const country: TargetTable = { name: 'country', primaryKey: ['code'], fields: [{ name: 'code', type: 'code', maxLength: 10 }] };
const customer: TargetTable = {
  name: 'customer',
  primaryKey: ['no'],
  fields: [
    { name: 'no', type: 'code' },
    { name: 'name', type: 'text', maxLength: 10, required: true },
    { name: 'country', type: 'code', relation: { table: 'country', field: 'code' } },
    { name: 'parentNo', type: 'code', relation: { table: 'customer', field: 'no' } },
  ],
};
const tables = new Map([
  ['customer', customer],
  ['country', country],
]);

interface PlanOptions {
  readonly writeMode?: WriteMode;
  readonly onRecordError?: OnRecordError;
  /** Map parentNo too (a relation to the target table itself). */
  readonly selfRelation?: boolean;
}

function plan({ writeMode = 'insert', onRecordError = 'fail', selfRelation = false }: PlanOptions = {}): IntegrationPlan {
  const columns: PlanColumns = [
    ['no', 'no'],
    ['name', 'name'],
    ['country', 'country'],
    ...(selfRelation ? [['parentNo', 'parent'] as const] : []),
  ];
  return columnsPlan('customer', columns, { writeMode, onRecordError, acceptBulkImportRequests: false });
}

const RUN = 'run-1';
const PAGE_RECORDS = 4;

let dir: string;
/** How many bytes of staged values stay in memory before the rest go to the TEMP table (staged-rows.ts). */
let hotLimit = HOT_BYTES;
let statements: string[];
let staged: BetterSqlite3.Database;
let reference: BetterSqlite3.Database;

function open(name: string, log?: string[]): BetterSqlite3.Database {
  const db = new BetterSqlite3(path.join(dir, name), log === undefined ? {} : { verbose: (sql) => void log.push(String(sql)) });
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  for (const table of [country, customer]) db.exec(createTableSql(table, 'sqlite'));
  db.exec(`insert into country (code) values ('DE'), ('FR')`);
  return db;
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-staged-'));
  statements = [];
  staged = open('staged.db', statements);
  reference = open('reference.db');
});

afterEach(() => {
  staged.close();
  reference.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Stages `records` in pages of PAGE_RECORDS as a run does, then imports them; the statements run are in `statements`. */
function importAsRun(records: readonly unknown[], options: PlanOptions = {}): ImportResult {
  const p = plan(options);
  const mapping = compileMapping(p, tables);
  createStagedRows(staged, RUN, mapping.columns.length);
  const write = stagedRowsWriter(staged, RUN, mapping, hotLimit);
  for (let from = 0; from < records.length; from += PAGE_RECORDS) write.stage(records.slice(from, from + PAGE_RECORDS));
  write.flush();
  statements.length = 0;
  return importStagedRows(staged, { plan: p, tables, table: stagedRowsTable(staged, RUN) }, () => true);
}

const rows = (db: BetterSqlite3.Database): unknown[] => db.prepare('select * from customer order by no').all();

/** The run's import and importPayload over the same records: same outcome, same rows. */
function expectSameAsPayload(result: ImportResult, records: readonly unknown[], options: PlanOptions = {}): void {
  const expected = importPayload(reference, { plan: plan(options), tables, payload: JSON.stringify(records) }, () => true);
  expect(result).toEqual(expected);
  expect(rows(staged)).toEqual(rows(reference));
}

const usedOneStatement = (): boolean => statements.some((sql) => /^insert into "customer" \(.*\) select c0, c1, c2/.test(sql));
const usedRecordLoop = (): boolean => statements.some((sql) => /^INSERT INTO "customer"/.test(sql));

const customers = (n: number, country: string | null = 'DE') =>
  Array.from({ length: n }, (_, i) => ({ no: `C${i + 1}`, name: `Name ${i + 1}`, country }));

// Every case twice: a run's rows all in the attached in-memory table, and a run that goes past the
// in-memory size after a page or two and is read back through the view of both tables.
describe.each([
  { where: 'in memory', limit: HOT_BYTES },
  { where: 'in memory, then in the TEMP table', limit: 100 },
])('importStagedRows, rows staged $where', ({ limit }) => {
  beforeEach(() => {
    hotLimit = limit;
  });
  afterEach(() => {
    hotLimit = HOT_BYTES;
  });

  it('imports clean records in one INSERT … SELECT, in record order, with the counts of the record loop', () => {
    const records = customers(10);
    const result = importAsRun(records);
    expect(result.outcome).toMatchObject({ ok: true, recordCount: 10, inserted: 10 });
    expect(usedOneStatement()).toBe(true);
    expect(usedRecordLoop()).toBe(false);
    expect(
      staged
        .prepare('select rowid, no from customer order by rowid')
        .all()
        .map((r) => (r as { no: string }).no),
    ).toEqual(records.map((r) => r.no));
    expectSameAsPayload(result, records);
  });

  it('keeps the storage class the mapping gave each value (the target column affinity applies as to a parameter)', () => {
    const records = [
      { no: 7, name: 'Seven', country: null },
      { no: 'X8', name: 12, country: 'FR' },
    ];
    const result = importAsRun(records);
    expect(usedOneStatement()).toBe(true);
    expectSameAsPayload(result, records);
    const types = 'select typeof(no) as no, typeof(name) as name, typeof(country) as country from customer order by no';
    expect(staged.prepare(types).all()).toEqual(reference.prepare(types).all());
  });

  it('a record that broke a mapping rule: the record loop, with the message importPayload gives', () => {
    const records = [...customers(5), { no: 'C6', name: 'A name far too long' }, ...customers(3).map((r) => ({ ...r, no: `D${r.no}` }))];
    const result = importAsRun(records);
    expect(result.outcome).toMatchObject({
      ok: false,
      errorMessage: 'record 6: field "name" value "A name far too long" exceeds 10 characters',
    });
    expect(usedOneStatement()).toBe(false);
    expect(rows(staged)).toEqual([]);
    expectSameAsPayload(result, records);
  });

  it('a related key that does not exist: checked before writing, then the record loop names the record', () => {
    const records = [...customers(5), { no: 'C6', name: 'Six', country: 'XX' }, { no: 'C7', name: 'Seven', country: 'YY' }];
    const result = importAsRun(records);
    expect(result.outcome.errorMessage).toBe(
      'record 6: field "country" value "XX" does not exist in table "country" (field "code"); record 7: field "country" value "YY" does not exist in table "country" (field "code")',
    );
    expect(usedOneStatement()).toBe(false);
    expectSameAsPayload(result, records);
  });

  it('a key twice in the run: the INSERT … SELECT is undone and the record loop reports the second record', () => {
    const records = [...customers(6), { no: 'C3', name: 'Again', country: 'FR' }];
    const result = importAsRun(records);
    expect(result.outcome).toMatchObject({ ok: false, errorMessage: 'record 7: field "no" value "C3" already exists in table "customer"' });
    expect(usedOneStatement()).toBe(true);
    expect(usedRecordLoop()).toBe(true);
    expect(rows(staged)).toEqual([]);
    expectSameAsPayload(result, records);
  });

  it('a key already in the table: the same', () => {
    for (const db of [staged, reference]) db.exec(`insert into customer (no, name) values ('C2', 'Stored')`);
    const records = customers(4);
    const result = importAsRun(records);
    expect(result.outcome).toMatchObject({ ok: false, errorMessage: 'record 2: field "no" value "C2" already exists in table "customer"' });
    expect(rows(staged)).toEqual([{ no: 'C2', name: 'Stored', country: null, parentNo: null }]);
    expectSameAsPayload(result, records);
  });

  it('skip mode: the record loop leaves the bad records out and commits the rest', () => {
    const records = [...customers(3), { no: 'C4', name: null }, { no: 'C5', name: 'Five', country: 'NOWHERE' }, { no: 'C1', name: 'Dup' }];
    const result = importAsRun(records, { onRecordError: 'skip' });
    expect(result.outcome).toMatchObject({ ok: true, recordCount: 3, inserted: 3, skipped: 3 });
    expectSameAsPayload(result, records, { onRecordError: 'skip' });
  });

  it('a relation to the target table itself depends on record order: always the record loop', () => {
    const records = [
      { no: 'P1', name: 'Parent' },
      { no: 'K1', name: 'Child', parent: 'P1' },
      { no: 'K2', name: 'Orphan', parent: 'P9' },
    ];
    const result = importAsRun(records, { selfRelation: true, onRecordError: 'skip' });
    expect(result.outcome).toMatchObject({ ok: true, inserted: 2, skipped: 1 });
    expect(usedOneStatement()).toBe(false);
    expectSameAsPayload(result, records, { selfRelation: true, onRecordError: 'skip' });
  });

  it('update mode goes through the record loop, with its counts', () => {
    for (const db of [staged, reference]) db.exec(`insert into customer (no, name) values ('C1', 'Stored'), ('C2', 'Stored')`);
    const records = [...customers(2), { no: 'C9', name: 'Missing' }];
    const result = importAsRun(records, { writeMode: 'update', onRecordError: 'skip' });
    expect(result.outcome).toMatchObject({ ok: true, updated: 2, skipped: 1 });
    expect(usedOneStatement()).toBe(false);
    expectSameAsPayload(result, records, { writeMode: 'update', onRecordError: 'skip' });
  });

  it('upsert mode is one INSERT … SELECT … ON CONFLICT DO UPDATE, counting new keys as inserted and the rest as updated', () => {
    for (const db of [staged, reference]) db.exec(`insert into customer (no, name) values ('C1', 'Stored'), ('C2', 'Stored')`);
    // C3 comes twice: inserted, then updated, as the record loop does it.
    const records = [...customers(4), { no: 'C3', name: 'Again', country: 'FR' }];
    const result = importAsRun(records, { writeMode: 'upsert' });
    expect(result.outcome).toMatchObject({ ok: true, recordCount: 5, inserted: 2, updated: 3 });
    expect(usedOneStatement()).toBe(true);
    expect(usedRecordLoop()).toBe(false);
    expectSameAsPayload(result, records, { writeMode: 'upsert' });
    expect(rows(staged)).toContainEqual({ no: 'C3', name: 'Again', country: 'FR', parentNo: null });
  });

  it('upsert with a missing related key or a record that broke a rule: the record loop, as importPayload', () => {
    const records = [...customers(3), { no: 'C4', name: 'Four', country: 'XX' }, { no: 'C5', name: null }];
    const result = importAsRun(records, { writeMode: 'upsert', onRecordError: 'skip' });
    expect(result.outcome).toMatchObject({ ok: true, inserted: 3, skipped: 2 });
    expect(usedOneStatement()).toBe(false);
    expectSameAsPayload(result, records, { writeMode: 'upsert', onRecordError: 'skip' });
  });

  it('records that are not JSON objects are staged as their JSON and reported like importPayload', () => {
    const records = [customers(1)[0], 42, 'text', null, [1]];
    const result = importAsRun(records, { onRecordError: 'skip' });
    expect(result.outcome).toMatchObject({ ok: true, inserted: 1, skipped: 4 });
    expectSameAsPayload(result, records, { onRecordError: 'skip' });
  });

  it('a run of no records imports nothing and completes', () => {
    const result = importAsRun([]);
    expect(result.outcome).toMatchObject({ ok: true, recordCount: 0 });
    expectSameAsPayload(result, []);
  });

  it('reads the staged rows back a chunk at a time: 2 500 records through the record loop', () => {
    const records = customers(2500).map((r, i) => (i === 2499 ? { ...r, name: null } : r));
    const result = importAsRun(records, { onRecordError: 'skip' });
    expect(result.outcome).toMatchObject({ ok: true, inserted: 2499, skipped: 1 });
    expect(hasStagedRows(staged, RUN)).toBe(true);
    expectSameAsPayload(result, records, { onRecordError: 'skip' });
  });
});

describe('where staged rows are kept', () => {
  const count = (table: string): number => staged.prepare(`select count(*) from ${table}`).pluck().get() as number;

  it('the first rows in the in-memory table; past the size, the rest in the TEMP table, read in record order through a view', () => {
    const mapping = compileMapping(plan(), tables);
    createStagedRows(staged, RUN, mapping.columns.length);
    const write = stagedRowsWriter(staged, RUN, mapping, 100);
    write.stage(customers(4));
    write.flush();
    expect(stagedRowsTable(staged, RUN)).toBe('ifw_scratch."ifw_staged_run-1"');
    write.stage(customers(8).slice(4));
    write.flush();
    write.stage(customers(12).slice(8));
    write.flush();
    expect(stagedRowsTable(staged, RUN)).toBe('temp."ifw_staged_run-1_rows"');
    expect(count('ifw_scratch."ifw_staged_run-1"')).toBe(4);
    expect(count('temp."ifw_staged_run-1"')).toBe(8);
    const order = staged
      .prepare(`select record_no, c0 from ${stagedRowsTable(staged, RUN)}`)
      .raw()
      .all();
    expect(order).toEqual(customers(12).map((c, i) => [i + 1, c.no]));
    createStagedRows(staged, RUN, mapping.columns.length);
    expect(stagedRowsTable(staged, RUN)).toBe('ifw_scratch."ifw_staged_run-1"');
    expect(count(stagedRowsTable(staged, RUN))).toBe(0);
  });

  it.each([
    { how: 'each page flushed (its page row written)', flushEach: true, cold: true },
    { how: 'pages waiting for a whole INSERT', flushEach: false, cold: false },
  ])('numbers every record in order, clean pages, violations and the first TEMP rows alike: $how', ({ flushEach, cold }) => {
    const mapping = compileMapping(plan(), tables);
    createStagedRows(staged, RUN, mapping.columns.length);
    const write = stagedRowsWriter(staged, RUN, mapping, 100);
    const nameless = { no: 'X', country: 'DE' };
    const pages = [
      customers(2),
      [customers(3)[2]!, nameless],
      customers(4).slice(3),
      [nameless, ...customers(6).slice(4)],
      customers(8).slice(6),
    ];
    for (const page of pages) {
      write.stage(page);
      if (flushEach) write.flush();
    }
    write.flush();
    // Flushed page by page, the rows go past 100 bytes in memory and the TEMP table's first rows (a
    // violation among them) go on from record 6; staged in one INSERT, they all stay in memory.
    expect(stagedRowsTable(staged, RUN)).toBe(cold ? 'temp."ifw_staged_run-1_rows"' : 'ifw_scratch."ifw_staged_run-1"');
    const rows = staged
      .prepare(`select record_no, raw, c0 from ${stagedRowsTable(staged, RUN)}`)
      .raw()
      .all();
    expect(rows).toEqual([
      [1, null, 'C1'],
      [2, null, 'C2'],
      [3, null, 'C3'],
      [4, JSON.stringify(nameless), null],
      [5, null, 'C4'],
      [6, JSON.stringify(nameless), null],
      [7, null, 'C5'],
      [8, null, 'C6'],
      [9, null, 'C7'],
      [10, null, 'C8'],
    ]);
  });

  it('inserts whole INSERTs of 64 rows as pages fill them, and keeps fewer waiting until flushed', () => {
    const mapping = compileMapping(plan(), tables);
    createStagedRows(staged, RUN, mapping.columns.length);
    const write = stagedRowsWriter(staged, RUN, mapping);
    const table = stagedRowsTable(staged, RUN);
    write.stage(customers(20));
    write.stage(customers(40).slice(20));
    write.stage(customers(60).slice(40));
    expect(count(table)).toBe(0);
    write.stage(customers(80).slice(60));
    expect(count(table)).toBe(64);
    write.stage(customers(200).slice(80));
    expect(count(table)).toBe(192);
    write.flush();
    expect(count(table)).toBe(200);
    write.flush();
    // A page of 10 000 records, one of them breaking a rule: all but the last 16 at once.
    const big: { no: string; country: string | null }[] = customers(10_200).slice(200);
    big[5_000] = { no: 'X', country: 'DE' };
    write.stage(big);
    expect(count(table)).toBe(10_184);
    write.flush();
    expect(count(table)).toBe(10_200);
    expect(staged.prepare(`select record_no from ${table} where raw is not null`).pluck().all()).toEqual([5_201]);
    expect(staged.prepare(`select c0 from ${table} order by record_no`).pluck().all()).toEqual([
      ...customers(200).map((c) => c.no),
      ...big.map((c) => (c.no === 'X' ? null : c.no)),
    ]);
  });

  it('gives the in-memory pages back when a run is dropped', () => {
    const mapping = compileMapping(plan(), tables);
    const pages = (): number => staged.pragma('ifw_scratch.page_count', { simple: true }) as number;
    createStagedRows(staged, RUN, mapping.columns.length);
    const empty = pages();
    const write = stagedRowsWriter(staged, RUN, mapping);
    for (let page = 1; page <= 100; page++) write.stage(customers(20));
    write.flush();
    expect(pages()).toBeGreaterThan(empty + 10);
    dropStagedRows(staged, RUN);
    expect(pages()).toBeLessThanOrEqual(empty);
  });

  it('staged from inside a transaction (ATTACH cannot run there): all in the TEMP table', () => {
    const mapping = compileMapping(plan(), tables);
    staged.transaction(() => {
      createStagedRows(staged, RUN, mapping.columns.length);
      const write = stagedRowsWriter(staged, RUN, mapping);
      write.stage(customers(4));
      write.flush();
    })();
    expect(stagedRowsTable(staged, RUN)).toBe('temp."ifw_staged_run-1"');
    expect(count(stagedRowsTable(staged, RUN))).toBe(4);
    expect(hasStagedRows(staged, RUN)).toBe(true);
  });
});
