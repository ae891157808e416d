/**
 * The mapping thread against one thread on payloads fast-check makes, damaged or not, cut into chunks
 * anywhere (300 runs): the property behind test/table-writer/mapped-batches.test.ts.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, it } from 'vitest';
import type { OnRecordError, WriteMode } from '../../src/integrations/model.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { mappingRuns, plan } from '../helpers/mapping-runs.js';

let t: TestDatabase;
beforeEach(async () => {
  t = await openTestDatabase();
});
afterEach(async () => {
  await t.cleanup();
});
const { expectSameEverywhere } = mappingRuns(() => t);

describe('the mapping thread', () => {
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
    // 300 runs of four imports each: seconds on an idle machine, more on a busy one.
  }, 120_000);
});
