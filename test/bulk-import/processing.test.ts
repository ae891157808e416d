/**
 * The spec's state table and error table through the API, with the real job queue thread: submit,
 * let the processor run (woken by the submission), poll, and read the target tables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/declarative-config/apply.js';
import { systemClock } from '../../src/core/clock.js';
import { API, startTestService, type TestService } from '../helpers/service.js';
import { until } from '../helpers/until.js';
import { queueHadItsTurn } from '../helpers/queue-fixtures.js';

const SET = `${API}/bulkImportRequests`;
let t: TestService;

const model = {
  targetTables: [
    {
      name: 'country',
      primaryKey: ['code'],
      fields: [
        { name: 'code', type: 'code', maxLength: 10 },
        { name: 'name', type: 'text', maxLength: 50 },
      ],
    },
    {
      name: 'contact',
      primaryKey: ['no'],
      fields: [
        { name: 'no', type: 'code', maxLength: 20 },
        { name: 'name', type: 'text', maxLength: 30, required: true },
        { name: 'email', type: 'text', maxLength: 80 },
        { name: 'age', type: 'integer' },
        { name: 'status', type: 'option', options: ['Open', 'Closed'] },
        { name: 'country', type: 'code', maxLength: 10, relation: { table: 'country', field: 'code' } },
      ],
    },
  ],
  integrations: [
    {
      sortingOrder: 50,
      name: 'Countries',
      type: 'file',
      targetTable: 'country',
      acceptBulkImportRequests: true,
      writeMode: 'upsert',
      fields: [
        { fieldNo: 1, title: 'Code', sourcePath: 'code', columnType: 'standard' },
        { fieldNo: 2, title: 'Name', sourcePath: 'name', columnType: 'standard' },
      ],
      mappings: [
        { fieldNo: 1, targetField: 'code' },
        { fieldNo: 2, targetField: 'name' },
      ],
    },
    ...(['insert', 'update', 'upsert'] as const).map((writeMode, i) => ({
      sortingOrder: 60 + i,
      name: `Contacts (${writeMode})`,
      type: 'file',
      targetTable: 'contact',
      recordsPath: 'data.items',
      acceptBulkImportRequests: true,
      writeMode,
      onRecordError: 'fail',
      fields: [
        { fieldNo: 1, title: 'No', sourcePath: 'id', columnType: 'standard' },
        { fieldNo: 2, title: 'Name', sourcePath: 'person.name', columnType: 'standard' },
        { fieldNo: 3, title: 'Email', sourcePath: 'email', columnType: 'standard' },
        { fieldNo: 4, title: 'Age', sourcePath: 'age', columnType: 'standard' },
        { fieldNo: 5, title: 'Status', sourcePath: 'status', columnType: 'standard' },
        { fieldNo: 6, title: 'Country', sourcePath: 'country', columnType: 'standard' },
      ],
      mappings: [
        { fieldNo: 1, targetField: 'no', required: true },
        { fieldNo: 2, targetField: 'name' },
        { fieldNo: 3, targetField: 'email' },
        { fieldNo: 4, targetField: 'age' },
        { fieldNo: 5, targetField: 'status' },
        { fieldNo: 6, targetField: 'country' },
      ],
    })),
    {
      sortingOrder: 70,
      name: 'Contacts (skip bad records)',
      type: 'file',
      targetTable: 'contact',
      recordsPath: 'data.items',
      acceptBulkImportRequests: true,
      writeMode: 'upsert',
      onRecordError: 'skip',
      fields: [
        { fieldNo: 1, title: 'No', sourcePath: 'id', columnType: 'standard' },
        { fieldNo: 2, title: 'Name', sourcePath: 'person.name', columnType: 'standard' },
        { fieldNo: 3, title: 'Age', sourcePath: 'age', columnType: 'standard' },
      ],
      mappings: [
        { fieldNo: 1, targetField: 'no' },
        { fieldNo: 2, targetField: 'name' },
        { fieldNo: 3, targetField: 'age' },
      ],
    },
  ],
};

beforeAll(async () => {
  t = await startTestService({ workers: true });
  await applyConfig(t.service.db, model, systemClock);
  // Only a wake can run the processor in these tests: its next scheduled run is a day away.
  await t.service.db.kysely
    .updateTable('ifw_job_queue_entry')
    .set({ recurrence_seconds: 86_400, next_run_at: '2999-01-01T00:00:00.000Z' })
    .where('id', '=', 'bulk-import-processor')
    .execute();
  expect(
    (
      await submitAndWait(50, [
        { code: 'NO', name: 'Norway' },
        { code: 'FR', name: 'France' },
      ])
    ).status,
  ).toBe('Completed');
});
afterAll(async () => t.cleanup());

type Polled = { requestId: string; status: string; recordCount: number; errorMessage: string; processedAt: string | null };

async function submit(sortingOrder: number, records: unknown, wrap = true): Promise<string> {
  const payload = JSON.stringify(wrap && sortingOrder !== 50 ? { data: { items: records } } : records);
  const res = await t.inject({ method: 'POST', url: SET, payload: { integrationSortingOrder: sortingOrder, payload } });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().requestId as string;
}

async function poll(requestId: string): Promise<Polled> {
  return (await t.inject({ url: `${SET}(${requestId})` })).json<Polled>();
}

async function submitAndWait(sortingOrder: number, records: unknown, wrap = true): Promise<Polled> {
  const requestId = await submit(sortingOrder, records, wrap);
  return until(() => poll(requestId), {
    holds: (polled) => ['Completed', 'Failed', 'Cancelled'].includes(polled.status),
    what: `request ${requestId} ended`,
  });
}

const contacts = async () =>
  (await t.service.db.kysely
    .selectFrom('contact' as never)
    .selectAll()
    .orderBy('no' as never)
    .execute()) as unknown as Record<string, unknown>[];

const person = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  person: { name: `Name ${id}` },
  email: `${id}@example.com`,
  age: 30,
  status: 'Open',
  country: 'NO',
  ...extra,
});

describe('processing through the job queue', () => {
  it('goes Pending → Completed, with processedAt and recordCount', async () => {
    const started = Date.now();
    const polled = await submitAndWait(60, [person('A1'), person('A2')]);
    expect(polled).toMatchObject({ status: 'Completed', recordCount: 2, errorMessage: '' });
    expect(Date.parse(polled.processedAt!)).toBeGreaterThanOrEqual(started - 5);
    expect((await contacts()).map((c) => c.no)).toEqual(['A1', 'A2']);
  });

  it.each([
    ['a missing required field', [person('B1'), person('B2', { person: {} })], 'record 2: field "name" is required'],
    [
      'a text that is too long',
      [person('C1', { person: { name: 'x'.repeat(31) } })],
      `record 1: field "name" value "${'x'.repeat(31)}" exceeds 30 characters`,
    ],
    [
      'a value of the wrong type',
      [person('D1'), person('D2'), person('D3', { age: 'thirty' })],
      'record 3: field "age" value "thirty" is not an integer',
    ],
    [
      'an unknown option',
      [person('E1', { status: 'Pending' })],
      'record 1: field "status" value "Pending" is not one of the allowed values: Open, Closed',
    ],
    [
      'a relation that does not exist',
      [person('F1', { country: 'XX' })],
      'record 1: field "country" value "XX" does not exist in table "country" (field "code")',
    ],
    [
      'a code not in capitals (stored as sent, so refused rather than upper-cased)',
      [person('N1'), person('n2')],
      'record 2: field "no" value "n2" is not in capitals (a code is stored as sent, never upper-cased)',
    ],
  ])('fails on %s with an exact errorMessage and writes nothing', async (_what, records, message) => {
    const before = await contacts();
    const polled = await submitAndWait(60, records);
    expect(polled.status).toBe('Failed');
    expect(polled.errorMessage).toBe(message);
    expect(polled.recordCount).toBe(0);
    expect(await contacts()).toEqual(before);
  });

  it('lists the first three errors and counts the rest', async () => {
    const records = Array.from({ length: 6 }, (_, i) => person(`G${i}`, { age: 'x' }));
    const polled = await submitAndWait(60, records);
    expect(polled.errorMessage).toBe(
      'record 1: field "age" value "x" is not an integer; record 2: field "age" value "x" is not an integer; record 3: field "age" value "x" is not an integer; … and 3 more errors',
    );
    const details = (await t.inject({ url: `${SET}(${polled.requestId})/details` })).json();
    expect(details.errors).toHaveLength(6);
    expect(details.errors[5]).toEqual({
      recordNo: 6,
      field: 'age',
      value: '"x"',
      rule: 'is not an integer',
      message: 'record 6: field "age" value "x" is not an integer',
    });
  });

  it('fails a payload whose records path does not hold an array', async () => {
    const polled = await submitAndWait(60, { data: { items: 'none' } }, false);
    expect(polled.status).toBe('Failed');
    expect(polled.errorMessage).toBe('payload: records path "data.items" does not point to an array');
  });

  it('insert refuses an existing key, update refuses a missing one, upsert does both', async () => {
    expect((await submitAndWait(60, [person('H1')])).status).toBe('Completed');

    const dup = await submitAndWait(60, [person('H1')]);
    expect(dup.status).toBe('Failed');
    expect(dup.errorMessage).toBe('record 1: field "no" value "H1" already exists in table "contact"');

    const missing = await submitAndWait(61, [person('H9')]);
    expect(missing.status).toBe('Failed');
    expect(missing.errorMessage).toBe('record 1: field "no" value "H9" does not exist in table "contact" (update needs an existing row)');

    const updated = await submitAndWait(61, [person('H1', { age: 41 })]);
    expect(updated).toMatchObject({ status: 'Completed', recordCount: 1 });

    const upserted = await submitAndWait(62, [person('H1', { age: 42 }), person('H2')]);
    expect(upserted).toMatchObject({ status: 'Completed', recordCount: 2 });
    const details = (await t.inject({ url: `${SET}(${upserted.requestId})/details` })).json();
    expect(details).toMatchObject({ insertedCount: 1, updatedCount: 1, skippedCount: 0 });
    const rows = (await contacts()).filter((c) => String(c.no).startsWith('H'));
    expect(rows.map((r) => [r.no, r.age])).toEqual([
      ['H1', 42],
      ['H2', 30],
    ]);
  });

  it('with on-record-error skip, writes the good records, Completes, and reports the skipped ones', async () => {
    const polled = await submitAndWait(70, [person('K1'), person('K2', { age: 'old' }), person('K3')]);
    expect(polled.status).toBe('Completed');
    expect(polled.recordCount).toBe(2);
    expect(polled.errorMessage).toBe('1 record skipped: record 2: field "age" value "old" is not an integer');
    const details = (await t.inject({ url: `${SET}(${polled.requestId})/details` })).json();
    expect(details).toMatchObject({ insertedCount: 2, skippedCount: 1 });
    expect((await contacts()).filter((c) => String(c.no).startsWith('K')).map((c) => c.no)).toEqual(['K1', 'K3']);
  });

  it('leaves requests Pending while the processor is On Hold, and processes them once Ready', async () => {
    const entry = `${API}/jobQueueEntries('bulk-import-processor')`;
    const hold = await t.inject({ method: 'PATCH', url: entry, payload: { status: 'On Hold' } });
    expect(hold.statusCode, hold.body).toBe(200);
    const requestId = await submit(60, [person('M1')]);
    // The queue, woken by the submission, has its turn (and would wrongly run the processor in it).
    await queueHadItsTurn(t.service.db, () => t.service.queue?.wake());
    expect((await poll(requestId)).status).toBe('Pending');

    const ready = await t.inject({ method: 'PATCH', url: entry, payload: { status: 'Ready' } });
    expect(ready.statusCode).toBe(200);
    const done = await until(() => poll(requestId), {
      holds: (polled) => polled.status === 'Completed',
      what: `request ${requestId} Completed`,
    });
    expect(done.recordCount).toBe(1);
  });
});
