/**
 * The highest cursor field value among a run's records (rest-source/cursor-values.ts), followed page by
 * page as the records are staged: what the run's bookmark becomes when its import commits. A record
 * without the field (or with null) is passed over; a value that is not of the field's type fails the
 * run, because a bookmark that cannot be trusted would lose records.
 */
import { compileLookup } from '../json-path/lookup.js';
import { compareCursorValues, cursorValueOf, type IncrementalSettings } from '../rest-source/cursor-values.js';
import type { BookmarkMove } from './complete-run.js';

export interface CursorTracker {
  /** The page's records; the reason the run fails when a value is not of the field's type, else null. */
  add(pageNo: number, records: readonly unknown[]): string | null;
  /** The endpoint's bookmark move for a run that started at `startedAt`. */
  move(endpointCode: string, startedAt: string): BookmarkMove;
}

export function cursorTracker(incremental: IncrementalSettings | null | undefined, from: string | null): CursorTracker {
  let highest = from;
  const lookup = incremental === null || incremental === undefined ? null : compileLookup(incremental.cursorField);
  return {
    add(pageNo, records) {
      if (lookup === null || incremental === null || incremental === undefined) return null;
      const type = incremental.cursorFieldType;
      for (const [i, record] of records.entries()) {
        const found = lookup(record);
        if (found.kind === 'none' || (found.kind === 'one' && found.value === null)) continue;
        const value = found.kind === 'one' ? cursorValueOf(found.value, type) : { problem: `the path finds ${found.count} values` };
        if ('problem' in value)
          return `page ${pageNo}, record ${i + 1}: cursorField "${incremental.cursorField}" (${type}): ${value.problem}; the bookmark would not be reliable, so nothing is imported`;
        if (highest === null || compareCursorValues(value.value, highest, type) > 0) highest = value.value;
      }
      return null;
    },
    move: (endpointCode, startedAt) => ({ endpointCode, startedAt, from, to: lookup === null ? null : highest }),
  };
}
