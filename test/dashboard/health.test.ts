/** The dashboard's health line: the worst level wins, every reason is said, green says what is well. */
import { describe, expect, it } from 'vitest';
import { healthOf, type Health, type HealthInput } from '../../src/dashboard/health.js';

const ready = [
  { description: 'Bulk Import Processor', status: 'Ready' },
  { description: 'Import Run Processor', status: 'Ready' },
];
const m = (entries: Record<string, number>) => new Map(Object.entries(entries));

const CASES: readonly [string, HealthInput, Health][] = [
  [
    'nothing at all',
    { requests: m({}), runs: m({}), entries: ready },
    { level: 'green', reasons: ['Nothing failed; no imports in the last 24 h'] },
  ],
  [
    'every request completed',
    { requests: m({ Completed: 12 }), runs: m({}), entries: ready },
    { level: 'green', reasons: ['All requests completed'] },
  ],
  [
    'requests in progress, none failed',
    { requests: m({ Completed: 3, Pending: 2, Processing: 1 }), runs: m({}), entries: ready },
    { level: 'green', reasons: ['No failures in the last 24 h; 3 requests in progress'] },
  ],
  [
    'one request failed',
    { requests: m({ Completed: 3, Failed: 1 }), runs: m({}), entries: ready },
    { level: 'red', reasons: ['1 request Failed in the last 24 h'] },
  ],
  [
    'requests and runs failed, and an entry On Hold',
    {
      requests: m({ Failed: 2 }),
      runs: m({ Failed: 1, Completed: 4 }),
      entries: [{ description: 'Bulk Import Processor', status: 'On Hold' }],
    },
    {
      level: 'red',
      reasons: [
        '2 requests Failed in the last 24 h',
        '1 import run Failed in the last 24 h',
        'job queue entry Bulk Import Processor is On Hold',
      ],
    },
  ],
  [
    'an entry On Hold, another in Error',
    {
      requests: m({ Completed: 1 }),
      runs: m({}),
      entries: [
        { description: 'Bulk Import Processor', status: 'On Hold' },
        { description: 'Import Run Processor', status: 'Error' },
      ],
    },
    {
      level: 'amber',
      reasons: ['job queue entry Bulk Import Processor is On Hold', 'job queue entry Import Run Processor is in Error'],
    },
  ],
  [
    'runs completed with warnings',
    { runs: m({ Completed: 3 }), runsWithWarnings: 2, entries: ready },
    { level: 'amber', reasons: ['2 import runs completed with warnings in the last 24 h'] },
  ],
  [
    'a user who does not see requests: runs only',
    { runs: m({ Completed: 2 }), entries: ready },
    { level: 'green', reasons: ['No failures in the last 24 h'] },
  ],
  [
    'cancelled requests are no failure, but not "all completed" either',
    { requests: m({ Completed: 1, Cancelled: 1 }), runs: m({}), entries: ready },
    { level: 'green', reasons: ['No failures in the last 24 h'] },
  ],
];

describe('the health line', () => {
  it.each(CASES)('%s', (_, input, expected) => {
    expect(healthOf(input)).toEqual(expected);
  });
});
