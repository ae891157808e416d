/** Retention cleanup: ended requests go after retentionDays; waiting and running ones never do. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { runRetentionCleanup } from '../../src/bulk-import/retention.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { insertRequest } from '../helpers/queue-fixtures.js';

const clock = manualClock('2025-06-30T12:00:00.000Z');
const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(clock().getTime() - days * DAY).toISOString();

let t: TestDatabase;
beforeEach(async () => {
  t = await openTestDatabase();
});
afterEach(async () => {
  await t.cleanup();
});

async function remaining(): Promise<string[]> {
  const rows = await t.db.kysely.selectFrom('ifw_bulk_import_request').select('request_id').orderBy('request_id').execute();
  return rows.map((r) => r.request_id);
}

async function addErrors(requestId: string): Promise<void> {
  await t.db.kysely
    .insertInto('ifw_bulk_import_error')
    .values(
      [1, 2].map((seq) => ({ request_id: requestId, seq, record_no: seq, field: 'name', value: null, rule: 'is required', message: 'm' })),
    )
    .execute();
}

describe('runRetentionCleanup', () => {
  it('deletes Completed, Failed and Cancelled requests that ended more than retentionDays ago, with their errors', async () => {
    const ended = (status: string, days: number, id: string) =>
      insertRequest(t.db, { requestId: id, status, submittedAt: daysAgo(days + 1), endedAt: daysAgo(days) });
    await ended('Completed', 31, 'old-completed');
    await ended('Failed', 30.01, 'old-failed');
    await ended('Cancelled', 45, 'old-cancelled');
    await ended('Completed', 29.99, 'recent-completed');
    await ended('Failed', 1, 'recent-failed');
    await ended('Cancelled', 0, 'recent-cancelled');
    await addErrors('old-failed');
    await addErrors('recent-failed');

    const deleted = await runRetentionCleanup(t.db, { now: clock(), retentionDays: 30 });

    expect(deleted).toBe(3);
    expect(await remaining()).toEqual(['recent-cancelled', 'recent-completed', 'recent-failed']);
    const errors = await t.db.kysely.selectFrom('ifw_bulk_import_error').select('request_id').distinct().execute();
    expect(errors.map((e) => e.request_id)).toEqual(['recent-failed']);
  });

  it('never deletes Pending or Processing requests, however old', async () => {
    await insertRequest(t.db, { requestId: 'ancient-pending', status: 'Pending', submittedAt: daysAgo(400) });
    await insertRequest(t.db, {
      requestId: 'ancient-processing',
      status: 'Processing',
      submittedAt: daysAgo(400),
      leaseOwner: 'w',
      leaseExpiresAt: daysAgo(399),
      // Even with an ended_at left over from somewhere, the status protects it.
      endedAt: daysAgo(399),
    });

    expect(await runRetentionCleanup(t.db, { now: clock(), retentionDays: 30 })).toBe(0);
    expect(await remaining()).toEqual(['ancient-pending', 'ancient-processing']);
  });

  it('follows the clock: a request kept today is deleted once it is old enough', async () => {
    await insertRequest(t.db, { requestId: 'r', status: 'Completed', submittedAt: daysAgo(11), endedAt: daysAgo(10) });

    expect(await runRetentionCleanup(t.db, { now: clock(), retentionDays: 30 })).toBe(0);
    clock.advance(21 * DAY);
    expect(await runRetentionCleanup(t.db, { now: clock(), retentionDays: 30 })).toBe(1);
    expect(await remaining()).toEqual([]);
  });

  it('deletes more requests than one batch holds', async () => {
    for (let i = 0; i < 25; i++) await insertRequest(t.db, { status: 'Completed', submittedAt: daysAgo(41), endedAt: daysAgo(40) });

    expect(await runRetentionCleanup(t.db, { now: clock(), retentionDays: 30, batchSize: 10 })).toBe(25);
    expect(await remaining()).toEqual([]);
  });
});
