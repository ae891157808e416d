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
import { createStagedRows, hasStagedRows, stagedRowsTable, stagedRowsWriter } from '../../src/table-writer/sqlite/staged-rows.js';
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
  const write = stagedRowsWriter(staged, RUN, mapping);
  for (let from = 0, pageNo = 1; from < records.length; from += PAGE_RECORDS, pageNo++)
    write(pageNo, records.slice(from, from + PAGE_RECORDS));
  statements.length = 0;
  return importStagedRows(staged, { plan: p, tables, table: stagedRowsTable(RUN) }, () => true);
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

describe('importStagedRows', () => {
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
