/** importRecordBatches: the importer over record arrays in batches, sharing importPayload's core. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importPayload, importRecordBatches, type ImportOutcome } from '../../src/table-writer/sqlite/importer.js';
import type { IntegrationPlan, OnRecordError } from '../../src/integrations/model.js';
import { createTableSql } from '../../src/tables/ddl.js';
import type { TargetTable } from '../../src/tables/model.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { columnsPlan } from '../helpers/plans.js';

const item: TargetTable = {
  name: 'item',
  primaryKey: ['id'],
  fields: [
    { name: 'id', type: 'integer' },
    { name: 'name', type: 'text', maxLength: 5, required: true },
    { name: 'parentId', type: 'integer', relation: { table: 'item', field: 'id' } },
  ],
};
const tables = new Map([['item', item]]);

function plan(onRecordError: OnRecordError = 'fail', recordsPath = ''): IntegrationPlan {
  const columns = [
    ['id', 'id'],
    ['name', 'name'],
    ['parentId', 'parent'],
  ] as const;
  return columnsPlan('item', columns, { onRecordError, recordsPath, acceptBulkImportRequests: false });
}

let t: TestDatabase;
beforeEach(async () => {
  t = await openTestDatabase();
  t.db.sqlite.exec(createTableSql(item, 'sqlite'));
});
afterEach(async () => {
  await t.cleanup();
});

const ids = (): number[] => t.db.sqlite.prepare('select id from item order by id').pluck().all() as number[];
const items = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ({ id: from + i, name: `n${from + i}` }));

function runBatches(batches: Iterable<readonly unknown[]>, onRecordError: OnRecordError = 'fail', finishResult = true) {
  const seen: ImportOutcome[] = [];
  const result = importRecordBatches(t.db.sqlite, { plan: plan(onRecordError), tables, batches }, (outcome) => {
    seen.push(outcome);
    return finishResult;
  });
  return { ...result, seen };
}

describe('importRecordBatches', () => {
  it('writes every record of every batch in one transaction, finish called once inside it', () => {
    const { committed, outcome, seen } = runBatches([items(1, 120), [], items(121, 130)]);

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
    expect(ids()).toHaveLength(130);
  });

  it('numbers records on across batches, so an error names the record as in one payload', () => {
    const batches = [items(1, 3), [{ id: 4, name: 'too long' }], [{ id: 5 }]];
    const { outcome } = runBatches(batches);

    expect(outcome.ok).toBe(false);
    expect(outcome.errorMessage).toBe('record 4: field "name" value "too long" exceeds 5 characters; record 5: field "name" is required');
    expect(ids()).toEqual([]);
  });

  it('gives the same outcome as importPayload for the same records', () => {
    const records = [...items(1, 60), { id: 61, name: 'far too long' }, { id: 3, name: 'dup' }, { id: 62, name: 'x', parent: 61 }];
    const fromBatches = runBatches([records.slice(0, 7), records.slice(7, 61), records.slice(61)], 'skip').outcome;
    const batchIds = ids();
    t.db.sqlite.exec('delete from item');

    const fromPayload = importPayload(t.db.sqlite, { plan: plan('skip'), tables, payload: JSON.stringify(records) }, () => true).outcome;

    expect(fromBatches).toEqual(fromPayload);
    expect(fromBatches).toMatchObject({ ok: true, inserted: 60, skipped: 3 });
    expect(ids()).toEqual(batchIds);
  });

  it('sees rows of earlier batches when checking relations', () => {
    const { outcome } = runBatches([[{ id: 1, name: 'a' }], [{ id: 2, name: 'b', parent: 1 }]]);
    expect(outcome).toMatchObject({ ok: true, inserted: 2 });
  });

  it('reads a lazy source batch by batch, inside the transaction', () => {
    const pulled: number[] = [];
    function* lazy(): Generator<readonly unknown[]> {
      for (let b = 0; b < 3; b++) {
        pulled.push(b);
        yield items(b * 10 + 1, b * 10 + 10);
      }
    }
    const { outcome } = runBatches(lazy());
    expect(pulled).toEqual([0, 1, 2]);
    expect(outcome.recordCount).toBe(30);
  });

  it('rolls everything back when finish reports the lease lost', () => {
    const { committed, outcome } = runBatches([items(1, 10)], 'fail', false);
    expect(committed).toBe(false);
    expect(outcome.ok).toBe(true);
    expect(ids()).toEqual([]);
  });

  it('rolls everything back and rethrows when the batch source throws', () => {
    function* broken(): Generator<readonly unknown[]> {
      yield items(1, 10);
      throw new Error('staged page unreadable');
    }
    expect(() => runBatches(broken())).toThrow('staged page unreadable');
    expect(ids()).toEqual([]);
  });

  it('does not apply the integration records path: each batch is the record array', () => {
    const result = importRecordBatches(t.db.sqlite, { plan: plan('fail', 'data'), tables, batches: [items(1, 2)] }, () => true);
    expect(result.outcome).toMatchObject({ ok: true, inserted: 2 });
  });

  it('fails with the payload-level message when the integration is broken, before reading a batch', () => {
    const broken: IntegrationPlan = { ...plan(), mappings: [] };
    let read = false;
    function* source(): Generator<readonly unknown[]> {
      read = true;
      yield items(1, 1);
    }
    const { outcome } = importRecordBatches(t.db.sqlite, { plan: broken, tables, batches: source() }, () => true);
    expect(outcome).toMatchObject({ ok: false, errorMessage: 'integration 1 has no mappings' });
    expect(read).toBe(false);
  });
});
