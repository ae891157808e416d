/** The request lease transitions: claim, complete, fail, heartbeat, reap. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimNextRequest } from '../../src/bulk-import/claim-request.js';
import { completeRequest } from '../../src/bulk-import/complete-request.js';
import { failRequest } from '../../src/bulk-import/fail-request.js';
import { heartbeatRequest } from '../../src/bulk-import/heartbeat-request.js';
import { reapExpiredLeases } from '../../src/bulk-import/reap-expired-requests.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { getRequest, insertRequest } from '../helpers/queue-fixtures.js';

const T0 = new Date('2025-03-01T10:00:00.000Z');
const LEASE_MS = 60_000;
const at = (ms: number) => new Date(T0.getTime() + ms);

let t: TestDatabase;
beforeEach(async () => {
  t = await openTestDatabase();
});
afterEach(async () => {
  await t.cleanup();
});

const counts = { recordCount: 3, inserted: 2, updated: 1, skipped: 0 };

describe('claimNextRequest', () => {
  it('takes the oldest Pending request, sets the lease and counts the attempt', async () => {
    const newer = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:02.000Z' });
    const older = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:01.000Z' });

    const claimed = await claimNextRequest(t.db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });

    expect(claimed).toMatchObject({ requestId: older, attempts: 1, leaseOwner: 'w1', leaseExpiresAt: '2025-03-01T10:01:00.000Z' });
    const row = await getRequest(t.db, older);
    expect(row).toMatchObject({ status: 'Processing', lease_owner: 'w1', started_at: T0.toISOString(), attempts: 1 });
    expect((await getRequest(t.db, newer)).status).toBe('Pending');
  });

  it('gives a second claim the next request and then nothing', async () => {
    const first = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:01.000Z' });
    const second = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:02.000Z' });

    const a = await claimNextRequest(t.db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });
    const b = await claimNextRequest(t.db, { owner: 'w2', now: T0, leaseMs: LEASE_MS });
    const c = await claimNextRequest(t.db, { owner: 'w3', now: T0, leaseMs: LEASE_MS });

    expect([a?.requestId, b?.requestId, c]).toEqual([first, second, undefined]);
  });

  it('never hands the same request to two claimers, however many ask at once', async () => {
    for (let i = 0; i < 20; i++) await insertRequest(t.db, { submittedAt: `2025-03-01T09:00:${String(i).padStart(2, '0')}.000Z` });
    const claims = await Promise.all(
      Array.from({ length: 30 }, (_, i) => claimNextRequest(t.db, { owner: `w${i}`, now: T0, leaseMs: LEASE_MS })),
    );
    const ids = claims.flatMap((c) => (c === undefined ? [] : [c.requestId]));
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });

  it('skips requests that are not Pending', async () => {
    await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:01.000Z', status: 'Cancelled' });
    await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:02.000Z', status: 'Completed' });
    expect(await claimNextRequest(t.db, { owner: 'w1', now: T0, leaseMs: LEASE_MS })).toBeUndefined();
  });
});

describe('completeRequest and failRequest are fenced by the lease token', () => {
  it('completes the request of the lease owner: counts, processedAt, endedAt, lease cleared', async () => {
    const id = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:00.000Z' });
    await claimNextRequest(t.db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });

    expect(completeRequest(t.db, { requestId: id, owner: 'w1', now: at(500), ...counts })).toBe(true);

    expect(await getRequest(t.db, id)).toMatchObject({
      status: 'Completed',
      processed_at: at(500).toISOString(),
      ended_at: at(500).toISOString(),
      record_count: 3,
      inserted_count: 2,
      updated_count: 1,
      skipped_count: 0,
      error_message: '',
      lease_owner: null,
      lease_expires_at: null,
    });
  });

  it('fails the request of the lease owner with its message', async () => {
    const id = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:00.000Z' });
    await claimNextRequest(t.db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });

    expect(failRequest(t.db, { requestId: id, owner: 'w1', now: at(500), errorMessage: 'record 1: field "name" is required' })).toBe(true);

    expect(await getRequest(t.db, id)).toMatchObject({
      status: 'Failed',
      processed_at: at(500).toISOString(),
      ended_at: at(500).toISOString(),
      record_count: 0,
      error_message: 'record 1: field "name" is required',
      lease_owner: null,
    });
  });

  it('changes nothing for a worker whose lease was taken over', async () => {
    const id = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:00.000Z' });
    await claimNextRequest(t.db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });
    // w1's lease expired, the reaper returned the request, w2 claimed it.
    await reapExpiredLeases(t.db, { now: at(LEASE_MS + 1), maxAttempts: 3 });
    await claimNextRequest(t.db, { owner: 'w2', now: at(LEASE_MS + 2), leaseMs: LEASE_MS });

    expect(completeRequest(t.db, { requestId: id, owner: 'w1', now: at(LEASE_MS + 3), ...counts })).toBe(false);
    expect(failRequest(t.db, { requestId: id, owner: 'w1', now: at(LEASE_MS + 3), errorMessage: 'late' })).toBe(false);

    expect(await getRequest(t.db, id)).toMatchObject({ status: 'Processing', lease_owner: 'w2', attempts: 2, error_message: '' });
  });

  it('cannot complete or fail a request an administrator cancelled or reset meanwhile', async () => {
    const cancelled = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:01.000Z' });
    const reset = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:02.000Z' });
    await claimNextRequest(t.db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });
    await claimNextRequest(t.db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });
    t.db.sqlite.prepare(`update ifw_bulk_import_request set status = 'Cancelled', lease_owner = null where request_id = ?`).run(cancelled);
    t.db.sqlite.prepare(`update ifw_bulk_import_request set status = 'Pending', lease_owner = null where request_id = ?`).run(reset);

    expect(completeRequest(t.db, { requestId: cancelled, owner: 'w1', now: at(1), ...counts })).toBe(false);
    expect(failRequest(t.db, { requestId: reset, owner: 'w1', now: at(1), errorMessage: 'x' })).toBe(false);

    expect((await getRequest(t.db, cancelled)).status).toBe('Cancelled');
    expect((await getRequest(t.db, reset)).status).toBe('Pending');
  });
});

describe('heartbeatRequest', () => {
  it('extends the lease while it is still owned and reports a lost one', async () => {
    const id = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:00.000Z' });
    await claimNextRequest(t.db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });

    expect(await heartbeatRequest(t.db, { requestId: id, owner: 'w1', now: at(30_000), leaseMs: LEASE_MS })).toBe(true);
    expect((await getRequest(t.db, id)).lease_expires_at).toBe(at(90_000).toISOString());

    expect(await heartbeatRequest(t.db, { requestId: id, owner: 'w2', now: at(31_000), leaseMs: LEASE_MS })).toBe(false);
    expect((await getRequest(t.db, id)).lease_expires_at).toBe(at(90_000).toISOString());
  });
});

describe('reapExpiredLeases', () => {
  it('returns an expired lease to Pending, keeping its attempts, and leaves unexpired leases alone', async () => {
    const expired = await insertRequest(t.db, {
      submittedAt: '2025-03-01T09:00:01.000Z',
      status: 'Processing',
      attempts: 1,
      leaseOwner: 'dead',
      leaseExpiresAt: at(-1).toISOString(),
    });
    const alive = await insertRequest(t.db, {
      submittedAt: '2025-03-01T09:00:02.000Z',
      status: 'Processing',
      attempts: 1,
      leaseOwner: 'alive',
      leaseExpiresAt: at(1).toISOString(),
    });

    const reaped = await reapExpiredLeases(t.db, { now: T0, maxAttempts: 3 });

    expect(reaped).toEqual({ requeued: [expired], failed: [] });
    expect(await getRequest(t.db, expired)).toMatchObject({
      status: 'Pending',
      attempts: 1,
      lease_owner: null,
      lease_expires_at: null,
      ended_at: null,
    });
    expect(await getRequest(t.db, alive)).toMatchObject({ status: 'Processing', lease_owner: 'alive' });
  });

  it('fails a request interrupted maxAttempts times with a message saying so', async () => {
    const id = await insertRequest(t.db, {
      submittedAt: '2025-03-01T09:00:01.000Z',
      status: 'Processing',
      attempts: 3,
      leaseOwner: 'dead',
      leaseExpiresAt: at(-1).toISOString(),
    });

    const reaped = await reapExpiredLeases(t.db, { now: T0, maxAttempts: 3 });

    expect(reaped).toEqual({ requeued: [], failed: [id] });
    expect(await getRequest(t.db, id)).toMatchObject({
      status: 'Failed',
      error_message: 'processing was interrupted 3 times (the worker stopped before finishing and its lease expired); not retried',
      processed_at: T0.toISOString(),
      ended_at: T0.toISOString(),
      lease_owner: null,
    });
  });

  it('lets the claim after a reap count the next attempt', async () => {
    const id = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:00.000Z' });
    await claimNextRequest(t.db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });
    await reapExpiredLeases(t.db, { now: at(LEASE_MS + 1), maxAttempts: 2 });
    await claimNextRequest(t.db, { owner: 'w2', now: at(LEASE_MS + 2), leaseMs: LEASE_MS });
    await reapExpiredLeases(t.db, { now: at(2 * LEASE_MS + 3), maxAttempts: 2 });

    expect(await getRequest(t.db, id)).toMatchObject({ status: 'Failed', attempts: 2 });
  });
});
