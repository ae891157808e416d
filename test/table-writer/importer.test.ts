import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importPayload, type ImportOutcome } from '../../src/table-writer/sqlite/importer.js';
import { createTableSql } from '../../src/tables/ddl.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import type { PlanOptions } from '../helpers/plans.js';
import { country, customer, customerPlan, customerTables, orderLine, SEED_COUNTRIES } from '../helpers/importer-tables.js';

const tables = customerTables;
const plan = customerPlan;

let t: TestDatabase;
let sqlite: BetterSqlite3.Database;

beforeEach(async () => {
  t = await openTestDatabase();
  sqlite = t.db.sqlite;
  for (const table of [country, customer, orderLine]) sqlite.exec(createTableSql(table, 'sqlite'));
  sqlite.exec(SEED_COUNTRIES);
  sqlite.exec('CREATE TABLE finish_log (message TEXT NOT NULL, customers INTEGER NOT NULL)');
});

afterEach(async () => {
  await t.cleanup();
});

/** Runs an import whose finish() records what it saw, inside the transaction. */
function run(
  payload: unknown,
  options: PlanOptions = {},
  finishResult = true,
): { committed: boolean; outcome: ImportOutcome; seen: ImportOutcome[] } {
  const seen: ImportOutcome[] = [];
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const result = importPayload(sqlite, { plan: plan(options), tables, payload: text }, (outcome) => {
    seen.push(outcome);
    sqlite.prepare('INSERT INTO finish_log (message, customers) VALUES (?, (SELECT count(*) FROM customer))').run(outcome.errorMessage);
    return finishResult;
  });
  return { ...result, seen };
}

const customers = (): unknown[] => sqlite.prepare('SELECT no, name, balance, country, parentNo FROM customer ORDER BY no').all();
const count = (table: string): number => sqlite.prepare(`SELECT count(*) FROM "${table}"`).pluck().get() as number;

function seedCustomers(...nos: string[]): void {
  const insert = sqlite.prepare("INSERT INTO customer (no, name, balance) VALUES (?, 'Seeded', 10)");
  for (const no of nos) insert.run(no);
}

/** `n` valid customer records C0001… */
const many = (n: number): { no: string; name: string }[] =>
  Array.from({ length: n }, (_, i) => ({ no: `C${String(i + 1).padStart(4, '0')}`, name: `Customer ${i + 1}` }));

describe('write modes', () => {
  it('insert writes every record converted and counts them as inserted', () => {
    const { committed, outcome } = run([
      { no: 'C1', name: 'Alpha', balance: '12.50', country: 'DE' },
      { no: 'C2', name: 'Beta', balance: 3, parent: { no: 'C1' } },
    ]);
    expect(committed).toBe(true);
    expect(outcome).toEqual({ ok: true, recordCount: 2, inserted: 2, updated: 0, skipped: 0, errors: [], errorCount: 0, errorMessage: '' });
    expect(customers()).toEqual([
      { no: 'C1', name: 'Alpha', balance: 12.5, country: 'DE', parentNo: null },
      { no: 'C2', name: 'Beta', balance: 3, parentNo: 'C1', country: null },
    ]);
  });

  it('insert writes large payloads in batches with exact counts', () => {
    const { outcome } = run(many(237));
    expect(outcome).toMatchObject({ ok: true, recordCount: 237, inserted: 237 });
    expect(count('customer')).toBe(237);
  });

  it('update changes existing rows and counts them as updated', () => {
    seedCustomers('C1', 'C2', 'C3');
    const { outcome } = run(
      [
        { no: 'C1', name: 'New One', balance: 1 },
        { no: 'C3', name: 'New Three', balance: 3 },
      ],
      { writeMode: 'update' },
    );
    expect(outcome).toMatchObject({ ok: true, recordCount: 2, inserted: 0, updated: 2, errorMessage: '' });
    expect(customers()).toEqual([
      { no: 'C1', name: 'New One', balance: 1, country: null, parentNo: null },
      { no: 'C2', name: 'Seeded', balance: 10, country: null, parentNo: null },
      { no: 'C3', name: 'New Three', balance: 3, country: null, parentNo: null },
    ]);
  });

  it('update writes NULL for an absent value that is not required', () => {
    seedCustomers('C1');
    run([{ no: 'C1', name: 'Renamed' }], { writeMode: 'update' });
    expect(customers()).toEqual([{ no: 'C1', name: 'Renamed', balance: null, country: null, parentNo: null }]);
  });

  it('update only touches the mapped columns', () => {
    seedCustomers('C1');
    const { outcome } = run([{ no: 'C1', balance: 99 }], {
      writeMode: 'update',
      columns: [
        ['no', 'no'],
        ['balance', 'balance'],
      ],
    });
    expect(outcome.updated).toBe(1);
    expect(customers()).toEqual([{ no: 'C1', name: 'Seeded', balance: 99, country: null, parentNo: null }]);
  });

  it('upsert inserts new rows and updates existing ones, counting each exactly', () => {
    seedCustomers('C1');
    const { outcome } = run(
      [
        { no: 'C1', name: 'Updated', balance: 5 },
        { no: 'C2', name: 'Inserted', balance: 6 },
        { no: 'C2', name: 'Inserted then updated', balance: 7 },
      ],
      { writeMode: 'upsert' },
    );
    expect(outcome).toMatchObject({ ok: true, recordCount: 3, inserted: 1, updated: 2, skipped: 0 });
    expect(customers()).toEqual([
      { no: 'C1', name: 'Updated', balance: 5, country: null, parentNo: null },
      { no: 'C2', name: 'Inserted then updated', balance: 7, country: null, parentNo: null },
    ]);
  });
});

