/** Where a run's record came from (src/rest-source/record-origins.ts): page and place, from the pages' record counts. */
import { describe, expect, it } from 'vitest';
import { RecordOrigins } from '../../src/rest-source/record-origins.js';
import { payloadError, recordError } from '../../src/mapping/messages.js';
import { failedOutcome } from '../../src/table-writer/tally.js';

function origins(...counts: number[]): RecordOrigins {
  const o = new RecordOrigins();
  counts.forEach((count, i) => o.add(i + 1, count));
  return o;
}

describe('RecordOrigins', () => {
  it.each([
    [1, { pageNo: 1, position: 1 }],
    [10, { pageNo: 1, position: 10 }],
    [11, { pageNo: 3, position: 1 }], // page 2 is empty
    [12, { pageNo: 3, position: 2 }],
    [25, { pageNo: 4, position: 5 }],
    [26, undefined],
    [0, undefined],
  ])('record %i', (recordNo, origin) => {
    expect(origins(10, 0, 10, 5).locate(recordNo)).toEqual(origin);
  });

  it('adds the origin to record errors and words the message again; payload errors stay as they are', () => {
    const o = origins(10, 10, 5);
    const errors = [recordError(12, 'name', null, 'is required'), recordError(25, 'id', '25', 'already exists in table "item"')];
    expect(o.locatedOutcome(failedOutcome(errors, 7)).errorMessage).toBe(
      'record 12 (page 2, record 2): field "name" is required; record 25 (page 3, record 5): field "id" value 25 already exists in table "item"; … and 5 more errors',
    );
    const skipped = { ...failedOutcome(errors.slice(0, 1), 1), ok: true, skipped: 1 };
    expect(o.locatedOutcome(skipped).errorMessage).toBe('1 record skipped: record 12 (page 2, record 2): field "name" is required');
    const whole = failedOutcome([payloadError('is not writable', 'table "item" is not writable')], 1);
    expect(o.locatedOutcome(whole)).toEqual(whole);
  });
});
