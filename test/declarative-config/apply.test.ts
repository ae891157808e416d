import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyConfig, applyConfigFile } from '../../src/declarative-config/apply.js';
import { manualClock } from '../../src/core/clock.js';
import { AppError } from '../../src/core/errors.js';
import { getIntegrationPlan } from '../../src/integrations/store.js';
import { getEntry } from '../../src/job-queue/entries.js';
import { getTargetTable } from '../../src/tables/store.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';

const EXAMPLE = path.resolve(import.meta.dirname, '../../examples/customers.yaml');
const clock = manualClock('2025-01-01T00:00:00Z');
let t: TestDatabase;

beforeEach(async () => {
  t = await openTestDatabase();
});
afterEach(async () => {
  await t.cleanup();
});

/** The example document as plain data, to vary in tests. */
interface ExampleDoc {
  targetTables: { name: string; primaryKey: string[]; fields: Record<string, unknown>[] }[];
  integrations: (Record<string, unknown> & { fields: Record<string, unknown>[]; mappings: Record<string, unknown>[] })[];
  jobQueueEntries?: Record<string, unknown>[];
}
const example = (): ExampleDoc => parse(fs.readFileSync(EXAMPLE, 'utf8')) as ExampleDoc;

const sqlTables = () =>
  (
    t.db.sqlite
      .prepare("select name from sqlite_master where type = 'table' and name not like 'ifw_%' and name not like 'sqlite_%' order by name")
      .all() as { name: string }[]
  ).map((r) => r.name);

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected the operation to fail');
}

