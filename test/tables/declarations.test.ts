import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { AppError } from '../../src/core/errors.js';
import { createIntegration } from '../../src/integrations/service.js';
import type { SqliteDatabase } from '../../src/storage/database.js';
import { createTargetTable, declareTargetTable, deleteTargetTable } from '../../src/tables/service.js';
import { getTargetTable } from '../../src/tables/store.js';
import type { TargetFieldInput, TargetTableInput } from '../../src/tables/validate.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';

const clock = manualClock('2025-01-01T00:00:00Z');
let t: TestDatabase;
let db: SqliteDatabase;

beforeEach(async () => {
  t = await openTestDatabase();
  db = t.db;
});
afterEach(async () => {
  await t.cleanup();
});

const customer = (extra: TargetFieldInput[] = []): TargetTableInput => ({
  name: 'customer',
  primaryKey: ['no'],
  fields: [
    { name: 'no', type: 'code', maxLength: 20 },
    { name: 'name', type: 'text', maxLength: 100, required: true },
    { name: 'email', type: 'text', maxLength: 80 },
    { name: 'status', type: 'option', options: ['Open', 'Blocked'] },
    ...extra,
  ],
});

const country: TargetTableInput = {
  name: 'country',
  primaryKey: ['code'],
  fields: [
    { name: 'code', type: 'code', maxLength: 10 },
    { name: 'name', type: 'text' },
  ],
};

interface Column {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}
const columns = (table: string) =>
  db.sqlite.prepare('select name, type, "notnull", pk from pragma_table_info(?) order by cid').all(table) as Column[];
const tableSql = (table: string) =>
  (db.sqlite.prepare("select sql from sqlite_master where type = 'table' and name = ?").get(table) as { sql: string } | undefined)?.sql;

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected the operation to fail');
}

describe('declaring a target table', () => {
  it('creates a real SQL table named like the table, one typed column per field, NOT NULL for key and required fields', async () => {
    const declared = await declareTargetTable(
      db,
      customer([
        { name: 'balance', type: 'decimal' },
        { name: 'blocked', type: 'boolean' },
        { name: 'visits', type: 'integer' },
      ]),
      clock,
    );
    expect(declared.result).toBe('created');
    expect(columns('customer')).toEqual([
      { name: 'no', type: 'TEXT', notnull: 1, pk: 1 },
      { name: 'name', type: 'TEXT', notnull: 1, pk: 0 },
      { name: 'email', type: 'TEXT', notnull: 0, pk: 0 },
      { name: 'status', type: 'TEXT', notnull: 0, pk: 0 },
      { name: 'balance', type: 'NUMERIC', notnull: 0, pk: 0 },
      { name: 'blocked', type: 'INTEGER', notnull: 0, pk: 0 },
      { name: 'visits', type: 'INTEGER', notnull: 0, pk: 0 },
    ]);
  });

  it('stores the normalized declaration: default lengths filled in, key fields required', async () => {
    await declareTargetTable(
      db,
      {
        name: 'item',
        primaryKey: ['no'],
        fields: [
          { name: 'no', type: 'code' },
          { name: 'description', type: 'text' },
        ],
      },
      clock,
    );
    expect(await getTargetTable(db.kysely, 'item')).toEqual({
      name: 'item',
      primaryKey: ['no'],
      fields: [
        { name: 'no', type: 'code', maxLength: 20, required: true },
        { name: 'description', type: 'text', maxLength: 250, required: false },
      ],
    });
  });

  it('reports an identical redeclaration as unchanged', async () => {
    await declareTargetTable(db, customer(), clock);
    const again = await declareTargetTable(db, customer(), clock);
    expect(again).toMatchObject({ result: 'unchanged', addedFields: [] });
  });

  it('adds a column for a new field and keeps the rows', async () => {
    await declareTargetTable(db, customer(), clock);
    db.sqlite.prepare("insert into customer (no, name) values ('C1', 'Contoso')").run();
    const declared = await declareTargetTable(db, customer([{ name: 'city', type: 'text', maxLength: 30 }]), clock);
    expect(declared).toMatchObject({ result: 'updated', addedFields: ['city'] });
    expect(columns('customer').map((c) => c.name)).toEqual(['no', 'name', 'email', 'status', 'city']);
    expect(db.sqlite.prepare('select no, name, city from customer').all()).toEqual([{ no: 'C1', name: 'Contoso', city: null }]);
  });

  it('accepts a longer maxLength and new option values as declaration-only changes', async () => {
    await declareTargetTable(db, customer(), clock);
    const before = tableSql('customer');
    const wider = customer();
    const fields = wider.fields.map((f) =>
      f.name === 'email' ? { ...f, maxLength: 200 } : f.name === 'status' ? { ...f, options: ['Open', 'Blocked', 'Closed'] } : f,
    );
    expect((await declareTargetTable(db, { ...wider, fields }, clock)).result).toBe('updated');
    expect(tableSql('customer')).toBe(before);
    const stored = await getTargetTable(db.kysely, 'customer');
    expect(stored?.fields.find((f) => f.name === 'email')?.maxLength).toBe(200);
    expect(stored?.fields.find((f) => f.name === 'status')?.options).toEqual(['Open', 'Blocked', 'Closed']);
  });

  it('refuses declaring a table with the same name twice through create (409 conflict)', async () => {
    await createTargetTable(db, customer(), clock);
    const err = await failure(createTargetTable(db, customer(), clock));
    expect(err).toMatchObject({ status: 409, code: 'conflict' });
  });

  it('refuses a name already taken by an undeclared SQL table', async () => {
    db.sqlite.exec('create table legacy (id integer)');
    const err = await failure(
      declareTargetTable(db, { name: 'legacy', primaryKey: ['id'], fields: [{ name: 'id', type: 'integer' }] }, clock),
    );
    expect(err).toMatchObject({ status: 409, code: 'conflict' });
    expect(err.message).toContain('not a declared target table');
  });
});

