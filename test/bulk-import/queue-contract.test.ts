/**
 * The job queue contract, the same test bodies on a SQLite file and on a fresh PostgreSQL database:
 * claims (order, never the same request twice however many claim at once), leases (heartbeat, expiry,
 * the reaper and its bounded attempts), fencing (a worker that lost its lease changes nothing),
 * retention, On Hold, job queue entries claimed once across schedulers, and the processor's import
 * transaction (Completed with rows, Failed with errors, nothing committed when the lease is lost).
 */
import os from 'node:os';
import { sql } from 'kysely';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { parseDatabaseUrl } from '../../src/core/config.js';
import { importPayload } from '../../src/table-writer/sqlite/importer.js';
import { importPayloadPg } from '../../src/table-writer/postgres/importer.js';
import { claimNextDueEntry } from '../../src/job-queue/claim-entry.js';
import { claimNextRequest } from '../../src/bulk-import/claim-request.js';
import { completeRequest } from '../../src/bulk-import/complete-request.js';
import { failRequest } from '../../src/bulk-import/fail-request.js';
import { heartbeatRequest } from '../../src/bulk-import/heartbeat-request.js';
import { holdEntry } from '../../src/job-queue/hold-entry.js';
import type { ClaimedRequest } from '../../src/bulk-import/model.js';
import { processPendingRequests, type ImportFn, type ImportFnPg, type ProcessorContext } from '../../src/bulk-import/processor.js';
import { reapExpiredLeases } from '../../src/bulk-import/reap-expired-requests.js';
import { releaseRequests } from '../../src/bulk-import/release-requests.js';
import { runRetentionCleanup } from '../../src/bulk-import/retention.js';
import { connectionOf } from '../../src/storage/connection.js';
import { migrate, openDatabase, type Database } from '../../src/storage/database.js';
import { BACKENDS, holdAdvisoryLock, type FreshDatabase } from '../helpers/databases.js';
import { customersPayload, getRequest, insertRequest, setupCustomers, silentLogger } from '../helpers/queue-fixtures.js';

const T0 = new Date('2025-03-01T10:00:00.000Z');
const LEASE_MS = 60_000;
const at = (ms: number) => new Date(T0.getTime() + ms);
const submitted = (i: number) => new Date(Date.parse('2025-03-01T09:00:00.000Z') + i * 1000).toISOString();
const counts = { recordCount: 3, inserted: 2, updated: 1, skipped: 0 };

const openUrl = (url: string): Database => openDatabase(parseDatabaseUrl(url, os.tmpdir()), { busyTimeoutMs: 10_000 });

