/** The Bulk Import Processor, in this thread, against a real integration and target table. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { importPayload } from '../../src/table-writer/sqlite/importer.js';
import { claimNextRequest } from '../../src/bulk-import/claim-request.js';
import { reapExpiredLeases } from '../../src/bulk-import/reap-expired-requests.js';
import { processPendingRequests, type ImportFn, type ProcessorContext } from '../../src/bulk-import/processor.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import {
  CUSTOMERS,
  customerNos,
  customersPayload,
  getRequest,
  insertRequest,
  setupCustomers,
  silentLogger,
} from '../helpers/queue-fixtures.js';

const clock = manualClock('2025-03-01T10:00:00.000Z');
const LEASE_MS = 300_000;

let t: TestDatabase;
let ctx: ProcessorContext;
beforeEach(async () => {
  clock.set('2025-03-01T10:00:00.000Z');
  t = await openTestDatabase();
  await setupCustomers(t.db, clock);
  ctx = { db: t.db, clock, logger: silentLogger, owner: 'worker-1', leaseMs: LEASE_MS, maxAttempts: 3 };
});
afterEach(async () => {
  await t.cleanup();
});

const submitted = (s: number) => `2025-03-01T09:59:${String(s).padStart(2, '0')}.000Z`;

async function errorRows(requestId: string) {
  return t.db.kysely.selectFrom('ifw_bulk_import_error').selectAll().where('request_id', '=', requestId).orderBy('seq').execute();
}

describe('processPendingRequests', () => {
  it('imports a Pending request and marks it Completed with processedAt and counts', async () => {
    const id = await insertRequest(t.db, { submittedAt: submitted(1), payload: customersPayload('C1', 'C2', 'C3') });

    const result = await processPendingRequests(ctx);

    expect(result).toMatchObject({ completed: 1, failed: 0, lost: 0 });
    expect(await getRequest(t.db, id)).toMatchObject({
      status: 'Completed',
      processed_at: '2025-03-01T10:00:00.000Z',
      ended_at: '2025-03-01T10:00:00.000Z',
      record_count: 3,
      inserted_count: 3,
      updated_count: 0,
      skipped_count: 0,
      error_message: '',
      attempts: 1,
      lease_owner: null,
    });
    expect(customerNos(t.db)).toEqual(['C1', 'C2', 'C3']);
  });

  it('drains every Pending request in submission order', async () => {
    const a = await insertRequest(t.db, { submittedAt: submitted(2), payload: customersPayload('B1') });
    const b = await insertRequest(t.db, { submittedAt: submitted(1), payload: customersPayload('A1') });

    const result = await processPendingRequests(ctx);

    expect(result.completed).toBe(2);
    expect((await getRequest(t.db, a)).status).toBe('Completed');
    expect((await getRequest(t.db, b)).status).toBe('Completed');
    expect(customerNos(t.db)).toEqual(['A1', 'B1']);
  });

  it('fails a request whose payload breaks a rule, writes no rows and keeps the per-record errors', async () => {
    const payload = JSON.stringify([
      { no: 'C1', name: 'fine' },
      { no: 'C2', name: 'a name that is far too long for the field' },
    ]);
    const id = await insertRequest(t.db, { submittedAt: submitted(1), payload });

    const result = await processPendingRequests(ctx);

    expect(result).toMatchObject({ completed: 0, failed: 1 });
    const row = await getRequest(t.db, id);
    expect(row).toMatchObject({ status: 'Failed', processed_at: '2025-03-01T10:00:00.000Z', record_count: 0 });
    expect(row.error_message).toMatch(/^record 2: field "name"/);
    expect(customerNos(t.db)).toEqual([]);
    const errors = await errorRows(id);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ seq: 1, record_no: 2, field: 'name' });
  });

  it('still processes a request accepted before the integration stopped accepting bulk imports', async () => {
    const id = await insertRequest(t.db, { submittedAt: submitted(1), payload: customersPayload('C1') });
    await t.db.kysely.updateTable('ifw_integration').set({ accept_bulk_import: 0 }).where('sorting_order', '=', CUSTOMERS).execute();

    await processPendingRequests(ctx);

    expect((await getRequest(t.db, id)).status).toBe('Completed');
  });

  it('fails a request whose integration was deleted after it was accepted', async () => {
    const id = await insertRequest(t.db, { submittedAt: submitted(1), payload: customersPayload('C1') });
    t.db.sqlite.prepare('delete from ifw_integration where sorting_order = ?').run(CUSTOMERS);

    await processPendingRequests(ctx);

    expect(await getRequest(t.db, id)).toMatchObject({ status: 'Failed', error_message: `integration ${CUSTOMERS} no longer exists` });
  });

  it('fails a request with an internal error when the importer throws, and goes on with the next', async () => {
    const broken = await insertRequest(t.db, { submittedAt: submitted(1), payload: customersPayload('C1') });
    const fine = await insertRequest(t.db, { submittedAt: submitted(2), payload: customersPayload('C2') });
    let calls = 0;
    const flaky: ImportFn = (sqlite, input, finish) => {
      calls += 1;
      if (calls === 1) throw new Error('disk on fire');
      return importPayload(sqlite, input, finish);
    };

    const result = await processPendingRequests({ ...ctx, importPayload: flaky });

    expect(result).toMatchObject({ completed: 1, failed: 1 });
    expect(await getRequest(t.db, broken)).toMatchObject({
      status: 'Failed',
      error_message: 'internal error while processing: disk on fire',
    });
    expect((await getRequest(t.db, fine)).status).toBe('Completed');
    expect(customerNos(t.db)).toEqual(['C2']);
  });

  it('commits nothing when the request is cancelled while its import is under way', async () => {
    const id = await insertRequest(t.db, { submittedAt: submitted(1), payload: customersPayload('C1', 'C2') });
    const cancelledMidway: ImportFn = (sqlite, input, finish) => {
      // An administrator's cancel commits while the worker parses the payload, before its write transaction.
      sqlite.prepare(`update ifw_bulk_import_request set status = 'Cancelled', lease_owner = null where request_id = ?`).run(id);
      return importPayload(sqlite, input, finish);
    };

    const result = await processPendingRequests({ ...ctx, importPayload: cancelledMidway });

    expect(result).toMatchObject({ completed: 0, failed: 0, lost: 1 });
    expect((await getRequest(t.db, id)).status).toBe('Cancelled');
    expect(customerNos(t.db)).toEqual([]);
  });

  it('stops claiming when asked to stop between requests', async () => {
    await insertRequest(t.db, { submittedAt: submitted(1), payload: customersPayload('C1') });
    const left = await insertRequest(t.db, { submittedAt: submitted(2), payload: customersPayload('C2') });

    const result = await processPendingRequests({ ...ctx, keepGoing: () => false });

    expect(result.completed).toBe(1);
    expect((await getRequest(t.db, left)).status).toBe('Pending');
  });

  it('replaces the per-record errors of an earlier attempt', async () => {
    const id = await insertRequest(t.db, { submittedAt: submitted(1), payload: JSON.stringify([{ no: 'C1' }]) });
    await t.db.kysely
      .insertInto('ifw_bulk_import_error')
      .values({ request_id: id, seq: 1, record_no: 9, field: 'x', value: null, rule: 'old', message: 'old' })
      .execute();

    await processPendingRequests(ctx);

    const errors = await errorRows(id);
    expect(errors.map((e) => e.record_no)).toEqual([1]);
  });
});

describe('recovery of a crashed worker', () => {
  it('picks up a request whose worker died (expired lease) and imports its records exactly once', async () => {
    const id = await insertRequest(t.db, { submittedAt: submitted(1), payload: customersPayload('C1', 'C2') });
    // A worker claimed it and died: the request is Processing under a lease nobody renews.
    await claimNextRequest(t.db, { owner: 'dead-worker', now: clock(), leaseMs: LEASE_MS });
    expect(await processPendingRequests(ctx)).toMatchObject({ completed: 0, requeued: 0 });

    clock.advance(LEASE_MS + 1);
    const result = await processPendingRequests(ctx);

    expect(result).toMatchObject({ completed: 1, requeued: 1 });
    expect(await getRequest(t.db, id)).toMatchObject({ status: 'Completed', attempts: 2, record_count: 2 });
    expect(customerNos(t.db)).toEqual(['C1', 'C2']);
  });

  it('fails a request after maxAttempts interrupted attempts instead of retrying it forever', async () => {
    const id = await insertRequest(t.db, { submittedAt: submitted(1), payload: customersPayload('C1') });
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (attempt > 1) await reapExpiredLeases(t.db, { now: clock(), maxAttempts: 3 });
      await claimNextRequest(t.db, { owner: `dies-${attempt}`, now: clock(), leaseMs: LEASE_MS });
      clock.advance(LEASE_MS + 1);
    }

    const result = await processPendingRequests(ctx);

    expect(result).toMatchObject({ interrupted: 1, completed: 0 });
    expect(await getRequest(t.db, id)).toMatchObject({
      status: 'Failed',
      attempts: 3,
      error_message: 'processing was interrupted 3 times (the worker stopped before finishing and its lease expired); not retried',
    });
    expect(customerNos(t.db)).toEqual([]);
  });
});