describe('incompatible redeclarations', () => {
  const change = (edit: (t: TargetTableInput) => TargetTableInput) => edit(customer());
  const cases: [string, TargetTableInput, string][] = [
    [
      'removing a field',
      change((t) => ({ ...t, fields: t.fields.filter((f) => f.name !== 'email') })),
      'field "email" of table "customer" is missing',
    ],
    [
      'changing a type',
      change((t) => ({ ...t, fields: t.fields.map((f) => (f.name === 'email' ? { ...f, type: 'code' } : f)) })),
      'fields[2].type: field "email": its type cannot change from text to code',
    ],
    [
      'shrinking maxLength',
      change((t) => ({ ...t, fields: t.fields.map((f) => (f.name === 'email' ? { ...f, maxLength: 40 } : f)) })),
      'maxLength cannot shrink from 80 to 40',
    ],
    [
      'removing option values',
      change((t) => ({ ...t, fields: t.fields.map((f) => (f.name === 'status' ? { ...f, options: ['Open'] } : f)) })),
      'option values cannot be removed ("Blocked")',
    ],
    [
      'changing the primary key',
      change((t) => ({ ...t, primaryKey: ['no', 'email'] })),
      'primaryKey: the primary key of table "customer" is (no) and cannot change to (no, email)',
    ],
    [
      'renaming a field by case',
      change((t) => ({ ...t, fields: t.fields.map((f) => (f.name === 'email' ? { ...f, name: 'Email' } : f)) })),
      'cannot be renamed to "Email"',
    ],
  ];

  it.each(cases)('refuses %s with 409 and changes nothing', async (_, next, message) => {
    await declareTargetTable(db, customer(), clock);
    db.sqlite.prepare("insert into customer (no, name) values ('C1', 'Contoso')").run();
    const before = { sql: tableSql('customer'), declaration: await getTargetTable(db.kysely, 'customer') };
    const err = await failure(declareTargetTable(db, next, clock));
    expect(err).toMatchObject({ status: 409, code: 'incompatibleChange' });
    expect(err.message).toContain(message);
    expect({ sql: tableSql('customer'), declaration: await getTargetTable(db.kysely, 'customer') }).toEqual(before);
  });

  it('refuses adding or changing a relation on an existing field', async () => {
    await declareTargetTable(db, country, clock);
    await declareTargetTable(db, customer([{ name: 'country', type: 'code', maxLength: 10 }]), clock);
    const err = await failure(
      declareTargetTable(
        db,
        customer([{ name: 'country', type: 'code', maxLength: 10, relation: { table: 'country', field: 'code' } }]),
        clock,
      ),
    );
    expect(err).toMatchObject({ status: 409, code: 'incompatibleChange' });
    expect(err.message).toContain('its relation cannot change from none to country.code');
  });
});