describe.each(BACKENDS)('job queue contract on $name', (backend) => {
  describe.skipIf(backend.skip)(`${backend.name}`, () => {
    let fresh: FreshDatabase;
    let db: Database;
    const others: Database[] = [];
    /** Another connection (pool) to the same database, as another process would have. */
    const another = (): Database => {
      const d = openUrl(fresh.url);
      others.push(d);
      return d;
    };
    beforeEach(async () => {
      fresh = await backend.fresh();
      db = openUrl(fresh.url);
      await migrate(db);
    });
    afterEach(async () => {
      for (const d of others.splice(0)) await d.close();
      await db?.close();
      await fresh?.cleanup();
    });

    const customerNos = async (): Promise<string[]> =>
      (await sql<{ no: string }>`select no from customer order by no`.execute(db.kysely)).rows.map((r) => r.no);
    const complete = (requestId: string, owner: string, now: Date) =>
      completeRequest(connectionOf(db), { requestId, owner, now, ...counts });
    const fail = (requestId: string, owner: string, now: Date, errorMessage = 'failed') =>
      failRequest(connectionOf(db), { requestId, owner, now, errorMessage });

    describe('claims', () => {
      it('take the oldest Pending request first, then the next, then nothing; other statuses are never claimed', async () => {
        await insertRequest(db, { submittedAt: submitted(0), status: 'Cancelled' });
        const newer = await insertRequest(db, { submittedAt: submitted(3) });
        const older = await insertRequest(db, { submittedAt: submitted(2) });
        await insertRequest(db, { submittedAt: submitted(1), status: 'Completed' });

        const a = await claimNextRequest(db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });
        const b = await claimNextRequest(db, { owner: 'w2', now: T0, leaseMs: LEASE_MS });
        const c = await claimNextRequest(db, { owner: 'w3', now: T0, leaseMs: LEASE_MS });

        expect(a).toMatchObject({ requestId: older, attempts: 1, leaseOwner: 'w1', leaseExpiresAt: at(LEASE_MS).toISOString() });
        expect(b?.requestId).toBe(newer);
        expect(c).toBeUndefined();
        expect(await getRequest(db, older)).toMatchObject({
          status: 'Processing',
          lease_owner: 'w1',
          started_at: T0.toISOString(),
          attempts: 1,
        });
      });

      it('never hand one request to two of 8 concurrent claim loops over 200 requests (each claimed exactly once)', async () => {
        const ids = new Set<string>();
        for (let i = 0; i < 200; i++) ids.add(await insertRequest(db, { submittedAt: submitted(i) }));
        // Separate pools: on PostgreSQL the loops really run at once, on SQLite they queue for the writer.
        const pools = Array.from({ length: 8 }, () => another());
        const claimedBy = await Promise.all(
          pools.map(async (pool, i) => {
            const mine: string[] = [];
            for (;;) {
              const claimed = await claimNextRequest(pool, { owner: `loop${i}`, now: T0, leaseMs: LEASE_MS });
              if (claimed === undefined) return mine;
              mine.push(claimed.requestId);
            }
          }),
        );
        const all = claimedBy.flat();
        expect(all).toHaveLength(200);
        expect(new Set(all)).toEqual(ids);
        const rows = await db.kysely.selectFrom('ifw_bulk_import_request').select(['lease_owner', 'attempts', 'request_id']).execute();
        for (const row of rows) {
          expect(row.attempts).toBe(1);
          expect(claimedBy[Number(row.lease_owner!.slice(4))]).toContain(row.request_id);
        }
        if (backend.name === 'postgres')
          expect(claimedBy.filter((mine) => mine.length > 0).length, 'loops that claimed something').toBeGreaterThan(1);
      });
    });

    describe('leases', () => {
      it('a heartbeat extends the lease of its owner and reports a lost one', async () => {
        const id = await insertRequest(db, { submittedAt: submitted(0) });
        await claimNextRequest(db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });

        expect(await heartbeatRequest(db, { requestId: id, owner: 'w1', now: at(30_000), leaseMs: LEASE_MS })).toBe(true);
        expect((await getRequest(db, id)).lease_expires_at).toBe(at(90_000).toISOString());
        // Not expired at the first lease's end: the reaper leaves it alone.
        await reapExpiredLeases(db, { now: at(LEASE_MS + 1), maxAttempts: 3 });
        expect((await getRequest(db, id)).status).toBe('Processing');

        expect(await heartbeatRequest(db, { requestId: id, owner: 'w2', now: at(40_000), leaseMs: LEASE_MS })).toBe(false);
        await db.kysely
          .updateTable('ifw_bulk_import_request')
          .set({ status: 'Cancelled', lease_owner: null, lease_expires_at: null })
          .where('request_id', '=', id)
          .execute();
        expect(await heartbeatRequest(db, { requestId: id, owner: 'w1', now: at(45_000), leaseMs: LEASE_MS })).toBe(false);
      });

      it('the reaper returns expired leases to Pending, and fails a request interrupted maxAttempts times', async () => {
        const id = await insertRequest(db, { submittedAt: submitted(0) });
        let now = 0;
        for (let attempt = 1; attempt <= 3; attempt++) {
          const claimed = await claimNextRequest(db, { owner: `w${attempt}`, now: at(now), leaseMs: LEASE_MS });
          expect(claimed).toMatchObject({ requestId: id, attempts: attempt });
          // Not yet expired: nothing to reap.
          expect(await reapExpiredLeases(db, { now: at(now + LEASE_MS - 1), maxAttempts: 3 })).toEqual({ requeued: [], failed: [] });
          now += LEASE_MS + 1;
          const reaped = await reapExpiredLeases(db, { now: at(now), maxAttempts: 3 });
          expect(reaped).toEqual(attempt < 3 ? { requeued: [id], failed: [] } : { requeued: [], failed: [id] });
        }
        expect(await getRequest(db, id)).toMatchObject({
          status: 'Failed',
          attempts: 3,
          lease_owner: null,
          error_message: expect.stringContaining('interrupted 3 times') as unknown,
          ended_at: at(now).toISOString(),
        });
        expect(await claimNextRequest(db, { owner: 'w4', now: at(now), leaseMs: LEASE_MS })).toBeUndefined();
      });

      it('a worker whose lease was taken over cannot complete or fail the request it lost', async () => {
        const id = await insertRequest(db, { submittedAt: submitted(0) });
        await claimNextRequest(db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });
        // w1 stalled past its lease; the reaper returned the request and w2 claimed it.
        await reapExpiredLeases(db, { now: at(LEASE_MS + 1), maxAttempts: 3 });
        expect(await claimNextRequest(another(), { owner: 'w2', now: at(LEASE_MS + 2), leaseMs: LEASE_MS })).toMatchObject({
          requestId: id,
          attempts: 2,
        });

        expect(await complete(id, 'w1', at(LEASE_MS + 3))).toBe(false);
        expect(await fail(id, 'w1', at(LEASE_MS + 3), 'late')).toBe(false);
        expect(await heartbeatRequest(db, { requestId: id, owner: 'w1', now: at(LEASE_MS + 3), leaseMs: LEASE_MS })).toBe(false);
        expect(await getRequest(db, id)).toMatchObject({ status: 'Processing', lease_owner: 'w2', attempts: 2, error_message: '' });

        // The new owner's completion counts.
        expect(await complete(id, 'w2', at(LEASE_MS + 4))).toBe(true);
        expect(await getRequest(db, id)).toMatchObject({
          status: 'Completed',
          lease_owner: null,
          record_count: 3,
          inserted_count: 2,
          updated_count: 1,
        });
      });

      it('a worker that must exit returns its leases to Pending without counting the attempt', async () => {
        const mine = await insertRequest(db, { submittedAt: submitted(0) });
        const theirs = await insertRequest(db, { submittedAt: submitted(1) });
        await claimNextRequest(db, { owner: 'w1', now: T0, leaseMs: LEASE_MS });
        await claimNextRequest(db, { owner: 'w2', now: T0, leaseMs: LEASE_MS });

        expect(await releaseRequests(db, { owners: ['w1'] })).toEqual([mine]);
        expect(await getRequest(db, mine)).toMatchObject({ status: 'Pending', attempts: 0, lease_owner: null, started_at: null });
        expect((await getRequest(db, theirs)).status).toBe('Processing');
        expect(await complete(mine, 'w1', at(1))).toBe(false);
      });
    });

    it('retention deletes ended requests (and their errors) after retentionDays, never Pending or Processing ones', async () => {
      const old = '2025-01-01T00:00:00.000Z';
      const completed = await insertRequest(db, { submittedAt: old, status: 'Completed', endedAt: old });
      const failed = await insertRequest(db, { submittedAt: old, status: 'Failed', endedAt: old });
      const recent = await insertRequest(db, { submittedAt: old, status: 'Completed', endedAt: '2025-02-28T00:00:00.000Z' });
      const pending = await insertRequest(db, { submittedAt: old });
      await db.kysely
        .insertInto('ifw_bulk_import_error')
        .values({ request_id: failed, seq: 1, record_no: 1, field: null, value: null, rule: 'required', message: 'x' })
        .execute();

      expect(await runRetentionCleanup(db, { now: T0, retentionDays: 30, batchSize: 1 })).toBe(2);

      const left = await db.kysely.selectFrom('ifw_bulk_import_request').select('request_id').orderBy('request_id').execute();
      expect(left.map((r) => r.request_id).sort()).toEqual([recent, pending].sort());
      expect(await db.kysely.selectFrom('ifw_bulk_import_error').selectAll().execute()).toEqual([]);
      expect(completed).toBeDefined();
    });

    describe('job queue entries', () => {
      it('are claimed once each across concurrent schedulers of separate processes, and never while On Hold', async () => {
        await holdEntry(db, { id: 'retention-cleanup', now: T0 });
        const due = new Date('2100-01-01T00:00:00.000Z');
        const schedulers = Array.from({ length: 6 }, () => another());
        const claimed = await Promise.all(
          schedulers.map(async (s, i) => {
            const mine: string[] = [];
            for (;;) {
              const entry = await claimNextDueEntry(s, { owner: `s${i}`, now: due, leaseMs: LEASE_MS });
              if (entry === undefined) return mine;
              mine.push(entry.id);
            }
          }),
        );
        expect(claimed.flat().sort()).toEqual(['bulk-import-processor', 'import-run-processor', 'webhook-delivery']);
        const rows = await db.kysely.selectFrom('ifw_job_queue_entry').select(['id', 'status']).orderBy('id').execute();
        expect(rows).toEqual([
          { id: 'bulk-import-processor', status: 'In Process' },
          { id: 'import-run-processor', status: 'In Process' },
          { id: 'retention-cleanup', status: 'On Hold' },
          { id: 'webhook-delivery', status: 'In Process' },
        ]);
      });
    });

    describe('processing (the import transaction)', () => {
      const clock = manualClock('2025-03-01T10:00:00.000Z');
      let ctx: ProcessorContext;
      beforeEach(async () => {
        clock.set('2025-03-01T10:00:00.000Z');
        await setupCustomers(db, clock);
        ctx = { db, clock, logger: silentLogger, owner: 'worker-1', leaseMs: 300_000, maxAttempts: 3 };
      });

      it('imports a request: Completed with counts, the rows in the target table', async () => {
        const id = await insertRequest(db, { submittedAt: submitted(1), payload: customersPayload('C1', 'C2', 'C3') });
        expect(await processPendingRequests(ctx)).toMatchObject({ completed: 1, failed: 0, lost: 0 });
        expect(await getRequest(db, id)).toMatchObject({
          status: 'Completed',
          record_count: 3,
          inserted_count: 3,
          lease_owner: null,
          error_message: '',
        });
        expect(await customerNos()).toEqual(['C1', 'C2', 'C3']);
      });

      it('fails a request with its error message and per-record errors, writing nothing', async () => {
        const id = await insertRequest(db, {
          submittedAt: submitted(1),
          payload: JSON.stringify([{ no: 'C1', name: 'ok' }, { no: 'C2' }]),
        });
        expect(await processPendingRequests(ctx)).toMatchObject({ completed: 0, failed: 1 });
        const row = await getRequest(db, id);
        expect(row).toMatchObject({ status: 'Failed', record_count: 0, lease_owner: null });
        expect(row.error_message).toMatch(/record 2: field "name" is required/);
        const errors = await db.kysely
          .selectFrom('ifw_bulk_import_error')
          .selectAll()
          .where('request_id', '=', id)
          .orderBy('seq')
          .execute();
        expect(errors).toMatchObject([{ seq: 1, record_no: 2, field: 'name', rule: 'is required' }]);
        expect(await customerNos()).toEqual([]);
      });

      it('commits nothing when the lease is taken over while the import is under way', async () => {
        const id = await insertRequest(db, { submittedAt: submitted(1), payload: customersPayload('C1', 'C2') });
        const other = another();
        // Meanwhile: the lease expired, the reaper of another worker returned the request, that worker claimed it.
        const takeOver = async (): Promise<ClaimedRequest | undefined> => {
          await reapExpiredLeases(other, { now: at(400_000), maxAttempts: 3 });
          return claimNextRequest(other, { owner: 'worker-2', now: at(400_001), leaseMs: 300_000 });
        };
        let takenOver: Promise<ClaimedRequest | undefined> | undefined;
        const sqliteImport: ImportFn = (sqlite, input, finish) => {
          // SQLite: the import's transaction is synchronous; the takeover commits before it (one writer).
          sqlite.prepare(`update ifw_bulk_import_request set lease_expires_at = '2000-01-01T00:00:00.000Z' where request_id = ?`).run(id);
          sqlite
            .prepare(
              `update ifw_bulk_import_request set status = 'Pending', lease_owner = null, lease_expires_at = null where request_id = ?`,
            )
            .run(id);
          sqlite
            .prepare(
              `update ifw_bulk_import_request set status = 'Processing', lease_owner = 'worker-2', attempts = attempts + 1 where request_id = ?`,
            )
            .run(id);
          return importPayload(sqlite, input, finish);
        };
        const pgImport: ImportFnPg = async (client, input, finish) => {
          await db.kysely
            .updateTable('ifw_bulk_import_request')
            .set({ lease_expires_at: '2000-01-01T00:00:00.000Z' })
            .where('request_id', '=', id)
            .execute();
          takenOver = takeOver();
          await takenOver;
          return importPayloadPg(client, input, finish);
        };

        const result = await processPendingRequests({ ...ctx, importPayload: sqliteImport, importPayloadPg: pgImport });

        expect(result).toMatchObject({ completed: 0, failed: 0, lost: 1 });
        if (takenOver !== undefined) expect(await takenOver).toMatchObject({ requestId: id, attempts: 2 });
        expect(await getRequest(db, id)).toMatchObject({ status: 'Processing', lease_owner: 'worker-2', attempts: 2 });
        expect(await customerNos()).toEqual([]);
      });
    });

    // Heartbeats during an import exist only where the import does not hold the thread (pg is async).
    if (backend.name === 'postgres') {
      describe('PostgreSQL only', () => {
        const clock = manualClock('2025-03-01T10:00:00.000Z');
        beforeEach(async () => {
          await setupCustomers(db, clock);
        });

        /**
         * Imports request `id`, whose finish cancels the request (as an administrator would), runs
         * `meanwhile`, then waits for a lock another session holds: only a cancel of that statement ends
         * the wait, else the lock is let go after 10 s (`fellBack`).
         */
        const importCancelledWhileWaiting = async (id: string, meanwhile: () => Promise<void>, logger = silentLogger) => {
          const lock = await holdAdvisoryLock(fresh.url);
          const slow: ImportFnPg = async (client, input, finish) =>
            importPayloadPg(client, input, async (outcome) => {
              await db.kysely
                .updateTable('ifw_bulk_import_request')
                .set({ status: 'Cancelled', lease_owner: null, lease_expires_at: null })
                .where('request_id', '=', id)
                .execute();
              await meanwhile();
              await client.query(`select ${lock.waitSql}`);
              return finish(outcome);
            });
          let fellBack = false;
          const fallback = setTimeout(() => {
            fellBack = true;
            void lock.release();
          }, 10_000);
          try {
            const result = await processPendingRequests({
              db,
              clock,
              logger,
              owner: 'worker-1',
              leaseMs: 300_000,
              maxAttempts: 3,
              importPayloadPg: slow,
              heartbeatMs: 50,
            });
            return { result, fellBack };
          } finally {
            clearTimeout(fallback);
            await lock.release();
          }
        };

        it('renews the lease during a long import, and cancels the import at once when a renewal finds the lease lost', async () => {
          const id = await insertRequest(db, { submittedAt: submitted(1), payload: customersPayload('C1') });
          const { result, fellBack } = await importCancelledWhileWaiting(id, () => Promise.resolve());
          expect(result).toMatchObject({ completed: 0, failed: 0, lost: 1 });
          expect(fellBack, 'the statement was cancelled, not let go by the fallback').toBe(false);
          expect((await getRequest(db, id)).status).toBe('Cancelled');
          expect(await customerNos()).toEqual([]);
        });

        it('cancels a statement the import begins after the lease was found lost, between statements', async () => {
          const id = await insertRequest(db, { submittedAt: submitted(1), payload: customersPayload('C1') });
          // The keeper's warnings, to know when it has found the lease lost (and sent its first cancel).
          const warnings: string[] = [];
          const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(String(JSON.parse(line).msg)) });
          // No statement runs while the keeper finds the cancel: its first cancel reaches nothing.
          const untilFoundLost = async (): Promise<void> => {
            while (!warnings.some((w) => w.startsWith('lease lost'))) await new Promise((r) => setTimeout(r, 10));
            await new Promise((r) => setTimeout(r, 200));
          };
          const { result, fellBack } = await importCancelledWhileWaiting(id, untilFoundLost, logger);
          expect(result).toMatchObject({ completed: 0, failed: 0, lost: 1 });
          expect(fellBack, 'the statement begun after the lease was lost was cancelled, not let go by the fallback').toBe(false);
          expect((await getRequest(db, id)).status).toBe('Cancelled');
          expect(await customerNos()).toEqual([]);
        });

        it('renews the lease while importing, so a long import keeps it', async () => {
          const id = await insertRequest(db, { submittedAt: submitted(1), payload: customersPayload('C1') });
          const real = manualClock('2025-03-01T10:00:00.000Z');
          const expiries: (string | null)[] = [];
          const slow: ImportFnPg = async (client, input, finish) => {
            for (let i = 0; i < 3; i++) {
              real.advance(1000);
              await client.query('select pg_sleep(0.1)');
              expiries.push((await getRequest(db, id)).lease_expires_at);
            }
            return importPayloadPg(client, input, finish);
          };
          const result = await processPendingRequests({
            db,
            clock: real,
            logger: silentLogger,
            owner: 'worker-1',
            leaseMs: 60_000,
            maxAttempts: 3,
            importPayloadPg: slow,
            heartbeatMs: 20,
          });
          expect(result).toMatchObject({ completed: 1 });
          expect(new Set(expiries).size).toBeGreaterThan(1);
          expect((await getRequest(db, id)).status).toBe('Completed');
        });
      });
    }
  });
});
