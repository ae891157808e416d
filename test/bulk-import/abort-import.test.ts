/**
 * Aborting a running import, on both databases: a cancel or reset of a Processing request stops its
 * import between batches and rolls it back. On SQLite the cancel cannot write while the import holds
 * the write lock, so it raises a flag on the abort board that the import reads; on PostgreSQL the
 * cancel writes at once and the import's lease watch sees the lease gone. The end-to-end case (a
 * cancel sent through the API during a 1 000 000-record import) is in abort-import.slow.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { requestAbortKey } from '../../src/bulk-import/abort-import.js';
import { cancelRequest } from '../../src/bulk-import/cancel-request.js';
import { claimNextRequest } from '../../src/bulk-import/claim-request.js';
import { processPendingRequests, type ImportFnPg, type ProcessorContext } from '../../src/bulk-import/processor.js';
import { resetRequest } from '../../src/bulk-import/reset-request.js';
import { manualClock } from '../../src/core/clock.js';
import { parseDatabaseUrl } from '../../src/core/config.js';
import { abortBoard, ANY_CLAIM, claimOf, fileBoard } from '../../src/storage/abort-board.js';
import { migrate, openDatabase, type Database } from '../../src/storage/database.js';
import { importPayloadPg } from '../../src/table-writer/postgres/importer.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { getRequest, insertRequest, setupCustomers, silentLogger } from '../helpers/queue-fixtures.js';

const clock = manualClock('2025-03-01T10:00:00.000Z');
const LEASE_MS = 300_000;
const openUrl = (url: string): Database => openDatabase(parseDatabaseUrl(url, os.tmpdir()), { busyTimeoutMs: 10_000 });
/** 12 000 records: several batches of the SQLite record loop and several chunks on PostgreSQL (5 000 each). */
const payload = JSON.stringify(Array.from({ length: 12_000 }, (_, i) => ({ no: `C${i}`, name: `Customer ${i}` })));

describe('the abort board', () => {
  it('names a claim: a flag raised for one claim of a request never stops another claim of it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-abort-board-'));
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    const board = fileBoard(path.join(dir, 'aborts'));
    const key = requestAbortKey('0190a000-0000-7000-8000-000000000001');
    expect(board.raised(key, claimOf('w1', 'T1'))).toBe(false);
    board.raise(key, claimOf('w1', 'T1'));
    expect(board.raised(key, claimOf('w1', 'T1'))).toBe(true);
    expect(board.raised(key, claimOf('w1', 'T2')), 'a later claim (after a reset)').toBe(false);
    expect(board.raised(requestAbortKey('0190a000-0000-7000-8000-000000000002'), claimOf('w1', 'T1'))).toBe(false);
    board.lower(key);
    expect(board.raised(key, claimOf('w1', 'T1'))).toBe(false);
    board.lower(key);
    // A cancel of a Pending request flags whichever claim is made while it waits for the lock.
    board.raise(key, ANY_CLAIM);
    expect(board.raised(key, claimOf('w2', 'T3'))).toBe(true);
    board.lower(key);
  });

  it('is there for a SQLite file only: PostgreSQL needs none, an in-memory database has nowhere to put it', () => {
    const memory = openDatabase({ kind: 'sqlite', file: ':memory:' });
    try {
      expect(abortBoard(memory)).toBeUndefined();
    } finally {
      void memory.close();
    }
  });
});

