/** The job queue entries and the runner that claims and runs them, in this thread with a manual clock. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { importPayload } from '../../src/table-writer/sqlite/importer.js';
import { claimNextDueEntry } from '../../src/job-queue/claim-entry.js';
import { failEntryRun } from '../../src/job-queue/fail-entry.js';
import { finishEntryRun } from '../../src/job-queue/finish-entry.js';
import { holdEntry } from '../../src/job-queue/hold-entry.js';
import { BULK_IMPORT_PROCESSOR_ENTRY as PROCESSOR, RETENTION_CLEANUP_ENTRY as RETENTION } from '../../src/bulk-import/jobs.js';
import { IMPORT_RUN_PROCESSOR_ENTRY as IMPORT_RUNS } from '../../src/import-runs/jobs.js';
import { WEBHOOK_DELIVERY_ENTRY as WEBHOOKS } from '../../src/webhooks/jobs.js';
import { jobKinds } from '../../src/main/jobs.js';
import type { ImportFn } from '../../src/bulk-import/processor.js';
import { readyEntry } from '../../src/job-queue/ready-entry.js';
import { runEntryNow } from '../../src/job-queue/run-entry-now.js';
import { createQueueRunner, type QueueRunner } from '../../src/job-queue/runner.js';
import { setEntryRecurrence } from '../../src/job-queue/set-entry-recurrence.js';
import { wakeEntry } from '../../src/job-queue/wake-entry.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import {
  customerNos,
  customersPayload,
  entryRow,
  getRequest,
  insertRequest,
  setupCustomers,
  silentLogger,
} from '../helpers/queue-fixtures.js';

const START = '2025-03-01T10:00:00.000Z';
const clock = manualClock(START);
const config = { leaseSeconds: 300, maxAttempts: 3, retentionDays: 30, schedulerTickMs: 1000 };
const iso = (ms = 0) => new Date(clock().getTime() + ms).toISOString();

let t: TestDatabase;
let runner: QueueRunner;

function newRunner(importFn?: ImportFn): QueueRunner {
  return createQueueRunner({
    db: t.db,
    config,
    clock,
    logger: silentLogger,
    owner: 'runner-1',
    jobs: jobKinds(config, { importPayload: importFn }),
  });
}

beforeEach(async () => {
  clock.set(START);
  t = await openTestDatabase();
  await setupCustomers(t.db, clock);
  // The migration scheduled the seeded entries at the real time of the test run; align them with the clock.
  await t.db.kysely.updateTable('ifw_job_queue_entry').set({ next_run_at: START }).execute();
  runner = newRunner();
});
afterEach(async () => {
  await runner.stop();
  await t.cleanup();
});

const setStatus = (id: string, status: string) =>
  t.db.kysely.updateTable('ifw_job_queue_entry').set({ status }).where('id', '=', id).execute();

describe('a tick', () => {
  it('runs the due Bulk Import Processor: the request is Completed and the entry Ready for its next run', async () => {
    const id = await insertRequest(t.db, { submittedAt: START, payload: customersPayload('C1') });

    await runner.tick();

    expect((await getRequest(t.db, id)).status).toBe('Completed');
    expect(await entryRow(t.db, PROCESSOR)).toMatchObject({
      status: 'Ready',
      next_run_at: iso(60_000),
      last_run_at: START,
      last_ended_at: START,
      last_error: '',
      lease_owner: null,
      lease_expires_at: null,
    });
  });

  it('does not run an entry before its next run time, and runs it once the time has come', async () => {
    await runner.tick();
    const id = await insertRequest(t.db, { submittedAt: START, payload: customersPayload('C1') });

    clock.advance(59_999);
    await runner.tick();
    expect((await getRequest(t.db, id)).status).toBe('Pending');

    clock.advance(1);
    await runner.tick();
    expect((await getRequest(t.db, id)).status).toBe('Completed');
  });

  it('never runs an entry On Hold: requests stay Pending', async () => {
    await setStatus(PROCESSOR, 'On Hold');
    const id = await insertRequest(t.db, { submittedAt: START, payload: customersPayload('C1') });

    clock.advance(3_600_000);
    await runner.tick();
    await runner.wake();

    expect((await getRequest(t.db, id)).status).toBe('Pending');
    expect((await entryRow(t.db, PROCESSOR)).status).toBe('On Hold');
  });

  it('runs the retention cleanup entry when it is due', async () => {
    const old = await insertRequest(t.db, {
      submittedAt: '2025-01-01T00:00:00.000Z',
      status: 'Completed',
      endedAt: '2025-01-01T00:00:01.000Z',
    });

    await runner.tick();

    await expect(getRequest(t.db, old)).rejects.toThrow();
    expect(await entryRow(t.db, RETENTION)).toMatchObject({ status: 'Ready', next_run_at: iso(3_600_000) });
  });

  it('puts an entry whose run throws into Error with the message, retries it at its next run time, and a good run makes it Ready again', async () => {
    t.db.sqlite.exec('alter table ifw_bulk_import_request rename to ifw_bulk_import_request_away');

    await runner.tick();
    const failed = await entryRow(t.db, PROCESSOR);
    expect(failed).toMatchObject({ status: 'Error', next_run_at: iso(60_000), last_ended_at: START, lease_owner: null });
    expect(failed.last_error).toMatch(/no such table: ifw_bulk_import_request/);

    t.db.sqlite.exec('alter table ifw_bulk_import_request_away rename to ifw_bulk_import_request');
    const id = await insertRequest(t.db, { submittedAt: START, payload: customersPayload('C1') });
    await runner.wake();
    expect((await getRequest(t.db, id)).status).toBe('Pending');

    clock.advance(60_000);
    await runner.tick();
    expect((await getRequest(t.db, id)).status).toBe('Completed');
    expect(await entryRow(t.db, PROCESSOR)).toMatchObject({ status: 'Ready', last_error: '' });
  });

  it('puts an entry of an unknown kind into Error', async () => {
    await t.db.kysely.updateTable('ifw_job_queue_entry').set({ kind: 'somethingNew' }).where('id', '=', RETENTION).execute();

    await runner.tick();

    expect(await entryRow(t.db, RETENTION)).toMatchObject({ status: 'Error', last_error: 'unknown job kind "somethingNew"' });
  });
});

describe('wake', () => {
  it('runs the processor at once when its entry is Ready, even before its next run time', async () => {
    await runner.tick();
    const id = await insertRequest(t.db, { submittedAt: START, payload: customersPayload('C1') });

    await runner.wake();

    expect((await getRequest(t.db, id)).status).toBe('Completed');
  });

  it('processes every request submitted and woken for while a tick runs', async () => {
    const late: string[] = [];
    const wakes: Promise<void>[] = [];
    let first = true;
    const submitDuringImport: ImportFn = (sqlite, input, finish) => {
      if (first) {
        first = false;
        // Submissions arrive (and wake the queue) while the first import runs.
        for (const no of ['L1', 'L2', 'L3']) {
          const id = crypto.randomUUID();
          sqlite
            .prepare(
              `insert into ifw_bulk_import_request (request_id, integration_sorting_order, payload, status, submitted_at) values (?, 10, ?, 'Pending', ?)`,
            )
            .run(id, customersPayload(no), iso());
          late.push(id);
          wakes.push(runner.wake());
        }
      }
      return importPayload(sqlite, input, finish);
    };
    runner = newRunner(submitDuringImport);
    await runner.tick();
    const id = await insertRequest(t.db, { submittedAt: START, payload: customersPayload('C1') });

    await runner.wake();
    await Promise.all(wakes);

    for (const lateId of late) expect((await getRequest(t.db, lateId)).status).toBe('Completed');
    expect((await getRequest(t.db, id)).status).toBe('Completed');
    expect(customerNos(t.db)).toEqual(['C1', 'L1', 'L2', 'L3']);
  });
});

describe('a long drain', () => {
  it('renews its lease on the processor entry, so no other runner takes the entry over', async () => {
    const seen: string[] = [];
    const slowImport: ImportFn = (sqlite, input, finish) => {
      seen.push(sqlite.prepare('select lease_expires_at from ifw_job_queue_entry where id = ?').pluck().get(PROCESSOR) as string);
      clock.advance(200_000);
      return importPayload(sqlite, input, finish);
    };
    runner = newRunner(slowImport);
    for (const s of [1, 2, 3])
      await insertRequest(t.db, { submittedAt: `2025-03-01T09:00:0${s}.000Z`, payload: customersPayload(`C${s}`) });

    await runner.tick();

    // Claimed at 10:00:00 with a 300 s lease; renewed at 10:03:20 and 10:06:40 (each more than half a lease later).
    expect(seen).toEqual(['2025-03-01T10:05:00.000Z', '2025-03-01T10:08:20.000Z', '2025-03-01T10:11:40.000Z']);
    expect(customerNos(t.db)).toEqual(['C1', 'C2', 'C3']);
  });
});

describe('an administrator acting on an entry during its run', () => {
  it('puts it On Hold: the drain stops before the next request and the entry stays On Hold', async () => {
    const holdDuringImport: ImportFn = (sqlite, input, finish) => {
      sqlite
        .prepare(`update ifw_job_queue_entry set status = 'On Hold', lease_owner = null, lease_expires_at = null where id = ?`)
        .run(PROCESSOR);
      return importPayload(sqlite, input, finish);
    };
    runner = newRunner(holdDuringImport);
    const first = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:01.000Z', payload: customersPayload('C1') });
    const second = await insertRequest(t.db, { submittedAt: '2025-03-01T09:00:02.000Z', payload: customersPayload('C2') });

    await runner.tick();

    expect((await getRequest(t.db, first)).status).toBe('Completed');
    expect((await getRequest(t.db, second)).status).toBe('Pending');
    expect((await entryRow(t.db, PROCESSOR)).status).toBe('On Hold');
  });
});

describe('job queue entry transitions', () => {
  const lease = { owner: 'r1', leaseMs: 300_000 };

  it('claims only due entries, the earliest first, and never one On Hold', async () => {
    await t.db.kysely
      .updateTable('ifw_job_queue_entry')
      .set({ next_run_at: iso(-1000) })
      .where('id', '=', RETENTION)
      .execute();
    await setStatus(PROCESSOR, 'On Hold');
    await setStatus(IMPORT_RUNS, 'On Hold');
    await setStatus(WEBHOOKS, 'On Hold');

    const first = await claimNextDueEntry(t.db, { ...lease, now: clock() });
    const second = await claimNextDueEntry(t.db, { ...lease, now: clock() });

    expect(first).toMatchObject({ id: RETENTION, kind: 'retentionCleanup', recurrenceSeconds: 3600 });
    expect(second).toBeUndefined();
    expect(await entryRow(t.db, RETENTION)).toMatchObject({
      status: 'In Process',
      lease_owner: 'r1',
      lease_expires_at: iso(300_000),
      next_run_at: null,
    });
  });

  it('takes over an In Process entry whose lease expired, but not one whose lease holds', async () => {
    await setStatus(RETENTION, 'On Hold');
    await setStatus(IMPORT_RUNS, 'On Hold');
    await setStatus(WEBHOOKS, 'On Hold');
    await claimNextDueEntry(t.db, { ...lease, now: clock() });

    expect(await claimNextDueEntry(t.db, { owner: 'r2', leaseMs: 300_000, now: new Date(iso(299_999)) })).toBeUndefined();
    expect(await claimNextDueEntry(t.db, { owner: 'r2', leaseMs: 300_000, now: new Date(iso(300_001)) })).toMatchObject({ id: PROCESSOR });
    expect((await entryRow(t.db, PROCESSOR)).lease_owner).toBe('r2');
    // The first runner's finish is fenced out.
    expect(await finishEntryRun(t.db, { id: PROCESSOR, owner: 'r1', now: clock(), recurrenceSeconds: 60 })).toBe(false);
  });

  it('keeps a run-now asked for during a run as the next run time', async () => {
    await setStatus(RETENTION, 'On Hold');
    await claimNextDueEntry(t.db, { ...lease, now: clock() });
    clock.advance(5000);
    expect(await runEntryNow(t.db, { id: PROCESSOR, now: clock() })).toBe(true);
    clock.advance(5000);

    await finishEntryRun(t.db, { id: PROCESSOR, owner: 'r1', now: clock(), recurrenceSeconds: 60 });

    expect((await entryRow(t.db, PROCESSOR)).next_run_at).toBe(iso(-5000));
  });

  it('makes a Ready or running processor due now on wake, but not one On Hold or in Error', async () => {
    await t.db.kysely
      .updateTable('ifw_job_queue_entry')
      .set({ next_run_at: iso(60_000) })
      .execute();
    expect(await wakeEntry(t.db, { id: PROCESSOR, now: clock() })).toBe(true);
    expect((await entryRow(t.db, PROCESSOR)).next_run_at).toBe(iso());

    await claimNextDueEntry(t.db, { ...lease, now: clock() });
    expect(await wakeEntry(t.db, { id: PROCESSOR, now: clock() })).toBe(true);
    expect(await entryRow(t.db, PROCESSOR)).toMatchObject({ status: 'In Process', next_run_at: iso() });

    for (const status of ['On Hold', 'Error']) {
      await t.db.kysely
        .updateTable('ifw_job_queue_entry')
        .set({ status, next_run_at: iso(60_000) })
        .where('id', '=', PROCESSOR)
        .execute();
      expect(await wakeEntry(t.db, { id: PROCESSOR, now: clock() })).toBe(false);
      expect((await entryRow(t.db, PROCESSOR)).next_run_at).toBe(iso(60_000));
    }
  });

  it('records an error and schedules the retry', async () => {
    await claimNextDueEntry(t.db, { ...lease, now: clock() });
    expect(await failEntryRun(t.db, { id: PROCESSOR, owner: 'r1', now: clock(), recurrenceSeconds: 60, error: 'boom' })).toBe(true);
    expect(await entryRow(t.db, PROCESSOR)).toMatchObject({ status: 'Error', last_error: 'boom', next_run_at: iso(60_000) });
  });

  it('refuses run-now for an entry On Hold and makes it due again once Ready', async () => {
    await holdEntry(t.db, { id: PROCESSOR, now: clock() });
    expect(await runEntryNow(t.db, { id: PROCESSOR, now: clock() })).toBe(false);

    clock.advance(3_600_000);
    expect(await readyEntry(t.db, { id: PROCESSOR, now: clock() })).toBe(true);
    expect(await claimNextDueEntry(t.db, { ...lease, now: clock() })).toMatchObject({ id: PROCESSOR });
  });

  it('brings the next run forward when the interval gets shorter, and leaves it when it gets longer', async () => {
    await t.db.kysely
      .updateTable('ifw_job_queue_entry')
      .set({ next_run_at: iso(3_600_000) })
      .execute();

    await setEntryRecurrence(t.db, { id: RETENTION, now: clock(), recurrenceSeconds: 60 });
    await setEntryRecurrence(t.db, { id: PROCESSOR, now: clock(), recurrenceSeconds: 7200 });

    expect(await entryRow(t.db, RETENTION)).toMatchObject({ recurrence_seconds: 60, next_run_at: iso(60_000) });
    expect(await entryRow(t.db, PROCESSOR)).toMatchObject({ recurrence_seconds: 7200, next_run_at: iso(3_600_000) });
  });
});

describe('stop', () => {
  it('stops the runner: later ticks and wakes run nothing', async () => {
    await runner.stop();
    const id = await insertRequest(t.db, { submittedAt: START, payload: customersPayload('C1') });

    await runner.tick();
    await runner.wake();

    expect((await getRequest(t.db, id)).status).toBe('Pending');
  });
});