describe('required fields', () => {
  it('refuses a new required field while the table has rows', async () => {
    await declareTargetTable(db, customer(), clock);
    db.sqlite.prepare("insert into customer (no, name) values ('C1', 'Contoso')").run();
    const err = await failure(declareTargetTable(db, customer([{ name: 'vatNo', type: 'code', required: true }]), clock));
    expect(err).toMatchObject({ status: 409, code: 'incompatibleChange' });
    expect(err.message).toContain('fields[4].required: new field "vatNo" cannot be required');
    expect(columns('customer').map((c) => c.name)).not.toContain('vatNo');
  });

  it('recreates an empty table to add a new required field as NOT NULL', async () => {
    await declareTargetTable(db, customer(), clock);
    const declared = await declareTargetTable(db, customer([{ name: 'vatNo', type: 'code', required: true }]), clock);
    expect(declared).toMatchObject({ result: 'updated', addedFields: ['vatNo'] });
    expect(columns('customer').find((c) => c.name === 'vatNo')).toMatchObject({ notnull: 1 });
  });

  it('drops NOT NULL when a field stops being required, keeping the rows', async () => {
    await declareTargetTable(db, customer(), clock);
    db.sqlite.prepare("insert into customer (no, name) values ('C1', 'Contoso')").run();
    const optional = customer();
    await declareTargetTable(
      db,
      { ...optional, fields: optional.fields.map((f) => (f.name === 'name' ? { ...f, required: false } : f)) },
      clock,
    );
    expect(columns('customer').find((c) => c.name === 'name')).toMatchObject({ notnull: 0 });
    expect(db.sqlite.prepare('select no, name from customer').all()).toEqual([{ no: 'C1', name: 'Contoso' }]);
    db.sqlite.prepare("insert into customer (no) values ('C2')").run();
  });

  it('makes a field required only when no row lacks a value', async () => {
    await declareTargetTable(db, customer(), clock);
    db.sqlite.prepare("insert into customer (no, name) values ('C1', 'Contoso')").run();
    const required = customer();
    const next = { ...required, fields: required.fields.map((f) => (f.name === 'email' ? { ...f, required: true } : f)) };
    const err = await failure(declareTargetTable(db, next, clock));
    expect(err).toMatchObject({ status: 409, code: 'incompatibleChange' });
    expect(err.message).toContain('field "email" cannot become required: some rows of table "customer" have no value in it');

    db.sqlite.prepare("update customer set email = 'info@contoso.example'").run();
    expect((await declareTargetTable(db, next, clock)).result).toBe('updated');
    expect(columns('customer').find((c) => c.name === 'email')).toMatchObject({ notnull: 1 });
  });

  it('refuses changing required on a table with rows that another table relates to', async () => {
    await declareTargetTable(db, country, clock);
    await declareTargetTable(
      db,
      customer([{ name: 'country', type: 'code', maxLength: 10, relation: { table: 'country', field: 'code' } }]),
      clock,
    );
    db.sqlite.prepare("insert into country (code, name) values ('NO', 'Norway')").run();
    const err = await failure(
      declareTargetTable(db, { ...country, fields: [country.fields[0]!, { name: 'name', type: 'text', required: true }] }, clock),
    );
    expect(err).toMatchObject({ status: 409, code: 'incompatibleChange' });
    expect(err.message).toContain('"customer" relate to it');
  });
});

describe('validation of a declaration', () => {
  const base = customer();
  const withField = (field: TargetFieldInput): TargetTableInput => ({ ...base, fields: [...base.fields, field] });
  const cases: [string, TargetTableInput, string][] = [
    ['a table name with capitals', { ...base, name: 'Customer' }, 'name: "Customer" is not a valid table name'],
    ['a reserved table name', { ...base, name: 'ifw_customer' }, 'name: "ifw_customer" is reserved'],
    ['no fields', { name: 'empty', primaryKey: ['no'], fields: [] }, 'fields: declare at least one field'],
    [
      'a field name with a space',
      withField({ name: 'first name', type: 'text' }),
      'fields[4].name: "first name" is not a valid field name',
    ],
    [
      'a field declared twice in another case',
      withField({ name: 'EMAIL', type: 'text' }),
      'fields[4].name: "EMAIL" is declared twice (also fields[2])',
    ],
    ['an unknown type', withField({ name: 'x', type: 'varchar' }), 'fields[4].type: "varchar" is not a field type; use one of text, code'],
    [
      'maxLength on an integer',
      withField({ name: 'x', type: 'integer', maxLength: 5 }),
      'fields[4].maxLength: only text and code fields have a maximum length',
    ],
    [
      'maxLength over the limit',
      withField({ name: 'x', type: 'text', maxLength: 5000 }),
      'fields[4].maxLength: must be between 1 and 2048, got 5000',
    ],
    [
      'options on a text field',
      withField({ name: 'x', type: 'text', options: ['a'] }),
      'fields[4].options: only option fields have option values',
    ],
    [
      'an option field without options',
      withField({ name: 'x', type: 'option' }),
      'fields[4].options: an option field lists its allowed values',
    ],
    ['a repeated option value', withField({ name: 'x', type: 'option', options: ['a', 'a'] }), 'fields[4].options[1]: "a" is listed twice'],
    ['an empty primary key', { ...base, primaryKey: [] }, 'primaryKey: name at least one field'],
    ['a primary key naming no field', { ...base, primaryKey: ['id'] }, 'primaryKey[0]: "id" is not one of the declared fields'],
    [
      'a boolean in the primary key',
      { name: 'flag', primaryKey: ['on'], fields: [{ name: 'on', type: 'boolean' }] },
      'primaryKey[0]: "on" is boolean, which cannot be part of a primary key',
    ],
    [
      'a relation to an undeclared table',
      withField({ name: 'country', type: 'code', relation: { table: 'country', field: 'code' } }),
      'fields[4].relation.table: no target table "country" is declared',
    ],
  ];

  it.each(cases)('refuses %s with 400 and a message naming the property', async (_, input, message) => {
    const err = await failure(declareTargetTable(db, input, clock));
    expect(err).toMatchObject({ status: 400, code: 'invalidRequest' });
    expect(err.message).toContain(message);
    expect(
      db.sqlite.prepare("select count(*) as n from sqlite_master where name not like 'ifw_%' and name not like 'sqlite_%'").get(),
    ).toEqual({ n: 0 });
  });

  it('refuses a relation to a field that is not the related table key, or of another type', async () => {
    await declareTargetTable(db, country, clock);
    const notKey = await failure(
      declareTargetTable(db, withField({ name: 'country', type: 'text', relation: { table: 'country', field: 'name' } }), clock),
    );
    expect(notKey.message).toContain('fields[4].relation.field: "name" is not the key of table "country"');
    const wrongType = await failure(
      declareTargetTable(db, withField({ name: 'country', type: 'integer', relation: { table: 'country', field: 'code' } }), clock),
    );
    expect(wrongType.message).toContain('field "country" is integer but country.code is code');
  });
});