describe.each(BACKENDS)('aborting a running import on $name', (backend) => {
  describe.skipIf(backend.skip)(`${backend.name}`, () => {
    let fresh: FreshDatabase;
    let db: Database;
    let ctx: ProcessorContext;
    const others: Database[] = [];

    beforeEach(async () => {
      clock.set('2025-03-01T10:00:00.000Z');
      fresh = await backend.fresh();
      db = openUrl(fresh.url);
      await migrate(db);
      await setupCustomers(db, clock);
      ctx = { db, clock, logger: silentLogger, owner: 'worker-1', leaseMs: LEASE_MS, maxAttempts: 3 };
    });
    afterEach(async () => {
      for (const d of others.splice(0)) await d.close();
      await db?.close();
      await fresh?.cleanup();
    });

    const customers = async (): Promise<number> =>
      Number((await sql<{ n: number }>`select count(*) as n from customer`.execute(db.kysely)).rows[0]?.n);

    if (backend.name === 'sqlite')
      it('SQLite: an import whose claim is flagged stops at its next batch and rolls back; the cancel then writes Cancelled', async () => {
        const id = await insertRequest(db, { submittedAt: '2025-03-01T09:00:00.000Z', payload });
        // The claim the drain is about to make: this worker, at this (manual) clock's time.
        const claim = claimOf(ctx.owner, clock().toISOString());
        const board = abortBoard(db)!;
        board.raise(requestAbortKey(id), claim);

        // No cancel lowers the flag here: the worker is told not to wait for one.
        const drained = await processPendingRequests({ ...ctx, abortYieldMs: 0 });

        expect(drained).toMatchObject({ completed: 0, failed: 0, lost: 1 });
        expect(await customers()).toBe(0);
        expect((await getRequest(db, id)).status, 'nobody wrote a status yet').toBe('Processing');
        expect((await cancelRequest(db, id, clock)).status).toBe('Cancelled');
        expect(board.raised(requestAbortKey(id), claim), 'the cancel lowered the flag').toBe(false);
      });

    if (backend.name === 'sqlite')
      it('SQLite: a flag raised for an earlier claim does not stop the import of a later one', async () => {
        const id = await insertRequest(db, { submittedAt: '2025-03-01T09:00:00.000Z', payload });
        abortBoard(db)?.raise(requestAbortKey(id), claimOf('worker-1', '2025-01-01T00:00:00.000Z'));
        try {
          expect(await processPendingRequests(ctx)).toMatchObject({ completed: 1, lost: 0 });
        } finally {
          abortBoard(db)?.lower(requestAbortKey(id));
        }
        expect(await customers()).toBe(12_000);
      });

    // SQLite's import runs synchronously on the thread that would send the cancel: there, the end-to-end case with the
    // service's worker thread is in abort-import.slow.test.ts, and the worker's side in the flagged-claim test above.
    if (backend.name === 'postgres')
      it('PostgreSQL: a cancel while the import runs ends the request Cancelled with none of its rows, and the worker goes on to the next request', async () => {
        const id = await insertRequest(db, { submittedAt: '2025-03-01T09:00:00.000Z', payload });
        const next = await insertRequest(db, {
          submittedAt: '2025-03-01T09:00:01.000Z',
          payload: JSON.stringify([{ no: 'N1', name: 'next' }]),
        });
        const other = openUrl(fresh.url);
        others.push(other);
        let cancelled: Promise<unknown> | undefined;
        let sawAbort = false;
        // The cancel is sent once the import has begun, from another connection (as the API would).
        const importer: ImportFnPg = async (client, input, finish) => {
          if (cancelled === undefined) {
            cancelled = cancelRequest(other, id, clock);
            await cancelled;
            // PostgreSQL: the cancel wrote at once; the import's lease watch sees it within a moment.
            for (let i = 0; i < 400 && input.aborted?.() !== true; i++) await sleep(25);
            sawAbort = input.aborted?.() === true;
          }
          return importPayloadPg(client, input, finish);
        };
        const drained = await processPendingRequests({ ...ctx, importPayloadPg: importer });
        expect(sawAbort, 'the lease watch saw the cancel before the import went on').toBe(true);
        expect(drained).toMatchObject({ completed: 1, lost: 1 });
        expect((await getRequest(db, id)).status).toBe('Cancelled');
        expect((await getRequest(db, next)).status).toBe('Completed');
        expect(await customers(), "only the next request's record").toBe(1);
      });

    it('a reset while the import runs puts the request back to Pending with none of its rows; it is then imported once', async () => {
      const id = await insertRequest(db, { submittedAt: '2025-03-01T09:00:00.000Z', payload });
      const claimed = (await claimNextRequest(db, { owner: ctx.owner, now: clock(), leaseMs: LEASE_MS }))!;
      // The reset of a Processing request asks its import to stop; here none runs, so the write goes through at once.
      const row = await resetRequest(db, id);
      expect(row.status).toBe('Pending');
      if (backend.name === 'sqlite')
        expect(abortBoard(db)?.raised(requestAbortKey(id), claimOf(claimed.leaseOwner, claimed.startedAt))).toBe(false);
      clock.advance(1000);
      expect(await processPendingRequests(ctx)).toMatchObject({ completed: 1, lost: 0 });
      expect(await customers()).toBe(12_000);
    });
  });
});
