/**
 * Time-ordered ids (src/core/uuid7.ts): UUID version 7 with the millisecond in front, and ids made in
 * the same millisecond in the order they were made.
 */
import { describe, expect, it } from 'vitest';
import { newTimeOrderedId } from '../../src/core/uuid7.js';

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisecondOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('time-ordered ids', () => {
  it('are version 7 with the millisecond in front', () => {
    const ms = Date.UTC(2026, 10, 27, 9, 0, 0, 123);
    const id = newTimeOrderedId(ms);
    expect(id).toMatch(UUID7);
    expect(millisecondOf(id)).toBe(ms);
  });

  it('follow each other within one millisecond, in the order they were made', () => {
    const ms = Date.UTC(2026, 10, 27, 9, 0, 1);
    const ids = Array.from({ length: 1000 }, () => newTimeOrderedId(ms));
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) {
      expect(id).toMatch(UUID7);
      expect(millisecondOf(id)).toBe(ms);
    }
  });

  it('start afresh in a new millisecond, and at an earlier one (a clock set back) take that millisecond', () => {
    const ms = Date.UTC(2026, 10, 27, 9, 0, 2);
    const a = newTimeOrderedId(ms);
    const b = newTimeOrderedId(ms + 1);
    expect(millisecondOf(b)).toBe(ms + 1);
    expect(b > a).toBe(true);
    const earlier = newTimeOrderedId(ms - 60_000);
    expect(millisecondOf(earlier)).toBe(ms - 60_000);
  });
});
