/**
 * The mapping thread (src/table-writer/mapped-batches.ts): a payload parsed and mapped on another
 * thread while the importing thread inserts imports exactly as on one thread (same outcome, same
 * messages, same rows), whatever the payload, its errors, where it is cut into chunks, the write mode
 * and the record error mode (on payloads fast-check makes: mapped-batches-fuzz.slow.test.ts); an import that stops early or whose chunks cannot be read leaves the
 * thread ready for the next one.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mappedBatches, mapsInThread } from '../../src/table-writer/mapped-batches.js';
import { compileMapping } from '../../src/mapping/engine.js';
import { importPayload } from '../../src/table-writer/sqlite/importer.js';
import type { ChunkedPayload } from '../../src/table-writer/model.js';
import { createTableSql } from '../../src/tables/ddl.js';
import type { TargetTable } from '../../src/tables/model.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { chunked, item, mappingRuns, plan, tables, tooDeepAmongRecords } from '../helpers/mapping-runs.js';

let t: TestDatabase;
beforeEach(async () => {
  t = await openTestDatabase();
});
afterEach(async () => {
  await t.cleanup();
});
const { run, expectSameEverywhere } = mappingRuns(() => t);

describe('the mapping thread', () => {
  it('is used for a large payload without relations, and never where the records need the database or are not streamable', () => {
    const p = plan('insert', 'fail', '');
    const mapping = compileMapping(p, tables);
    const large = `[${'{"id":1,"name":"a"},'.repeat(60_000)}{"id":2,"name":"b"}]`;
    expect(mapsInThread({ plan: p, tables, payload: large }, mapping)).toBe(true);
    expect(mapsInThread({ plan: p, tables, payload: '[]' }, mapping)).toBe(false);
    expect(mapsInThread({ plan: p, tables, payload: chunked('[]', 1) }, mapping)).toBe(true);
    expect(mapsInThread({ plan: p, tables, payload: '[]', mapInThread: true }, mapping)).toBe(true);
    expect(mapsInThread({ plan: p, tables, payload: `${large}\ud800`, mapInThread: true }, mapping)).toBe(false);

    const related: TargetTable = {
      ...item,
      fields: [...item.fields.slice(0, 3), { name: 'kind', type: 'integer', relation: { table: 'item', field: 'id' } }],
    };
    const withRelation = new Map([['item', related]]);
    const relatedMapping = compileMapping(p, withRelation);
    expect(mapsInThread({ plan: p, tables: withRelation, payload: chunked('[]', 1) }, relatedMapping)).toBe(false);

    const oddPath = plan('insert', 'fail', '$["a.b"]');
    expect(mapsInThread({ plan: oddPath, tables, payload: chunked('[]', 1) }, compileMapping(oddPath, tables))).toBe(false);
  });

  it('imports thousands of records in many batches as one thread does, errors and all', () => {
    // Five batches of the mapping thread's 1000 records, each kind of error in more than one of them.
    const records = Array.from({ length: 4_321 }, (_, i) => {
      if (i % 997 === 5) return { id: i + 2, name: 'too long', kind: 'c' };
      if (i % 1500 === 7) return 'not a record';
      return { id: i % 3000 === 11 ? 900 : i + 2, name: `n${i % 1000}`, n: { qty: i / 4 }, kind: i % 2 === 0 ? 'a' : 'b' };
    });
    const text = JSON.stringify(records);
    for (const [mode, onError] of [
      ['insert', 'skip'],
      ['upsert', 'skip'],
      ['insert', 'fail'],
      ['update', 'skip'],
    ] as const) {
      const alone = expectSameEverywhere(text, plan(mode, onError, ''), 100_000);
      expect(alone.result.outcome.errorCount).toBeGreaterThan(0);
      if (mode !== 'update' && onError === 'skip') expect(alone.result.outcome.recordCount).toBeGreaterThan(1000);
    }
    const deep = JSON.stringify({ meta: { n: 1 }, data: { items: records } });
    expectSameEverywhere(deep, plan('upsert', 'skip', 'data.items'), 65_536);
  });

  it('reads the records again where the straight reader gives up (nesting too deep), and imports them as one thread does', () => {
    const text = tooDeepAmongRecords();
    for (const [mode, onError] of [
      ['insert', 'fail'],
      ['upsert', 'skip'],
    ] as const) {
      const alone = expectSameEverywhere(text, plan(mode, onError, ''), 50_000);
      expect(alone.result).toMatchObject({ committed: true, outcome: { ok: true, recordCount: 4001 } });
    }
  });

  it('stops mapping when the import leaves early, and maps the next import from the start', () => {
    const p = plan('insert', 'fail', '');
    const text = JSON.stringify(Array.from({ length: 50_000 }, (_, i) => ({ id: i + 1000, name: 'n' })));
    const batches = mappedBatches({ plan: p, tables, payload: chunked(text, 4096) });
    const first = batches.next();
    expect(first.done).toBe(false);
    batches.return();

    const again = run(chunked(text, 65_536), p, true);
    expect(again.result.outcome).toMatchObject({ ok: true, inserted: 50_000 });
  });

  it('fails the import with the error of a chunk that cannot be read, and maps the next one', () => {
    const p = plan('insert', 'fail', '');
    const text = JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ id: i + 1000, name: 'n' })));
    const bytes = Buffer.from(text);
    const broken: ChunkedPayload = {
      bytes: bytes.length,
      *chunks() {
        yield bytes.subarray(0, 20_000);
        throw new Error('chunk 1 of request r is missing');
      },
    };
    t.db.sqlite.exec(createTableSql(item, 'sqlite'));
    expect(() => importPayload(t.db.sqlite, { plan: p, tables, payload: broken, mapInThread: true }, () => true)).toThrow(
      'chunk 1 of request r is missing',
    );
    expect(t.db.sqlite.prepare('select count(*) from item').pluck().get()).toBe(0);

    expect(run(chunked(text, 1000), p, true).result.outcome).toMatchObject({ ok: true, inserted: 5000 });
  });
});
