/**
 * The importer's cases (test/table-writer/importer.test.ts, test/table-writer/record-batches.test.ts) run against both backends:
 * the SQLite importer and the PostgreSQL one must give the same outcome, the same messages and the same
 * rows for the same records. Only a message that the database itself writes (a CHECK constraint, a
 * missing table) is worded by each database. Then what only PostgreSQL needs proven: the caller's
 * transaction stays usable whatever the import runs into, and async batch sources.
 *
 * The PostgreSQL half runs everywhere (an unreachable server fails it), unless IFW_TEST_SKIP_POSTGRES=1
 * (test/helpers/databases.ts) asks to skip it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ImportOutcome } from '../../src/table-writer/sqlite/importer.js';
import { importRecordBatchesPg } from '../../src/table-writer/postgres/importer.js';
import {
  CHUNK_CHARS,
  CHUNK_RECORDS,
  chunkRecordsFor,
  FIRST_MAPPED_CHUNK,
  writeRecordsPg,
} from '../../src/table-writer/postgres/records.js';
import { compileMapping } from '../../src/mapping/engine.js';
import type { MappedBatch } from '../../src/table-writer/mapped-batches.js';
import type { IntegrationPlan, OnRecordError } from '../../src/integrations/model.js';
import type { TargetTable } from '../../src/tables/model.js';
import { SKIP_POSTGRES } from '../helpers/databases.js';
import {
  postgresBackend,
  sqliteBackend,
  type FinishSpec,
  type ImportBackend,
  type ImportRun,
  type PostgresImportBackend,
} from '../helpers/import-backends.js';
import type { PlanOptions } from '../helpers/plans.js';
import { country, customer, customerPlan, customerTables, orderLine, SEED_COUNTRIES } from '../helpers/importer-tables.js';

type BackendName = ImportBackend['name'];
const openers: [BackendName, () => Promise<ImportBackend>][] = [
  ['sqlite', () => Promise.resolve(sqliteBackend())],
  // The same cases as a paginated run imports them on SQLite: mapped and staged page by page, then importStagedRows.
  ['sqlite, staged rows', () => Promise.resolve(sqliteBackend({ staged: true }))],
];
if (!SKIP_POSTGRES) openers.push(['postgres', postgresBackend]);

// -------------------------------------------------------------------------------------- declarations

const item: TargetTable = {
  name: 'item',
  primaryKey: ['id'],
  fields: [
    { name: 'id', type: 'integer' },
    { name: 'name', type: 'text', maxLength: 5, required: true },
    { name: 'parentId', type: 'integer', relation: { table: 'item', field: 'id' } },
  ],
};

const itemTables = new Map([['item', item]]);

const itemColumns = [
  ['id', 'id'],
  ['name', 'name'],
  ['parentId', 'parent'],
] as const;

const plan = customerPlan;

const itemPlan = (onRecordError: OnRecordError = 'fail', recordsPath = ''): IntegrationPlan =>
  plan({ table: 'item', columns: itemColumns, onRecordError, recordsPath });

/**
 * What the importer says when the database refuses: its own words, the same on every database (the
 * database's own message, which differs between them, never reaches a record error).
 */
const REFUSED_WORDS = {
  checkBalance: 'breaks a rule of table "customer" (a CHECK constraint added to the table)',
  noCustomerTable: 'table "customer" does not exist',
};

const withBalanceCheck = (ddl: string): string => ddl.replace('"balance" NUMERIC', '"balance" NUMERIC CHECK ("balance" >= 0)');

/** `n` valid customer records C0001… */
const many = (n: number): { no: string; name: string }[] =>
  Array.from({ length: n }, (_, i) => ({ no: `C${String(i + 1).padStart(4, '0')}`, name: `Customer ${i + 1}` }));
/** `client` with every statement's text noted in `statements` as the importer sends it (a COPY by its SQL). */
function recordingStatements<C extends { query: unknown }>(client: C): { client: C; statements: string[] } {
  const statements: string[] = [];
  const recording = new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
      return (query: unknown, ...rest: unknown[]) => {
        statements.push(typeof query === 'string' ? query : String((query as { text?: unknown }).text));
        return (target.query as (...args: unknown[]) => unknown)(query, ...rest);
      };
    },
  });
  return { client: recording, statements };
}

const items = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ({ id: from + i, name: `n${from + i}` }));

// ---------------------------------------------------------------------------------------- the cases