describe('primary key rules', () => {
  it('insert refuses a key that is already in the table', () => {
    seedCustomers('C001');
    const { outcome } = run([
      { no: 'C000', name: 'New' },
      { no: 'C001', name: 'Duplicate' },
    ]);
    expect(outcome).toMatchObject({ ok: false, recordCount: 0, inserted: 0, errorCount: 1 });
    expect(outcome.errorMessage).toBe('record 2: field "no" value "C001" already exists in table "customer"');
    expect(outcome.errors).toEqual([
      {
        recordNo: 2,
        field: 'no',
        value: '"C001"',
        rule: 'already exists in table "customer"',
        message: 'record 2: field "no" value "C001" already exists in table "customer"',
      },
    ]);
    expect(customers()).toEqual([{ no: 'C001', name: 'Seeded', balance: 10, country: null, parentNo: null }]);
  });

  it('insert refuses a key written earlier in the same payload', () => {
    const { outcome } = run([
      { no: 'C001', name: 'First' },
      { no: 'C002', name: 'Second' },
      { no: 'C001', name: 'Again' },
    ]);
    expect(outcome.errorMessage).toBe('record 3: field "no" value "C001" already exists in table "customer"');
    expect(count('customer')).toBe(0);
  });

  it('insert finds a duplicate inside a batch and skips only that record', () => {
    const records = many(120);
    records[74] = { no: 'C0010', name: 'Duplicate of record 10' };
    const { outcome } = run(records, { onRecordError: 'skip' });
    expect(outcome).toMatchObject({ ok: true, inserted: 119, skipped: 1, errorCount: 1 });
    expect(outcome.errorMessage).toBe('1 record skipped: record 75: field "no" value "C0010" already exists in table "customer"');
    expect(count('customer')).toBe(119);
  });

  it('names the first key field and all key values for a composite key', () => {
    const { outcome } = run(
      [
        { order: 'SO1', line: 1, qty: 2 },
        { order: 'SO1', line: '1', qty: 3 },
      ],
      {
        table: 'orderLine',
        columns: [
          ['orderNo', 'order'],
          ['lineNo', 'line'],
          ['qty', 'qty'],
        ],
      },
    );
    expect(outcome.errorMessage).toBe('record 2: field "orderNo" value "SO1, 1" already exists in table "orderLine"');
  });

  it('update refuses a key that does not exist', () => {
    seedCustomers('C001');
    const { outcome } = run(
      [
        { no: 'C001', name: 'Fine' },
        { no: 'C404', name: 'Missing' },
      ],
      { writeMode: 'update' },
    );
    expect(outcome).toMatchObject({ ok: false, updated: 0, errorCount: 1 });
    expect(outcome.errorMessage).toBe(
      'record 2: field "no" value "C404" does not exist in table "customer" (update needs an existing row)',
    );
    expect(customers()).toEqual([{ no: 'C001', name: 'Seeded', balance: 10, country: null, parentNo: null }]);
  });
});

