import { describe, expect, it } from 'vitest';
import { computeBackoff, excerpt, MAX_BACKOFF_MS, MAX_RETRY_AFTER_MS, parseRetryAfter } from '../../src/rest-source/http-client.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const policy = { maxRetries: 5, initialDelayMs: 500 };

describe('computeBackoff', () => {
  it.each([
    // attempt, Retry-After, random, expected ms
    { why: 'first retry, no jitter drawn low', attempt: 1, retryAfter: null, random: 0, expected: 250 },
    { why: 'first retry, jitter drawn high', attempt: 1, retryAfter: null, random: 0.999999, expected: 500 },
    { why: 'doubles per retry', attempt: 2, retryAfter: null, random: 0.5, expected: 750 },
    { why: 'doubles again', attempt: 3, retryAfter: null, random: 0.5, expected: 1500 },
    { why: 'capped at MAX_BACKOFF_MS', attempt: 12, retryAfter: null, random: 0.999999, expected: MAX_BACKOFF_MS },
    { why: 'cap applies before jitter', attempt: 12, retryAfter: null, random: 0, expected: MAX_BACKOFF_MS / 2 },
    { why: 'Retry-After seconds win over backoff', attempt: 1, retryAfter: '3', random: 0.9, expected: 3000 },
    { why: 'Retry-After 0 retries at once', attempt: 4, retryAfter: '0', random: 0.9, expected: 0 },
    { why: 'Retry-After HTTP date', attempt: 1, retryAfter: 'Thu, 01 Jan 2026 00:00:45 GMT', random: 0.9, expected: 45_000 },
    { why: 'Retry-After date in the past', attempt: 1, retryAfter: 'Wed, 31 Dec 2025 23:00:00 GMT', random: 0.9, expected: 0 },
    { why: 'Retry-After over the cap is shortened', attempt: 1, retryAfter: '3600', random: 0.9, expected: MAX_RETRY_AFTER_MS },
    { why: 'unreadable Retry-After falls back to backoff', attempt: 1, retryAfter: 'soon', random: 0, expected: 250 },
    { why: 'negative Retry-After is unreadable', attempt: 2, retryAfter: '-5', random: 0, expected: 500 },
  ])('$why', ({ attempt, retryAfter, random, expected }) => {
    expect(computeBackoff(attempt, policy, retryAfter, NOW, random)).toBe(expected);
  });

  it('waits nothing with an initial delay of 0', () => {
    expect(computeBackoff(3, { maxRetries: 3, initialDelayMs: 0 }, null, NOW, 0.7)).toBe(0);
  });
});

describe('parseRetryAfter', () => {
  it.each([
    [null, null],
    ['120', 120_000],
    [' 5 ', 5_000],
    ['1.5', null],
    ['Thu, 01 Jan 2026 00:01:00 GMT', 60_000],
    ['garbage', null],
  ])('%s → %s', (header, ms) => {
    expect(parseRetryAfter(header, NOW)).toBe(ms);
  });
});

describe('excerpt', () => {
  it('keeps a short body on one line', () => {
    expect(excerpt('{\n  "error": "bad"\n}')).toBe('{ "error": "bad" }');
  });
  it('cuts a long body at 500 characters', () => {
    expect(excerpt('y'.repeat(800))).toBe(`${'y'.repeat(500)}…`);
  });
});