describe('relations', () => {
  it('creates a foreign key the database enforces', async () => {
    await declareTargetTable(db, country, clock);
    await declareTargetTable(
      db,
      customer([{ name: 'country', type: 'code', maxLength: 10, relation: { table: 'country', field: 'code' } }]),
      clock,
    );
    expect(db.sqlite.prepare('select "table", "from", "to" from pragma_foreign_key_list(\'customer\')').all()).toEqual([
      { table: 'country', from: 'country', to: 'code' },
    ]);
    db.sqlite.prepare("insert into country (code, name) values ('NO', 'Norway')").run();
    db.sqlite.prepare("insert into customer (no, name, country) values ('C1', 'Contoso', 'NO')").run();
    expect(() => db.sqlite.prepare("insert into customer (no, name, country) values ('C2', 'Fabrikam', 'XX')").run()).toThrow(
      /FOREIGN KEY/,
    );
  });

  it('adds a new related field as a column with a reference', async () => {
    await declareTargetTable(db, country, clock);
    await declareTargetTable(db, customer(), clock);
    await declareTargetTable(
      db,
      customer([{ name: 'country', type: 'code', maxLength: 10, relation: { table: 'country', field: 'code' } }]),
      clock,
    );
    expect(db.sqlite.prepare('select "table" from pragma_foreign_key_list(\'customer\')').all()).toEqual([{ table: 'country' }]);
  });

  it('accepts a relation of a table to itself', async () => {
    const declared = await declareTargetTable(
      db,
      {
        name: 'employee',
        primaryKey: ['no'],
        fields: [
          { name: 'no', type: 'code' },
          { name: 'manager', type: 'code', relation: { table: 'employee', field: 'no' } },
        ],
      },
      clock,
    );
    expect(declared.result).toBe('created');
  });
});

describe('deleting a target table', () => {
  it('drops the SQL table and the declaration', async () => {
    await declareTargetTable(db, customer(), clock);
    await deleteTargetTable(db, 'customer');
    expect(tableSql('customer')).toBeUndefined();
    expect(await getTargetTable(db.kysely, 'customer')).toBeUndefined();
  });

  it('refuses while an integration writes to it', async () => {
    await declareTargetTable(db, customer(), clock);
    await createIntegration(db, { sortingOrder: 10, name: 'Customers', type: 'file', targetTable: 'customer' }, clock);
    const err = await failure(deleteTargetTable(db, 'customer'));
    expect(err).toMatchObject({ status: 409, code: 'conflict' });
    expect(err.message).toContain('used by integration(s) 10');
    expect(tableSql('customer')).toBeDefined();
  });

  it('refuses while another table relates to it', async () => {
    await declareTargetTable(db, country, clock);
    await declareTargetTable(
      db,
      customer([{ name: 'country', type: 'code', maxLength: 10, relation: { table: 'country', field: 'code' } }]),
      clock,
    );
    const err = await failure(deleteTargetTable(db, 'country'));
    expect(err).toMatchObject({ status: 409, code: 'conflict' });
    expect(err.message).toContain('"customer" relate to it');
  });

  it('answers 404 for an unknown table', async () => {
    expect(await failure(deleteTargetTable(db, 'nothing'))).toMatchObject({ status: 404, code: 'notFound' });
  });
});
