/**
 * A cancel sent through the API while a 1 000 000-record bulk import runs, on both databases, with the
 * service's own job queue (a worker thread) over a real socket. The cancel must not wait for the
 * import: it answers 200 with the request Cancelled (had it waited, the import would have committed
 * and the answer would be 409 "is Completed"), no row of the import is left, and the worker is free for
 * the next request at once. A reset likewise answers Pending at once, and the request is then imported
 * again, once. The times are printed, not asserted: a loaded machine stretches them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import os from 'node:os';
import { sql } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDatabaseUrl } from '../../src/core/config.js';
import { openDatabase } from '../../src/storage/database.js';
import { systemClock } from '../../src/core/clock.js';
import { applyConfig } from '../../src/declarative-config/apply.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const RECORDS = 1_000_000;

describe.each(BACKENDS)('aborting a 1 000 000-record import on $name', (backend) => {
  describe.skipIf(backend.skip)(`${backend.name}`, () => {
    let fresh: FreshDatabase;
    let t: TestService;
    let base: string;

    beforeAll(async () => {
      fresh = await backend.fresh();
      t = await startTestService({ databaseUrl: fresh.url, workers: true, config: { schedulerTickMs: 50 } });
      await applyConfig(
        t.service.db,
        {
          integrations: [
            {
              sortingOrder: 51,
              name: 'Many customers',
              type: 'file',
              targetTable: 'customer',
              recordsPath: '',
              acceptBulkImportRequests: true,
              maxPayloadSizeKb: 102_400,
              writeMode: 'insert',
              fields: [
                { fieldNo: 1, title: 'No.', sourcePath: 'no' },
                { fieldNo: 2, title: 'Name', sourcePath: 'name' },
              ],
              mappings: [
                { fieldNo: 1, targetField: 'no', required: true },
                { fieldNo: 2, targetField: 'name', required: true },
              ],
            },
          ],
        },
        systemClock,
      );
      base = `${await t.service.listen()}${API}/bulkImportRequests`;
    }, 60_000);
    afterAll(async () => {
      await t?.cleanup();
      await fresh?.cleanup();
    });

    const call = async (method: string, url: string, body?: string) => {
      const res = await fetch(url, {
        method,
        headers: { ...t.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const statusOf = async (id: string) => (await call('GET', `${base}(${id})`)).body.status as string;
    const customers = async () =>
      Number(
        (
          await t.service.db.kysely
            .selectFrom('customer' as never)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    /**
     * Whether an import is writing rows right now: on SQLite someone holds the write lock (a write
     * transaction of our own cannot start); on PostgreSQL a transaction of another session holds a
     * lock on the customer table that only writing takes.
     */
    async function importWriting(): Promise<boolean> {
      const probe = openDatabase(parseDatabaseUrl(fresh.url, os.tmpdir()), { busyTimeoutMs: 0 });
      try {
        if (probe.dialect === 'sqlite') {
          try {
            probe.sqlite.exec('begin immediate');
            probe.sqlite.exec('rollback');
            return false;
          } catch {
            return true;
          }
        }
        const { rows } = await sql<{ n: string }>`
          select count(*) as n from pg_locks l join pg_class c on c.oid = l.relation
           where c.relname = 'customer' and l.mode = 'RowExclusiveLock' and l.granted and l.pid <> pg_backend_pid()`.execute(probe.kysely);
        return Number(rows[0]?.n) > 0;
      } finally {
        await probe.close();
      }
    }

    it('answers the cancel with the request Cancelled while the import runs, and leaves no row of it', async () => {
      const records = Array.from({ length: RECORDS }, (_, i) => `{"no":"C${i}","name":"Customer ${i}"}`);
      const payload = JSON.stringify({ integrationSortingOrder: 51, payload: `[${records.join(',')}]` });
      const submitted = await call('POST', base, payload);
      expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
      const id = submitted.body.requestId as string;

      // Cancel once the import is writing its rows.
      while (!(await importWriting())) {
        expect(await statusOf(id), 'the import ended before it was seen writing').not.toMatch(/Completed|Failed/);
        await sleep(20);
      }
      const sent = performance.now();
      const cancelled = await call('POST', `${base}(${id})/Microsoft.NAV.cancel`);
      const answeredMs = performance.now() - sent;

      console.log(`${backend.name}: the cancel answered in ${Math.round(answeredMs)} ms`);
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      // Had the cancel waited for the import, the import would have committed and this would be 409 "is Completed".
      expect(cancelled.body).toMatchObject({ requestId: id, status: 'Cancelled' });

      // The worker is free for the next request as soon as the aborted import rolled back.
      const next = await call('POST', base, JSON.stringify({ integrationSortingOrder: 51, payload: '[{"no":"N1","name":"next"}]' }));
      const freed = performance.now();
      while ((await statusOf(next.body.requestId as string)) !== 'Completed') await sleep(20);
      console.log(`${backend.name}: the next request completed ${Math.round(performance.now() - freed)} ms after it was sent`);

      expect(await statusOf(id)).toBe('Cancelled');
      expect(await customers(), 'only the next request wrote a row').toBe(1);
    }, 600_000);

    it('a reset while the import writes answers Pending at once; the request is then imported again from the start, once', async () => {
      const before = await customers();
      const records = Array.from({ length: RECORDS }, (_, i) => `{"no":"R${i}","name":"Reset ${i}"}`);
      const submitted = await call('POST', base, JSON.stringify({ integrationSortingOrder: 51, payload: `[${records.join(',')}]` }));
      expect(submitted.status).toBe(202);
      const id = submitted.body.requestId as string;
      // Only a Processing request can be reset: the write lock alone may be another writer's (the claim,
      // the workers' heartbeat) while the request is still Pending, and the reset of a Pending request
      // is refused once its import has committed.
      let status = '';
      while ((status = await statusOf(id)) !== 'Processing' || !(await importWriting())) {
        expect(status, 'the import ended before it was seen writing').not.toMatch(/Completed|Failed/);
        await sleep(20);
      }
      const sent = performance.now();
      const reset = await call('POST', `${base}(${id})/Microsoft.NAV.reset`);
      console.log(`${backend.name}: the reset answered in ${Math.round(performance.now() - sent)} ms`);
      expect(reset.status, JSON.stringify(reset.body)).toBe(200);
      expect(reset.body).toMatchObject({ requestId: id, status: 'Pending' });

      while ((status = await statusOf(id)) !== 'Completed') {
        expect(status).not.toMatch(/Failed|Cancelled/);
        await sleep(200);
      }
      expect(await customers(), 'every record once').toBe(before + RECORDS);
    }, 600_000);
  });
});