describe.each(openers)('importer on %s', (name, open) => {
  let b: ImportBackend;
  beforeAll(async () => {
    b = await open();
  });
  afterAll(async () => {
    await b.close();
  });

  const seedCountries = (): Promise<void> => b.exec(SEED_COUNTRIES);
  const resetCustomers = async (edit?: (ddl: string) => string): Promise<void> => {
    await b.reset([country, customer, orderLine], edit);
    await seedCountries();
  };

  /** Runs an import whose finish() logs what it saw, inside the transaction. */
  const run = (payload: unknown, options: PlanOptions = {}, finish: FinishSpec = { result: true, log: true }): Promise<ImportRun> =>
    b.importPayload(
      { plan: plan(options), tables: customerTables, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) },
      finish,
    );

  const byKey = (rows: unknown[], key: string): unknown[] =>
    rows.sort((x, y) => {
      const a = String((x as Record<string, unknown>)[key]);
      const c = String((y as Record<string, unknown>)[key]);
      return a < c ? -1 : a > c ? 1 : 0;
    });
  const customers = async (): Promise<unknown[]> => byKey(await b.all('SELECT no, name, balance, country, "parentNo" FROM customer'), 'no');
  const count = async (table: string): Promise<number> => ((await b.all(`SELECT count(*) AS n FROM "${table}"`))[0] as { n: number }).n;
  const seedCustomers = (...nos: string[]): Promise<void> =>
    b.exec(`INSERT INTO customer (no, name, balance) VALUES ${nos.map((no) => `('${no}', 'Seeded', 10)`).join(', ')}`);
  const finishLog = async (): Promise<unknown[]> => b.all('SELECT message, customers FROM finish_log');

  describe('customers', () => {
    beforeEach(async () => {
      await resetCustomers();
    });

    describe('write modes', () => {
      it('insert writes every record converted and counts them as inserted', async () => {
        const { committed, outcome } = await run([
          { no: 'C1', name: 'Alpha', balance: '12.50', country: 'DE' },
          { no: 'C2', name: 'Beta', balance: 3, parent: { no: 'C1' } },
        ]);
        expect(committed).toBe(true);
        expect(outcome).toEqual({
          ok: true,
          recordCount: 2,
          inserted: 2,
          updated: 0,
          skipped: 0,
          errors: [],
          errorCount: 0,
          errorMessage: '',
        });
        expect(await customers()).toEqual([
          { no: 'C1', name: 'Alpha', balance: 12.5, country: 'DE', parentNo: null },
          { no: 'C2', name: 'Beta', balance: 3, parentNo: 'C1', country: null },
        ]);
      });

      it('insert writes large payloads in batches with exact counts', async () => {
        const { outcome } = await run(many(237));
        expect(outcome).toMatchObject({ ok: true, recordCount: 237, inserted: 237 });
        expect(await count('customer')).toBe(237);
      });

      it('update changes existing rows and counts them as updated', async () => {
        await seedCustomers('C1', 'C2', 'C3');
        const { outcome } = await run(
          [
            { no: 'C1', name: 'New One', balance: 1 },
            { no: 'C3', name: 'New Three', balance: 3 },
          ],
          { writeMode: 'update' },
        );
        expect(outcome).toMatchObject({ ok: true, recordCount: 2, inserted: 0, updated: 2, errorMessage: '' });
        expect(await customers()).toEqual([
          { no: 'C1', name: 'New One', balance: 1, country: null, parentNo: null },
          { no: 'C2', name: 'Seeded', balance: 10, country: null, parentNo: null },
          { no: 'C3', name: 'New Three', balance: 3, country: null, parentNo: null },
        ]);
      });

      it('update writes NULL for an absent value that is not required', async () => {
        await seedCustomers('C1');
        await run([{ no: 'C1', name: 'Renamed' }], { writeMode: 'update' });
        expect(await customers()).toEqual([{ no: 'C1', name: 'Renamed', balance: null, country: null, parentNo: null }]);
      });

      it('update only touches the mapped columns', async () => {
        await seedCustomers('C1');
        const { outcome } = await run([{ no: 'C1', balance: 99 }], {
          writeMode: 'update',
          columns: [
            ['no', 'no'],
            ['balance', 'balance'],
          ],
        });
        expect(outcome.updated).toBe(1);
        expect(await customers()).toEqual([{ no: 'C1', name: 'Seeded', balance: 99, country: null, parentNo: null }]);
      });

      it('update with only the key mapped counts existing rows as updated', async () => {
        await seedCustomers('C1');
        const { outcome } = await run([{ no: 'C1' }, { no: 'C2' }], {
          writeMode: 'update',
          onRecordError: 'skip',
          columns: [['no', 'no']],
        });
        expect(outcome).toMatchObject({ ok: true, updated: 1, skipped: 1 });
        expect(outcome.errorMessage).toBe(
          '1 record skipped: record 2: field "no" value "C2" does not exist in table "customer" (update needs an existing row)',
        );
      });

      it('upsert inserts new rows and updates existing ones, counting each exactly', async () => {
        await seedCustomers('C1');
        const { outcome } = await run(
          [
            { no: 'C1', name: 'Updated', balance: 5 },
            { no: 'C2', name: 'Inserted', balance: 6 },
            { no: 'C2', name: 'Inserted then updated', balance: 7 },
          ],
          { writeMode: 'upsert' },
        );
        expect(outcome).toMatchObject({ ok: true, recordCount: 3, inserted: 1, updated: 2, skipped: 0 });
        expect(await customers()).toEqual([
          { no: 'C1', name: 'Updated', balance: 5, country: null, parentNo: null },
          { no: 'C2', name: 'Inserted then updated', balance: 7, country: null, parentNo: null },
        ]);
      });

      it('upsert of one key many times keeps the last record and counts the rest as updates', async () => {
        const records = Array.from({ length: 9 }, (_, i) => ({ no: `K${i % 3}`, name: `Version ${i}`, balance: i }));
        const { outcome } = await run(records, { writeMode: 'upsert' });
        expect(outcome).toMatchObject({ ok: true, recordCount: 9, inserted: 3, updated: 6 });
        expect(await customers()).toEqual([
          { no: 'K0', name: 'Version 6', balance: 6, country: null, parentNo: null },
          { no: 'K1', name: 'Version 7', balance: 7, country: null, parentNo: null },
          { no: 'K2', name: 'Version 8', balance: 8, country: null, parentNo: null },
        ]);
      });
    });

    describe('primary key rules', () => {
      it('insert refuses a key that is already in the table', async () => {
        await seedCustomers('C001');
        const { outcome } = await run([
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
        expect(await customers()).toEqual([{ no: 'C001', name: 'Seeded', balance: 10, country: null, parentNo: null }]);
      });

      it('insert refuses a key written earlier in the same payload', async () => {
        const { outcome } = await run([
          { no: 'C001', name: 'First' },
          { no: 'C002', name: 'Second' },
          { no: 'C001', name: 'Again' },
        ]);
        expect(outcome.errorMessage).toBe('record 3: field "no" value "C001" already exists in table "customer"');
        expect(await count('customer')).toBe(0);
      });

      it('insert finds a duplicate inside a batch and skips only that record', async () => {
        const records = many(120);
        records[74] = { no: 'C0010', name: 'Duplicate of record 10' };
        const { outcome } = await run(records, { onRecordError: 'skip' });
        expect(outcome).toMatchObject({ ok: true, inserted: 119, skipped: 1, errorCount: 1 });
        expect(outcome.errorMessage).toBe('1 record skipped: record 75: field "no" value "C0010" already exists in table "customer"');
        expect(await count('customer')).toBe(119);
      });

      it('names the first key field and all key values for a composite key', async () => {
        const { outcome } = await run(
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

      it('upserts by a composite key', async () => {
        await b.exec(`INSERT INTO "orderLine" ("orderNo", "lineNo", qty) VALUES ('SO1', 1, 1)`);
        const { outcome } = await run(
          [
            { order: 'SO1', line: 1, qty: 5 },
            { order: 'SO1', line: 2, qty: 6 },
          ],
          {
            table: 'orderLine',
            writeMode: 'upsert',
            columns: [
              ['orderNo', 'order'],
              ['lineNo', 'line'],
              ['qty', 'qty'],
            ],
          },
        );
        expect(outcome).toMatchObject({ ok: true, inserted: 1, updated: 1 });
        expect(byKey(await b.all('SELECT "orderNo", "lineNo", qty FROM "orderLine"'), 'lineNo')).toEqual([
          { orderNo: 'SO1', lineNo: 1, qty: 5 },
          { orderNo: 'SO1', lineNo: 2, qty: 6 },
        ]);
      });

      it('update refuses a key that does not exist', async () => {
        await seedCustomers('C001');
        const { outcome } = await run(
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
        expect(await customers()).toEqual([{ no: 'C001', name: 'Seeded', balance: 10, country: null, parentNo: null }]);
      });
    });

    describe('relations', () => {
      it('accepts a value that exists in the related table', async () => {
        expect((await run([{ no: 'C1', name: 'A', country: 'FR' }])).outcome).toMatchObject({ ok: true, inserted: 1 });
      });

      it('refuses a value that does not exist in the related table', async () => {
        const { outcome } = await run([
          { no: 'C1', name: 'A', country: 'DE' },
          { no: 'C2', name: 'B', country: 'XX' },
        ]);
        expect(outcome.errorMessage).toBe('record 2: field "country" value "XX" does not exist in table "country" (field "code")');
        expect(await count('customer')).toBe(0);
      });

      it('lists a missing relation among the record’s other errors, in column order', async () => {
        const { outcome } = await run([{ no: 'C1', name: 'x'.repeat(31), balance: 'lots', country: 'XX', parent: { no: 'NOBODY' } }]);
        expect(outcome.errors.map((e) => e.field)).toEqual(['name', 'balance', 'country', 'parentNo']);
        expect(outcome.errors[2]!.message).toBe('record 1: field "country" value "XX" does not exist in table "country" (field "code")');
      });

      it('accepts a self-relation to a record earlier in the same payload', async () => {
        const { outcome } = await run([
          { no: 'P1', name: 'Parent' },
          { no: 'C1', name: 'Child', parent: { no: 'P1' } },
        ]);
        expect(outcome).toMatchObject({ ok: true, inserted: 2 });
      });

      it('accepts a chain of self-relations across batches', async () => {
        const records = many(130).map((r, i) => (i === 0 ? r : { ...r, parent: { no: `C${String(i).padStart(4, '0')}` } }));
        const { outcome } = await run(records);
        expect(outcome).toMatchObject({ ok: true, inserted: 130 });
        expect(await b.all(`SELECT "parentNo" FROM customer WHERE no = 'C0130'`)).toEqual([{ parentNo: 'C0129' }]);
      });

      it('refuses a self-relation to a record later in the payload', async () => {
        const { outcome } = await run([
          { no: 'C1', name: 'Child', parent: { no: 'P1' } },
          { no: 'P1', name: 'Parent' },
        ]);
        expect(outcome.errorMessage).toBe('record 1: field "parentNo" value "P1" does not exist in table "customer" (field "no")');
      });

      it('refuses a record that refers to itself, and one that refers to a skipped record', async () => {
        const { outcome } = await run(
          [
            { no: 'S1', name: 'Self', parent: { no: 'S1' } },
            { no: 'B1', name: '' },
            { no: 'C1', name: 'Child of the bad one', parent: { no: 'B1' } },
          ],
          { onRecordError: 'skip' },
        );
        expect(outcome).toMatchObject({ ok: true, inserted: 0, skipped: 3 });
        expect(outcome.errors.map((e) => e.message)).toEqual([
          'record 1: field "parentNo" value "S1" does not exist in table "customer" (field "no")',
          'record 2: field "name" is required',
          'record 3: field "parentNo" value "B1" does not exist in table "customer" (field "no")',
        ]);
      });
    });

    describe('record errors', () => {
      const withBadSecond = [
        { no: 'C1', name: 'Good' },
        { no: 'C2', name: '' },
        { no: 'C3', name: 'Also good' },
      ];

      it('fail mode writes nothing and reports the error', async () => {
        const { committed, outcome } = await run(withBadSecond);
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
        expect(await count('customer')).toBe(0);
      });

      it('skip mode writes the good records and reports the bad ones', async () => {
        const { outcome } = await run(withBadSecond, { onRecordError: 'skip' });
        expect(outcome).toMatchObject({ ok: true, recordCount: 2, inserted: 2, skipped: 1, errorCount: 1 });
        expect(outcome.errorMessage).toBe('1 record skipped: record 2: field "name" is required');
        expect((await customers()).map((c) => (c as { no: string }).no)).toEqual(['C1', 'C3']);
      });

      it('skip mode with only bad records commits nothing and still succeeds', async () => {
        const { outcome } = await run([{ no: 'C1' }, { no: 'C2' }], { onRecordError: 'skip' });
        expect(outcome).toMatchObject({ ok: true, recordCount: 0, skipped: 2 });
        expect(outcome.errorMessage).toBe('2 records skipped: record 1: field "name" is required; record 2: field "name" is required');
      });

      it('reports every error of every record in record order, summarising after three', async () => {
        const records = many(60).map((r, i) => (i % 10 === 9 ? { ...r, name: 'x'.repeat(31), balance: 'lots' } : r));
        const { outcome } = await run(records);
        expect(outcome.errorCount).toBe(12);
        expect(outcome.errors.map((e) => e.recordNo)).toEqual([10, 10, 20, 20, 30, 30, 40, 40, 50, 50, 60, 60]);
        expect(outcome.errorMessage).toBe(
          `record 10: field "name" value "${'x'.repeat(31)}" exceeds 30 characters; ` +
            'record 10: field "balance" value "lots" is not a decimal number; ' +
            `record 20: field "name" value "${'x'.repeat(31)}" exceeds 30 characters; … and 9 more errors`,
        );
      });

      it('keeps the first 1000 errors but counts them all', async () => {
        const { outcome } = await run(Array.from({ length: 1200 }, () => ({ name: 'No key' })));
        expect(outcome.errorCount).toBe(1200);
        expect(outcome.errors).toHaveLength(1000);
        expect(outcome.errors[999]!.recordNo).toBe(1000);
        expect(outcome.errorMessage).toMatch(/; … and 1197 more errors$/);
      });

      it('refuses a record that is not an object', async () => {
        expect((await run([{ no: 'C1', name: 'A' }, 'C2'])).outcome.errorMessage).toBe('record 2: value "C2" is not a JSON object');
      });

      it('reports a database constraint the declaration did not predict as a record error', async () => {
        await resetCustomers(withBalanceCheck);
        const records = many(70);
        records[64] = { ...records[64]!, balance: -1 } as (typeof records)[number];
        const failed = (await run(records)).outcome;
        expect(failed).toMatchObject({ ok: false, errorCount: 1 });
        expect(failed.errorMessage).toBe(`record 65: ${REFUSED_WORDS.checkBalance}`);
        const skipped = (await run(records, { onRecordError: 'skip' })).outcome;
        expect(skipped).toMatchObject({ ok: true, inserted: 69, skipped: 1 });
      });

      it('does not count a record the database refused as written for the records after it', async () => {
        await resetCustomers(withBalanceCheck);
        const { outcome } = await run(
          [
            { no: 'C1', name: 'Refused', balance: -1 },
            { no: 'C2', name: 'Child of the refused one', parent: { no: 'C1' } },
            { no: 'C1', name: 'Accepted', balance: 1 },
            { no: 'C3', name: 'Child of the accepted one', parent: { no: 'C1' } },
          ],
          { writeMode: 'upsert', onRecordError: 'skip' },
        );
        expect(outcome).toMatchObject({ ok: true, inserted: 2, updated: 0, skipped: 2 });
        expect(outcome.errors.map((e) => e.message)).toEqual([
          `record 1: ${REFUSED_WORDS.checkBalance}`,
          'record 2: field "parentNo" value "C1" does not exist in table "customer" (field "no")',
        ]);
        expect((await customers()).map((c) => (c as { no: string }).no)).toEqual(['C1', 'C3']);
      });
    });

    describe('chunk boundaries', () => {
      const n = CHUNK_RECORDS * 2 + 37;

      it('judges duplicates and self-relations across chunks as in one run', async () => {
        const no = (i: number): string => `C${String(i).padStart(6, '0')}`;
        // Record i (1-based) has key no(i) and, after the first, refers to the record before it.
        const records: Record<string, unknown>[] = Array.from({ length: n }, (_, i) => ({
          no: no(i + 1),
          name: `Customer ${i + 1}`,
          ...(i > 0 && { parent: { no: no(i) } }),
        }));
        records[CHUNK_RECORDS + 5] = { no: no(3), name: 'Duplicate from the first chunk' };
        // The record after the refused one's child points back into the first chunk, so errors do not cascade.
        records[CHUNK_RECORDS + 7] = { ...records[CHUNK_RECORDS + 7]!, parent: { no: no(1) } };
        records[n - 1] = { no: 'LATE', name: 'Later parent', parent: { no: 'NOBODY' } };
        const { outcome } = await run(records, { onRecordError: 'skip' });
        expect(outcome).toMatchObject({ ok: true, inserted: n - 3, skipped: 3 });
        expect(outcome.errors.map((e) => e.message)).toEqual([
          `record ${CHUNK_RECORDS + 6}: field "no" value "${no(3)}" already exists in table "customer"`,
          `record ${CHUNK_RECORDS + 7}: field "parentNo" value "${no(CHUNK_RECORDS + 6)}" does not exist in table "customer" (field "no")`,
          `record ${n}: field "parentNo" value "NOBODY" does not exist in table "customer" (field "no")`,
        ]);
        expect(await count('customer')).toBe(n - 3);
        expect(await b.all(`SELECT "parentNo" FROM customer WHERE no = '${no(CHUNK_RECORDS + 1)}'`)).toEqual([
          { parentNo: no(CHUNK_RECORDS) },
        ]);
      });

      it('upserts a key repeated within and across chunks in record order', async () => {
        const records = Array.from({ length: n }, (_, i) => ({ no: `K${i % 7}`, name: `Version ${i}`, balance: i }));
        const { outcome } = await run(records, { writeMode: 'upsert' });
        expect(outcome).toMatchObject({ ok: true, inserted: 7, updated: n - 7 });
        expect(await b.all(`SELECT name FROM customer WHERE no = 'K${(n - 1) % 7}'`)).toEqual([{ name: `Version ${n - 1}` }]);
      });
    });

    describe('payload-level errors', () => {
      it('fails a payload that is not JSON, and still calls finish', async () => {
        const { committed, outcome, seen } = await run('{"no": ');
        expect(committed).toBe(true);
        expect(outcome).toMatchObject({ ok: false, recordCount: 0, errorCount: 1 });
        expect(outcome.errorMessage).toMatch(/^payload is not valid JSON: /);
        expect(outcome.errors[0]).toMatchObject({ recordNo: null, field: null, value: null });
        expect(seen).toEqual([outcome]);
        expect(await count('finish_log')).toBe(1);
      });

      it('fails when the records path does not point to an array', async () => {
        const { outcome } = await run({ data: { items: { no: 'C1' } } }, { recordsPath: 'data.items' });
        expect(outcome.errorMessage).toBe('payload: records path "data.items" does not point to an array');
      });

      it('fails when the root is not an array and no records path is set', async () => {
        const { outcome } = await run({ no: 'C1', name: 'A' });
        expect(outcome.errorMessage).toBe("payload: the root is not an array (set the integration's records path)");
      });

      it('reads the records at a JSONPath records path', async () => {
        const { outcome } = await run({ '@odata.value': [{ no: 'C1', name: 'A' }] }, { recordsPath: "$['@odata.value']" });
        expect(outcome).toMatchObject({ ok: true, inserted: 1 });
      });

      it('fails always, even in skip mode', async () => {
        expect((await run('nope', { onRecordError: 'skip' })).outcome.ok).toBe(false);
      });

      it('fails an integration that does not fit its table', async () => {
        const { outcome } = await run([], {
          columns: [
            ['no', 'no'],
            ['name', 'name'],
            ['email', 'email'],
          ],
        });
        expect(outcome.errorMessage).toBe('integration field 3 "email": target field "email" does not exist in table "customer"');
      });

      it('fails when the declared table is missing from the database, and still calls finish', async () => {
        await b.exec('DROP TABLE customer');
        const { committed, outcome } = await b.importPayload(
          { plan: plan(), tables: customerTables, payload: '[{"no":"C1","name":"A"}]' },
          { result: true },
        );
        expect(committed).toBe(true);
        expect(outcome.errorMessage).toBe(`cannot write to table "customer": ${REFUSED_WORDS.noCustomerTable}`);
      });
    });

    describe('finish', () => {
      it('runs inside the transaction after the data is written', async () => {
        const { outcome, seen } = await run([{ no: 'C1', name: 'A' }]);
        expect(seen).toEqual([outcome]);
        expect(await finishLog()).toEqual([{ message: '', customers: 1 }]);
      });

      it('runs after a failed import was rolled back, and its own writes commit', async () => {
        await run([{ no: 'C1', name: 'A' }, { no: 'C2' }]);
        expect(await finishLog()).toEqual([{ message: 'record 2: field "name" is required', customers: 0 }]);
        expect(await count('customer')).toBe(0);
      });

      it('returning false rolls back the data and its own writes', async () => {
        const { committed, outcome } = await run([{ no: 'C1', name: 'A' }], {}, { result: false, log: true });
        expect(committed).toBe(false);
        expect(outcome).toMatchObject({ ok: true, inserted: 1 });
        expect(await count('customer')).toBe(0);
        expect(await count('finish_log')).toBe(0);
      });

      it('a throwing finish rolls everything back and the error reaches the caller', async () => {
        await expect(run([{ no: 'C1', name: 'A' }], {}, { result: new Error('status write failed'), log: true })).rejects.toThrow(
          'status write failed',
        );
        expect(await count('customer')).toBe(0);
        expect(await count('finish_log')).toBe(0);
      });
    });
  });

  describe('record batches', () => {
    beforeEach(async () => {
      await b.reset([item]);
    });

    const ids = async (): Promise<number[]> =>
      (await b.all('SELECT id FROM item')).map((r) => (r as { id: number }).id).sort((x, y) => x - y);
    const runBatches = (batches: Iterable<readonly unknown[]>, onRecordError: OnRecordError = 'fail', result = true) =>
      b.importRecordBatches({ plan: itemPlan(onRecordError), tables: itemTables, batches }, { result });

    it('writes every record of every batch in one transaction, finish called once inside it', async () => {
      const { committed, outcome, seen } = await runBatches([items(1, 120), [], items(121, 130)]);
      expect(committed).toBe(true);
      expect(outcome).toEqual({
        ok: true,
        recordCount: 130,
        inserted: 130,
        updated: 0,
        skipped: 0,
        errors: [],
        errorCount: 0,
        errorMessage: '',
      });
      expect(seen).toHaveLength(1);
      expect(await ids()).toHaveLength(130);
    });

    it('numbers records on across batches, so an error names the record as in one payload', async () => {
      const { outcome } = await runBatches([items(1, 3), [{ id: 4, name: 'too long' }], [{ id: 5 }]]);
      expect(outcome.ok).toBe(false);
      expect(outcome.errorMessage).toBe('record 4: field "name" value "too long" exceeds 5 characters; record 5: field "name" is required');
      expect(await ids()).toEqual([]);
    });

    it('gives the same outcome as importPayload for the same records', async () => {
      const records = [...items(1, 60), { id: 61, name: 'far too long' }, { id: 3, name: 'dup' }, { id: 62, name: 'x', parent: 61 }];
      const fromBatches = (await runBatches([records.slice(0, 7), records.slice(7, 61), records.slice(61)], 'skip')).outcome;
      const batchIds = await ids();
      await b.exec('DELETE FROM item');
      const fromPayload = (
        await b.importPayload({ plan: itemPlan('skip'), tables: itemTables, payload: JSON.stringify(records) }, { result: true })
      ).outcome;
      expect(fromBatches).toEqual(fromPayload);
      expect(fromBatches).toMatchObject({ ok: true, inserted: 60, skipped: 3 });
      expect(await ids()).toEqual(batchIds);
    });

    it('sees rows of earlier batches when checking relations', async () => {
      const { outcome } = await runBatches([[{ id: 1, name: 'a' }], [{ id: 2, name: 'b', parent: 1 }]]);
      expect(outcome).toMatchObject({ ok: true, inserted: 2 });
    });

    it('reads a lazy source batch by batch, inside the transaction', async () => {
      const pulled: number[] = [];
      function* lazy(): Generator<readonly unknown[]> {
        for (let i = 0; i < 3; i++) {
          pulled.push(i);
          yield items(i * 10 + 1, i * 10 + 10);
        }
      }
      const { outcome } = await runBatches(lazy());
      expect(pulled).toEqual([0, 1, 2]);
      expect(outcome.recordCount).toBe(30);
    });

    it('rolls everything back when finish reports the lease lost', async () => {
      const { committed, outcome } = await runBatches([items(1, 10)], 'fail', false);
      expect(committed).toBe(false);
      expect(outcome.ok).toBe(true);
      expect(await ids()).toEqual([]);
    });

    it('rolls everything back and rethrows when the batch source throws', async () => {
      function* broken(): Generator<readonly unknown[]> {
        yield items(1, 10);
        throw new Error('staged page unreadable');
      }
      await expect(runBatches(broken())).rejects.toThrow('staged page unreadable');
      expect(await ids()).toEqual([]);
    });

    it('does not apply the integration records path: each batch is the record array', async () => {
      const result = await b.importRecordBatches(
        { plan: itemPlan('fail', 'data'), tables: itemTables, batches: [items(1, 2)] },
        { result: true },
      );
      expect(result.outcome).toMatchObject({ ok: true, inserted: 2 });
    });

    it('fails with the payload-level message when the integration is broken, before reading a batch', async () => {
      const broken: IntegrationPlan = { ...itemPlan(), mappings: [] };
      let read = false;
      function* source(): Generator<readonly unknown[]> {
        read = true;
        yield items(1, 1);
      }
      const { outcome } = await b.importRecordBatches({ plan: broken, tables: itemTables, batches: source() }, { result: true });
      expect(outcome).toMatchObject({ ok: false, errorMessage: 'integration 1 has no mappings' });
      expect(read).toBe(false);
    });
  });
});

// ------------------------------------------------------------------------------ PostgreSQL only

describe.skipIf(SKIP_POSTGRES)('PostgreSQL importer in the caller’s transaction', () => {
  let b: PostgresImportBackend;
  beforeAll(async () => {
    b = await postgresBackend();
  });
  afterAll(async () => {
    await b.close();
  });
  beforeEach(async () => {
    await b.reset([item]);
  });

  const ids = async (): Promise<number[]> =>
    (await b.all('SELECT id FROM item')).map((r) => (r as { id: number }).id).sort((x, y) => x - y);
  const logged = async (): Promise<string[]> =>
    (await b.all('SELECT message FROM finish_log')).map((r) => (r as { message: string }).message);

  /** BEGIN; the caller's own write; the import; another write of the caller; COMMIT — on one client. */
  async function callerTransaction(
    batches: Iterable<readonly unknown[]> | AsyncIterable<readonly unknown[]>,
    onRecordError: OnRecordError = 'skip',
  ) {
    const { client } = b;
    await client.query('BEGIN');
    await client.query(`INSERT INTO finish_log (message, customers) VALUES ('before', 0)`);
    let outcome: ImportOutcome | undefined;
    let error: unknown;
    try {
      outcome = (await importRecordBatchesPg(client, { plan: itemPlan(onRecordError), tables: itemTables, batches }, () => true)).outcome;
    } catch (err) {
      error = err;
    }
    await client.query(`INSERT INTO finish_log (message, customers) VALUES ('after', 0)`);
    await client.query('COMMIT');
    return { outcome, error };
  }

  it('sizes chunks by the records expected, so that a large import keeps within MAX_CHUNKS chunk savepoints', async () => {
    expect([undefined, 100_000, 300_000, 600_000, 1_000_000].map(chunkRecordsFor)).toEqual([5000, 5000, 5000, 10_000, 16_667]);
    const { client } = b;
    const chunkSavepoints = async (expectedRecords?: number): Promise<number> => {
      const counting = recordingStatements(client);
      const records = Array.from({ length: 12_000 }, (_, i) => ({ id: i + 1, name: 'x' }));
      await client.query('BEGIN');
      try {
        const input = {
          plan: itemPlan(),
          tables: itemTables,
          batches: [records],
          ...(expectedRecords === undefined ? {} : { expectedRecords }),
        };
        const { outcome } = await importRecordBatchesPg(counting.client, input, () => true);
        expect(outcome).toMatchObject({ ok: true, inserted: 12_000 });
      } finally {
        await client.query('ROLLBACK');
      }
      return counting.statements.filter((text) => text === 'SAVEPOINT ifw_import_chunk').length;
    };
    expect(await chunkSavepoints()).toBe(3);
    // As if the import were 600 000 records: chunks of 10 000.
    expect(await chunkSavepoints(600_000)).toBe(2);
  });

  it('cuts a chunk of records mapped on the mapping thread by its COPY text too, so that wide records make smaller chunks', async () => {
    expect(CHUNK_CHARS).toBe(4 * 1024 * 1024);
    const { client } = b;
    const mapping = compileMapping(plan({ table: 'item', columns: [itemColumns[0], itemColumns[1]] }), itemTables);
    // Batches of ten rows, 100 characters of COPY text each, as the mapping thread hands them over.
    const batches = (n: number): AsyncIterable<MappedBatch> => ({
      async *[Symbol.asyncIterator]() {
        for (let at = 1001; at <= 1000 + n; at += 10) {
          const ids = Array.from({ length: 10 }, (_, i) => at + i);
          await Promise.resolve();
          yield {
            length: 10,
            values: [],
            violations: null,
            text: ids.map((id) => `${id}\tn${String(id % 1000).padStart(3, '0')}\n`).join(''),
          };
        }
      },
    });
    const chunkSavepoints = async (chunkChars?: number, n = 100): Promise<number> => {
      const counting = recordingStatements(client);
      await client.query('BEGIN');
      try {
        const outcome = await writeRecordsPg(
          counting.client,
          mapping,
          { mapped: batches(n) },
          'insert',
          'fail',
          CHUNK_RECORDS,
          undefined,
          chunkChars,
        );
        expect(outcome).toMatchObject({ ok: true, inserted: n });
        expect(await b.all('SELECT count(*)::int AS n FROM item')).toEqual([{ n }]);
      } finally {
        await client.query('ROLLBACK');
      }
      return counting.statements.filter((text) => text === 'SAVEPOINT ifw_import_chunk').length;
    };
    // 100 records are one chunk by their number; at 250 characters a chunk takes three batches (300).
    expect(await chunkSavepoints()).toBe(1);
    expect(await chunkSavepoints(250)).toBe(4);
    // A batch larger than the bound is a chunk of its own.
    expect(await chunkSavepoints(1)).toBe(10);
    // The first chunks are small, so that the first COPY starts early: 1 000 records, 2 000, then the rest.
    expect(FIRST_MAPPED_CHUNK).toBe(1000);
    expect(await chunkSavepoints(undefined, 5000)).toBe(3);
    expect(await chunkSavepoints(undefined, 20_000)).toBe(6);
  });

  it('copies an upsert into new keys straight into the table; from the first chunk with a taken key on, upserts through the staging table', async () => {
    const { client } = b;
    /** The import's statements, a COPY by its SQL, and the outcome (committed). */
    const upsert = async (records: readonly unknown[]): Promise<{ outcome: ImportOutcome; statements: string[] }> => {
      const { client: recording, statements } = recordingStatements(client);
      const idAndName = plan({ table: 'item', columns: [itemColumns[0], itemColumns[1]], writeMode: 'upsert' });
      await client.query('BEGIN');
      const { outcome } = await importRecordBatchesPg(recording, { plan: idAndName, tables: itemTables, batches: [records] }, () => true);
      await client.query('COMMIT');
      return { outcome, statements };
    };
    const count = (statements: string[], pattern: RegExp): number => statements.filter((text) => pattern.test(text)).length;
    const intoItem = /^COPY "item"/;
    const staging = /^CREATE TEMP TABLE/;

    // A first load: three chunks, each one COPY into the table, nothing staged.
    const first = await upsert(items(1, 3 * CHUNK_RECORDS).map((r) => ({ ...r, name: 'a' })));
    expect(first.outcome).toMatchObject({ ok: true, inserted: 3 * CHUNK_RECORDS, updated: 0 });
    expect(count(first.statements, intoItem)).toBe(3);
    expect(count(first.statements, staging)).toBe(0);

    // Keys 2 001 to 15 000 are taken: the first chunk's COPY is refused and undone, and it and the two
    // after it are upserted from the staging table.
    const second = await upsert(items(2001, 2000 + 3 * CHUNK_RECORDS).map((r) => ({ ...r, name: 'b' })));
    expect(second.outcome).toMatchObject({ ok: true, inserted: 2000, updated: 3 * CHUNK_RECORDS - 2000 });
    expect(count(second.statements, intoItem)).toBe(1);
    expect(count(second.statements, staging)).toBe(1);
    const names = await b.all('SELECT name, count(*)::int AS n FROM item GROUP BY name ORDER BY name');
    expect(names).toEqual([
      { name: 'a', n: 2000 },
      { name: 'b', n: 3 * CHUNK_RECORDS },
    ]);

    // A key repeated within a chunk of new keys: refused by the table's key, upserted in record order.
    await b.reset([item]);
    const repeated = await upsert([...items(1, 3).map((r) => ({ ...r, name: 'x' })), { id: 2, name: 'last' }]);
    expect(repeated.outcome).toMatchObject({ ok: true, inserted: 3, updated: 1 });
    expect(count(repeated.statements, intoItem)).toBe(1);
    expect(await b.all('SELECT id, name FROM item ORDER BY id')).toEqual([
      { id: 1, name: 'x' },
      { id: 2, name: 'last' },
      { id: 3, name: 'x' },
    ]);
  });

  it('keeps the caller’s transaction usable when the database refuses a row (CHECK), writing the rest', async () => {
    await b.reset([item], (ddl) => ddl.replace('"name" TEXT NOT NULL', `"name" TEXT NOT NULL CHECK ("name" <> 'bad')`));
    const { outcome } = await callerTransaction([[...items(1, 3), { id: 4, name: 'bad' }, ...items(5, 6)]]);
    expect(outcome).toMatchObject({ ok: true, inserted: 5, skipped: 1 });
    expect(outcome!.errorMessage).toBe('1 record skipped: record 4: breaks a rule of table "item" (a CHECK constraint added to the table)');
    expect(await ids()).toEqual([1, 2, 3, 5, 6]);
    expect(await logged()).toEqual(['before', 'after']);
  });

  it('turns a foreign key the declaration does not know into a record error, not an aborted transaction', async () => {
    await b.exec('CREATE TABLE allowed (id BIGINT PRIMARY KEY)');
    await b.exec('INSERT INTO allowed (id) VALUES (1), (2)');
    await b.exec('ALTER TABLE item ADD FOREIGN KEY (id) REFERENCES allowed (id)');
    const { outcome } = await callerTransaction([items(1, 3)]);
    expect(outcome).toMatchObject({ ok: true, inserted: 2, skipped: 1 });
    expect(outcome!.errors[0]!.message).toBe('record 3: refers to a row that does not exist in a table that table "item" relates to');
    expect(await logged()).toEqual(['before', 'after']);
  });

  it('fail mode leaves none of its rows in the caller’s transaction, and the caller’s own writes commit', async () => {
    const { outcome } = await callerTransaction([[...items(1, 5), { id: 6 }]], 'fail');
    expect(outcome).toMatchObject({ ok: false, errorMessage: 'record 6: field "name" is required' });
    expect(await ids()).toEqual([]);
    expect(await logged()).toEqual(['before', 'after']);
  });

  it('a throwing source leaves the caller’s transaction usable, without the import’s rows', async () => {
    async function* broken(): AsyncGenerator<readonly unknown[]> {
      yield items(1, CHUNK_RECORDS + 1);
      await Promise.resolve();
      throw new Error('staged page unreadable');
    }
    const { outcome, error } = await callerTransaction(broken());
    expect(outcome).toBeUndefined();
    expect(error).toEqual(new Error('staged page unreadable'));
    expect(await ids()).toEqual([]);
    expect(await logged()).toEqual(['before', 'after']);
  });

  it('reads an async source batch by batch', async () => {
    async function* pages(): AsyncGenerator<readonly unknown[]> {
      for (let p = 0; p < 4; p++) {
        await Promise.resolve();
        yield items(p * 1000 + 1, p * 1000 + 1000);
      }
    }
    const { outcome } = await callerTransaction(pages());
    expect(outcome).toMatchObject({ ok: true, inserted: 4000 });
    expect(await ids()).toHaveLength(4000);
  });

  it('refuses to run outside a transaction (savepoints need one)', async () => {
    const { client } = b;
    await expect(
      importRecordBatchesPg(client, { plan: itemPlan(), tables: itemTables, batches: [items(1, 1)] }, () => true),
    ).rejects.toThrow(/transaction block/);
    expect(await ids()).toEqual([]);
  });
});