describe('ifw apply', () => {
  it('creates the target table, the integration, its fields and mappings from examples/customers.yaml', async () => {
    const report = await applyConfigFile(t.db, EXAMPLE, clock);
    expect(report.targetTables).toEqual([{ name: 'customer', result: 'created', changes: [] }]);
    expect(report.integrations).toEqual([{ sortingOrder: 10, name: 'Customers', result: 'created', changes: [] }]);
    expect(sqlTables()).toEqual(['customer']);
    const plan = await getIntegrationPlan(t.db.kysely, 10);
    expect(plan?.integration).toEqual({
      sortingOrder: 10,
      name: 'Customers',
      type: 'file',
      targetTable: 'customer',
      recordsPath: '',
      acceptBulkImportRequests: true,
      maxPayloadSizeKb: 1024,
      writeMode: 'upsert',
      onRecordError: 'fail',
    });
    expect(plan?.fields.map((f) => f.sourcePath)).toEqual(['no', 'name', 'email', 'address.city', 'address.country']);
    expect(plan?.mappings.map((m) => [m.fieldNo, m.targetField, m.required])).toEqual([
      [1, 'no', true],
      [2, 'name', true],
      [3, 'email', false],
      [4, 'city', false],
      [5, 'country', false],
    ]);
  });

  it('reports everything unchanged when the same file is applied again', async () => {
    await applyConfigFile(t.db, EXAMPLE, clock);
    const again = await applyConfigFile(t.db, EXAMPLE, clock);
    expect(again.summary).toEqual({
      created: 0,
      updated: 0,
      unchanged: again.targetTables.length + again.integrations.length + again.jobQueueEntries.length,
    });
    expect(
      [...again.targetTables, ...again.integrations, ...again.jobQueueEntries].every(
        (e) => e.result === 'unchanged' && e.changes.length === 0,
      ),
    ).toBe(true);
  });

  it('changes nothing when a document is bad, and names the path of the problem', async () => {
    const doc = example();
    doc.integrations[0]!.fields[2]!.sourcePath = 'lines[*].email';
    const err = await failure(applyConfig(t.db, doc, clock));
    expect(err).toMatchObject({ status: 400, code: 'invalidRequest' });
    expect(err.message).toMatch(/^integrations\[0\]\.fields\[2\]\.sourcePath: invalid path "lines\[\*\]\.email"/);
    // The table was declared before the integration failed: the transaction took it back.
    expect(sqlTables()).toEqual([]);
    expect(await getTargetTable(t.db.kysely, 'customer')).toBeUndefined();
    expect(await getIntegrationPlan(t.db.kysely, 10)).toBeUndefined();
  });

  it('removes fields and mappings the document no longer lists', async () => {
    await applyConfigFile(t.db, EXAMPLE, clock);
    const doc = example();
    const integration = doc.integrations[0]!;
    integration.fields = integration.fields.filter((f) => f.fieldNo !== 5);
    integration.mappings = integration.mappings.filter((m) => m.fieldNo !== 5 && m.fieldNo !== 4);
    const report = await applyConfig(t.db, doc, clock);
    expect(report.integrations[0]).toMatchObject({
      result: 'updated',
      changes: ['mapping of field 4 removed', 'mapping of field 5 removed', 'field 5 removed'],
    });
    const plan = await getIntegrationPlan(t.db.kysely, 10);
    expect(plan?.fields.map((f) => f.fieldNo)).toEqual([1, 2, 3, 4]);
    expect(plan?.mappings.map((m) => m.fieldNo)).toEqual([1, 2, 3]);
  });

  it('leaves fields and mappings alone when the document does not mention them', async () => {
    await applyConfigFile(t.db, EXAMPLE, clock);
    const { fields: _f, mappings: _m, ...settings } = example().integrations[0]!;
    const report = await applyConfig(t.db, { integrations: [{ ...settings, name: 'Customers (CRM)' }] }, clock);
    expect(report.integrations[0]).toMatchObject({ result: 'updated', changes: ['settings changed: name'] });
    const plan = await getIntegrationPlan(t.db.kysely, 10);
    expect([plan?.fields.length, plan?.mappings.length]).toEqual([5, 5]);
  });

  it('adds a new table field as a column and reports it', async () => {
    await applyConfigFile(t.db, EXAMPLE, clock);
    const doc = example();
    doc.targetTables[0]!.fields.push({ name: 'phone', type: 'text', maxLength: 30 });
    const report = await applyConfig(t.db, doc, clock);
    expect(report.targetTables[0]).toEqual({ name: 'customer', result: 'updated', changes: ['field phone added'] });
    expect(t.db.sqlite.prepare("select name from pragma_table_info('customer') where name = 'phone'").get()).toEqual({ name: 'phone' });
  });

  it('refuses an incompatible table change with 409 naming the document path', async () => {
    await applyConfigFile(t.db, EXAMPLE, clock);
    const doc = example();
    doc.targetTables[0]!.fields = doc.targetTables[0]!.fields.map((f) => (f.name === 'email' ? { ...f, maxLength: 10 } : f));
    const err = await failure(applyConfig(t.db, doc, clock));
    expect(err).toMatchObject({ status: 409, code: 'incompatibleChange' });
    expect(err.message).toContain('targetTables[0].fields[2].maxLength: field "email": maxLength cannot shrink from 80 to 10');
  });

  it('declares related tables in dependency order, whatever their order in the document', async () => {
    const doc = example();
    doc.targetTables[0]!.fields = doc.targetTables[0]!.fields.map((f) =>
      f.name === 'country' ? { ...f, relation: { table: 'country', field: 'code' } } : f,
    );
    doc.targetTables.push({ name: 'country', primaryKey: ['code'], fields: [{ name: 'code', type: 'code', maxLength: 10 }] });
    const report = await applyConfig(t.db, doc, clock);
    expect(report.targetTables.map((r) => [r.name, r.result])).toEqual([
      ['customer', 'created'],
      ['country', 'created'],
    ]);
    expect(t.db.sqlite.prepare('select "table" from pragma_foreign_key_list(\'customer\')').all()).toEqual([{ table: 'country' }]);
  });

  it('puts a job queue entry On Hold and changes its interval, then finds it unchanged', async () => {
    const doc = { jobQueueEntries: [{ id: 'bulk-import-processor', status: 'On Hold', recurrenceSeconds: 300 }] };
    const first = await applyConfig(t.db, doc, clock);
    expect(first.jobQueueEntries).toEqual([
      { id: 'bulk-import-processor', result: 'updated', changes: ['recurrenceSeconds 60 → 300', 'status Ready → On Hold'] },
    ]);
    expect(await getEntry(t.db, 'bulk-import-processor')).toMatchObject({ status: 'On Hold', recurrenceSeconds: 300 });
    expect((await applyConfig(t.db, doc, clock)).jobQueueEntries[0]?.result).toBe('unchanged');
  });

  const shapeCases: [string, unknown, string][] = [
    ['an unknown top-level key', { tables: [] }, 'unknown property "tables"'],
    [
      'an unknown property deep inside',
      { integrations: [{ ...example().integrations[0], fields: [{ fieldNo: 1, title: 'No.', sourcePath: 'no', path: 'x' }] }] },
      'integrations[0].fields[0]: unknown property "path"',
    ],
    ['a wrongly typed value', { targetTables: [{ name: 'x', primaryKey: 'no', fields: [] }] }, 'targetTables[0].primaryKey: must be array'],
    ['a missing property', { integrations: [{ sortingOrder: 10, name: 'x', type: 'file' }] }, 'integrations[0]: "targetTable" is required'],
    [
      'a value of neither allowed type',
      { integrations: [{ ...example().integrations[0], maxPayloadSizeKb: 'big' }] },
      'integrations[0].maxPayloadSizeKb: must be integer or null',
    ],
    ['an empty document', null, 'the document is empty'],
    ['a document that is a list', [1], 'the document: must be object'],
    [
      'a table declared twice',
      { targetTables: [example().targetTables[0], example().targetTables[0]] },
      'targetTables[1].name: "customer" is declared twice (also targetTables[0])',
    ],
    ['an unknown job queue entry', { jobQueueEntries: [{ id: 'nightly' }] }, 'jobQueueEntries[0].id: no job queue entry "nightly"'],
    [
      'a job queue status the scheduler owns',
      { jobQueueEntries: [{ id: 'bulk-import-processor', status: 'Error' }] },
      'jobQueueEntries[0].status: must be one of "Ready", "On Hold"',
    ],
  ];

  it.each(shapeCases)('refuses %s with a message naming where', async (_, doc, message) => {
    const err = await failure(applyConfig(t.db, doc, clock));
    expect(err).toMatchObject({ status: 400, code: 'invalidRequest' });
    expect(err.message).toContain(message);
  });

  it('names the mapping whose target field the table does not have', async () => {
    const doc = example();
    doc.integrations[0]!.mappings[1]!.targetField = 'fullName';
    const err = await failure(applyConfig(t.db, doc, clock));
    expect(err.message).toContain('integrations[0].mappings[1].targetField: table "customer" has no field "fullName"');
    expect(sqlTables()).toEqual([]);
  });

  it('refuses a file that is missing or not YAML, naming the file', async () => {
    expect(await failure(applyConfigFile(t.db, path.join(t.dir, 'missing.yaml'), clock))).toMatchObject({
      status: 400,
      message: expect.stringContaining('no such file') as unknown,
    });
    const broken = path.join(t.dir, 'broken.yaml');
    fs.writeFileSync(broken, 'targetTables: [\n  - name: x\n');
    const err = await failure(applyConfigFile(t.db, broken, clock));
    expect(err).toMatchObject({ status: 400, code: 'invalidRequest' });
    expect(err.message).toContain(`${broken}: not valid YAML`);
  });
});
