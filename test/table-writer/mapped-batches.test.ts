/**
 * The mapping thread (src/table-writer/mapped-batches.ts): a payload parsed and mapped on another
 * thread while the importing thread inserts imports exactly as on one thread (same outcome, same
 * messages, same rows), whatever the payload, its errors, where it is cut into chunks, the write mode
 * and the record error mode; an import that stops early or whose chunks cannot be read leaves the
 * thread ready for the next one.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IntegrationPlan, OnRecordError, WriteMode } from '../../src/integrations/model.js';
import { mappedBatches, mapsInThread } from '../../src/table-writer/mapped-batches.js';
import { importPayload, type ImportResult } from '../../src/table-writer/sqlite/importer.js';
import type { ChunkedPayload } from '../../src/table-writer/model.js';
import { compileMapping } from '../../src/mapping/engine.js';
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
    { name: 'qty', type: 'decimal' },
    { name: 'kind', type: 'option', options: ['a', 'b'] },
  ],
};
const tables = new Map([['item', item]]);

function plan(writeMode: WriteMode, onRecordError: OnRecordError, recordsPath: string): IntegrationPlan {
  const columns = [
    ['id', 'id'],
    ['name', 'name'],
    ['qty', 'n.qty'],
    ['kind', 'kind'],
  ] as const;
  return columnsPlan('item', columns, { writeMode, onRecordError, recordsPath });
}

let t: TestDatabase;
beforeEach(async () => {
  t = await openTestDatabase();
});
afterEach(async () => {
  await t.cleanup();
});

/** The payload's UTF-8 bytes in chunks of `step`, read afresh at each call (as stored chunks are). */
const chunked = (text: string, step: number): ChunkedPayload => {
  const bytes = Buffer.from(text);
  return {
    bytes: bytes.length,
    *chunks() {
      for (let i = 0; i < bytes.length; i += step) yield bytes.subarray(i, i + step);
    },
  };
};

interface Run {
  readonly result: ImportResult;
  readonly rows: unknown[];
}

/** One import into a fresh table holding two rows already (an upsert updates one of them). */
function run(payload: string | ChunkedPayload, p: IntegrationPlan, mapInThread: boolean): Run {
  t.db.sqlite.exec('drop table if exists item');
  t.db.sqlite.exec(createTableSql(item, 'sqlite'));
  t.db.sqlite.exec(`insert into item (id, name) values (1, 'old'), (900, 'old')`);
  const result = importPayload(t.db.sqlite, { plan: p, tables, payload, mapInThread }, () => true);
  return { result, rows: t.db.sqlite.prepare('select * from item order by id').all() };
}

/** "is not valid JSON" is worded by the parser that found it: JSON.parse for a text, the streaming readers for chunks. */
function kindOfJsonError({ result, rows }: Run): Run {
  const { outcome } = result;
  const notJson = outcome.errors.some((e) => e.rule === 'is not valid JSON');
  if (!notJson) return { result, rows };
  const message = 'payload is not valid JSON: …';
  return {
    result: { ...result, outcome: { ...outcome, errorMessage: message, errors: outcome.errors.map((e) => ({ ...e, message })) } },
    rows,
  };
}

/**
 * Imports with and without the mapping thread, the payload in chunks and whole; they must agree. The
 * mapping thread reads a text as chunks of 1 MB, so its answers are those chunks' (which differ from
 * those of a text read whole on this thread only in how "not valid JSON" is worded, and that wording
 * also depends on where the chunks are cut).
 */
function expectSameEverywhere(text: string, p: IntegrationPlan, step: number): Run {
  const streamed = run(chunked(text, step), p, false);
  expect(run(chunked(text, step), p, true), `chunks of ${step} bytes, mapping thread`).toEqual(streamed);
  const alone = run(text, p, false);
  // A text with half a surrogate pair (which UTF-8 cannot carry) stays on this thread.
  const wellFormed = (text as unknown as { isWellFormed(): boolean }).isWellFormed();
  expect(run(text, p, true), 'text, mapping thread').toEqual(wellFormed ? run(chunked(text, 1 << 20), p, false) : alone);
  expect(kindOfJsonError(alone), 'text on this thread').toEqual(kindOfJsonError(streamed));
  return alone;
}

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
    const records = Array.from({ length: 12_345 }, (_, i) => {
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

  it('agrees with one thread on any payload, damaged or not, cut anywhere', () => {
    const record = fc.oneof(
      fc.record(
        {
          id: fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constant(900), fc.string({ maxLength: 2 })),
          name: fc.oneof(fc.string({ maxLength: 7 }), fc.constant('é😀'), fc.integer()),
          n: fc.record(
            { qty: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 3 })) },
            { requiredKeys: [] },
          ),
          kind: fc.constantFrom('a', 'b', 'c'),
        },
        { requiredKeys: ['id'] },
      ),
      fc.jsonValue({ maxDepth: 2 }),
    );
    const texts = fc.oneof(
      fc.array(record, { maxLength: 12 }).map((rs) => JSON.stringify(rs)),
      fc.array(record, { maxLength: 12 }).map((rs) => JSON.stringify({ data: { items: rs } })),
      fc.constantFrom('[]', ' [ ] ', '{}', '5', 'null', '{"data":{"items":{}}}', '{"data":{}}', '[1e400]', '[{"id":12345678901234567}]'),
    );
    const damaged = fc
      .tuple(texts, fc.nat(), fc.constantFrom('', ',', ']', '[', '}', '"', '\\', 'x', ' '))
      .map(([text, at, edit]) => text.slice(0, at % Math.max(1, text.length)) + edit + text.slice((at % Math.max(1, text.length)) + 1));
    fc.assert(
      fc.property(
        fc.oneof(texts, damaged),
        fc.constantFrom('', 'data.items'),
        fc.constantFrom<[WriteMode, OnRecordError]>(['insert', 'fail'], ['insert', 'skip'], ['upsert', 'skip'], ['update', 'fail']),
        fc.integer({ min: 1, max: 40 }),
        (text, recordsPath, [mode, onError], step) => {
          expectSameEverywhere(text, plan(mode, onError, recordsPath), step);
        },
      ),
      { numRuns: 300, seed: 20261125 },
    );
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