describe('relations', () => {
  it('accepts a value that exists in the related table', () => {
    expect(run([{ no: 'C1', name: 'A', country: 'FR' }]).outcome).toMatchObject({ ok: true, inserted: 1 });
  });

  it('refuses a value that does not exist in the related table', () => {
    const { outcome } = run([
      { no: 'C1', name: 'A', country: 'DE' },
      { no: 'C2', name: 'B', country: 'XX' },
    ]);
    expect(outcome.errorMessage).toBe('record 2: field "country" value "XX" does not exist in table "country" (field "code")');
    expect(count('customer')).toBe(0);
  });

  it('accepts a self-relation to a record earlier in the same payload', () => {
    const { outcome } = run([
      { no: 'P1', name: 'Parent' },
      { no: 'C1', name: 'Child', parent: { no: 'P1' } },
    ]);
    expect(outcome).toMatchObject({ ok: true, inserted: 2 });
  });

  it('accepts a chain of self-relations across batches', () => {
    const records = many(130).map((r, i) => (i === 0 ? r : { ...r, parent: { no: `C${String(i).padStart(4, '0')}` } }));
    const { outcome } = run(records);
    expect(outcome).toMatchObject({ ok: true, inserted: 130 });
    expect(sqlite.prepare("SELECT parentNo FROM customer WHERE no = 'C0130'").pluck().get()).toBe('C0129');
  });

  it('refuses a self-relation to a record later in the payload', () => {
    const { outcome } = run([
      { no: 'C1', name: 'Child', parent: { no: 'P1' } },
      { no: 'P1', name: 'Parent' },
    ]);
    expect(outcome.errorMessage).toBe('record 1: field "parentNo" value "P1" does not exist in table "customer" (field "no")');
  });
});

describe('record errors', () => {
  const withBadSecond = [
    { no: 'C1', name: 'Good' },
    { no: 'C2', name: '' },
    { no: 'C3', name: 'Also good' },
  ];

  it('fail mode writes nothing and reports the error', () => {
    const { committed, outcome } = run(withBadSecond);
    expect(committed).toBe(true);
    expect(outcome).toEqual({
      ok: false,
      recordCount: 0,
      inserted: 0,
      updated: 0,
      skipped: 0,
      errors: [{ recordNo: 2, field: 'name', value: null, rule: 'is required', message: 'record 2: field "name" is required' }],
      errorCount: 1,
      errorMessage: 'record 2: field "name" is required',
    });
    expect(count('customer')).toBe(0);
  });

  it('skip mode writes the good records and reports the bad ones', () => {
    const { outcome } = run(withBadSecond, { onRecordError: 'skip' });
    expect(outcome).toMatchObject({ ok: true, recordCount: 2, inserted: 2, skipped: 1, errorCount: 1 });
    expect(outcome.errorMessage).toBe('1 record skipped: record 2: field "name" is required');
    expect(customers().map((c) => (c as { no: string }).no)).toEqual(['C1', 'C3']);
  });

  it('skip mode with only bad records commits nothing and still succeeds', () => {
    const { outcome } = run([{ no: 'C1' }, { no: 'C2' }], { onRecordError: 'skip' });
    expect(outcome).toMatchObject({ ok: true, recordCount: 0, skipped: 2 });
    expect(outcome.errorMessage).toBe('2 records skipped: record 1: field "name" is required; record 2: field "name" is required');
  });

  it('reports every error of every record in record order, summarising after three', () => {
    const records = many(60).map((r, i) => (i % 10 === 9 ? { ...r, name: 'x'.repeat(31), balance: 'lots' } : r));
    const { outcome } = run(records);
    expect(outcome.errorCount).toBe(12);
    expect(outcome.errors.map((e) => e.recordNo)).toEqual([10, 10, 20, 20, 30, 30, 40, 40, 50, 50, 60, 60]);
    expect(outcome.errorMessage).toBe(
      `record 10: field "name" value "${'x'.repeat(31)}" exceeds 30 characters; ` +
        'record 10: field "balance" value "lots" is not a decimal number; ' +
        `record 20: field "name" value "${'x'.repeat(31)}" exceeds 30 characters; … and 9 more errors`,
    );
  });

  it('keeps the first 1000 errors but counts them all', () => {
    const { outcome } = run(Array.from({ length: 1200 }, () => ({ name: 'No key' })));
    expect(outcome.errorCount).toBe(1200);
    expect(outcome.errors).toHaveLength(1000);
    expect(outcome.errors[999]!.recordNo).toBe(1000);
    expect(outcome.errorMessage).toMatch(/; … and 1197 more errors$/);
  });

  it('refuses a record that is not an object', () => {
    expect(run([{ no: 'C1', name: 'A' }, 'C2']).outcome.errorMessage).toBe('record 2: value "C2" is not a JSON object');
  });

  it('reports a database constraint the declaration did not predict as a record error', () => {
    sqlite.exec('DROP TABLE customer');
    sqlite.exec(createTableSql(customer, 'sqlite').replace('"balance" NUMERIC', '"balance" NUMERIC CHECK ("balance" >= 0)'));
    const records = many(70);
    records[64] = { ...records[64]!, balance: -1 } as (typeof records)[number];
    const failed = run(records).outcome;
    expect(failed).toMatchObject({ ok: false, errorCount: 1 });
    expect(failed.errorMessage).toBe('record 65: breaks a rule of table "customer" (a CHECK constraint added to the table)');
    const skipped = run(records, { onRecordError: 'skip' }).outcome;
    expect(skipped).toMatchObject({ ok: true, inserted: 69, skipped: 1 });
  });
});

