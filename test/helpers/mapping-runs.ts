/**
 * Imports of one payload with and without the mapping thread (src/table-writer/mapped-batches.ts), the
 * payload in chunks and whole, into a table `item` on a test database, for the tests that compare them.
 */
import { expect } from 'vitest';
import type { IntegrationPlan, OnRecordError, WriteMode } from '../../src/integrations/model.js';
import { importPayload, type ImportResult } from '../../src/table-writer/sqlite/importer.js';
import type { ChunkedPayload } from '../../src/table-writer/model.js';
import { createTableSql } from '../../src/tables/ddl.js';
import type { TargetTable } from '../../src/tables/model.js';
import type { TestDatabase } from './db.js';
import { columnsPlan } from './plans.js';

export const item: TargetTable = {
  name: 'item',
  primaryKey: ['id'],
  fields: [
    { name: 'id', type: 'integer' },
    { name: 'name', type: 'text', maxLength: 5, required: true },
    { name: 'qty', type: 'decimal' },
    { name: 'kind', type: 'option', options: ['a', 'b'] },
  ],
};
export const tables = new Map([['item', item]]);

export function plan(writeMode: WriteMode, onRecordError: OnRecordError, recordsPath: string): IntegrationPlan {
  const columns = [
    ['id', 'id'],
    ['name', 'name'],
    ['qty', 'n.qty'],
    ['kind', 'kind'],
  ] as const;
  return columnsPlan('item', columns, { writeMode, onRecordError, recordsPath });
}

/** The payload's UTF-8 bytes in chunks of `step`, read afresh at each call (as stored chunks are). */
export const chunked = (text: string, step: number): ChunkedPayload => {
  const bytes = Buffer.from(text);
  return {
    bytes: bytes.length,
    *chunks() {
      for (let i = 0; i < bytes.length; i += step) yield bytes.subarray(i, i + step);
    },
  };
};

/**
 * 4 000 clean records with one nested 100 deep after the 2 500th: the straight reader (json-records.ts)
 * gives up there, and the mapping thread reads the payload again, passing over the records it sent.
 */
export function tooDeepAmongRecords(): string {
  const records = Array.from({ length: 4000 }, (_, i) => ({ id: i + 2000, name: `n${i % 10}`, n: { qty: i / 8 }, kind: 'a' }));
  const deep = `{"id":1999,"name":"deep","kind":"b","x":${'['.repeat(100)}${']'.repeat(100)}}`;
  return `[${JSON.stringify(records.slice(0, 2500)).slice(1, -1)},${deep},${JSON.stringify(records.slice(2500)).slice(1)}`;
}

export interface Run {
  readonly result: ImportResult;
  readonly rows: unknown[];
}

/** The comparisons, on the database `current()` answers when called (a fresh one per test). */
export function mappingRuns(current: () => TestDatabase) {
  /** One import into a fresh table holding two rows already (an upsert updates one of them). */
  function run(payload: string | ChunkedPayload, p: IntegrationPlan, mapInThread: boolean): Run {
    const t = current();
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

  return { run, expectSameEverywhere };
}