describe('payload-level errors', () => {
  it('fails a payload that is not JSON, and still calls finish', () => {
    const { committed, outcome, seen } = run('{"no": ');
    expect(committed).toBe(true);
    expect(outcome).toMatchObject({ ok: false, recordCount: 0, errorCount: 1 });
    expect(outcome.errorMessage).toMatch(/^payload is not valid JSON: /);
    expect(outcome.errors[0]).toMatchObject({ recordNo: null, field: null, value: null });
    expect(seen).toEqual([outcome]);
    expect(count('finish_log')).toBe(1);
  });

  it('fails when the records path does not point to an array', () => {
    const { outcome } = run({ data: { items: { no: 'C1' } } }, { recordsPath: 'data.items' });
    expect(outcome.errorMessage).toBe('payload: records path "data.items" does not point to an array');
  });

  it('fails when the root is not an array and no records path is set', () => {
    const { outcome } = run({ no: 'C1', name: 'A' });
    expect(outcome.errorMessage).toBe("payload: the root is not an array (set the integration's records path)");
  });

  it('reads the records at a JSONPath records path', () => {
    const { outcome } = run({ '@odata.value': [{ no: 'C1', name: 'A' }] }, { recordsPath: "$['@odata.value']" });
    expect(outcome).toMatchObject({ ok: true, inserted: 1 });
  });

  it('fails always, even in skip mode', () => {
    expect(run('nope', { onRecordError: 'skip' }).outcome.ok).toBe(false);
  });

  it('fails an integration that does not fit its table', () => {
    const { outcome } = run([], {
      columns: [
        ['no', 'no'],
        ['name', 'name'],
        ['email', 'email'],
      ],
    });
    expect(outcome.errorMessage).toBe('integration field 3 "email": target field "email" does not exist in table "customer"');
  });

  it('fails when the declared table is missing from the database', () => {
    sqlite.exec('DROP TABLE customer');
    const { committed, outcome } = importPayload(sqlite, { plan: plan(), tables, payload: '[{"no":"C1","name":"A"}]' }, () => true);
    expect(committed).toBe(true);
    expect(outcome.errorMessage).toBe('cannot write to table "customer": table "customer" does not exist');
  });
});

describe('finish', () => {
  it('runs inside the transaction after the data is written', () => {
    const { outcome, seen } = run([{ no: 'C1', name: 'A' }]);
    expect(seen).toEqual([outcome]);
    expect(sqlite.prepare('SELECT message, customers FROM finish_log').all()).toEqual([{ message: '', customers: 1 }]);
  });

  it('runs after a failed import was rolled back, and its own writes commit', () => {
    run([{ no: 'C1', name: 'A' }, { no: 'C2' }]);
    expect(sqlite.prepare('SELECT message, customers FROM finish_log').all()).toEqual([
      { message: 'record 2: field "name" is required', customers: 0 },
    ]);
    expect(count('customer')).toBe(0);
  });

  it('returning false rolls back the data and its own writes', () => {
    const { committed, outcome } = run([{ no: 'C1', name: 'A' }], {}, false);
    expect(committed).toBe(false);
    expect(outcome).toMatchObject({ ok: true, inserted: 1 });
    expect(count('customer')).toBe(0);
    expect(count('finish_log')).toBe(0);
    expect(sqlite.inTransaction).toBe(false);
  });

  it('a throwing finish rolls everything back and the error reaches the caller', () => {
    expect(() =>
      importPayload(sqlite, { plan: plan(), tables, payload: '[{"no":"C1","name":"A"}]' }, () => {
        throw new Error('status write failed');
      }),
    ).toThrow('status write failed');
    expect(count('customer')).toBe(0);
    expect(sqlite.inTransaction).toBe(false);
  });
});
