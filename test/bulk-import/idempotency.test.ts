/**
 * `Idempotency-Key` on submit, on SQLite and PostgreSQL: a repeat answers the first 202 body and stores
 * nothing, the same key with another body is 422, keys are per caller, a key expires after its window
 * (moved clock), a malformed key is 400 before the body is read, 50 repeats sent together make one
 * request (on PostgreSQL through two services with pools of their own, as two hosts would), and a
 * payload streamed in chunks is the same payload as a small one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRetentionCleanup } from '../../src/bulk-import/retention.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { movableClock } from '../helpers/clock.js';
import { until } from '../helpers/until.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const SET = `${API}/bulkImportRequests`;
const HOUR = 3_600_000;

const customers = (...nos: string[]) => ({
  integrationSortingOrder: 10,
  payload: JSON.stringify(nos.map((no) => ({ no, name: `Customer ${no}` }))),
});

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`Idempotency-Key on ${backend.name}`, () => {
    const clock = movableClock();
    let fresh: FreshDatabase | undefined;
    let t: TestService;
    let keyNo = 0;
    const newKey = () => `key-${backend.name}-${++keyNo}-${Date.now()}`;

    beforeAll(async () => {
      fresh = backend.name === 'postgres' ? await backend.fresh() : undefined;
      t = await startTestService({ clock, databaseUrl: fresh?.url });
    });
    afterAll(async () => {
      await t?.cleanup();
      await fresh?.cleanup();
    });

    const submit = (body: object, key?: string, headers: Record<string, string> = {}) =>
      t.inject({
        method: 'POST',
        url: SET,
        payload: body,
        headers: { ...headers, ...(key === undefined ? {} : { 'idempotency-key': key }) },
      });

    const requestCount = async (): Promise<number> => {
      const row = await t.service.db.kysely
        .selectFrom('ifw_bulk_import_request')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };

    it('answers a repeat with the first 202 body and the header Idempotent-Replayed, and stores nothing new', async () => {
      const key = newKey();
      const before = await requestCount();
      const first = await submit(customers('I1'), key);
      expect(first.statusCode, first.body).toBe(202);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const again = await submit(customers('I1'), key);
      expect(again.statusCode, again.body).toBe(202);
      expect(again.json()).toEqual(first.json());
      expect(again.headers.location).toBe(first.headers.location);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await requestCount()).toBe(before + 1);
      // Without a key, the same body is a new request, as always.
      expect((await submit(customers('I1'))).json<{ requestId: string }>().requestId).not.toBe(
        first.json<{ requestId: string }>().requestId,
      );
    });

    it('refuses the same key with another payload or another integration with 422, and stores nothing', async () => {
      const key = newKey();
      expect((await submit(customers('M1'), key)).statusCode).toBe(202);
      const before = await requestCount();
      const otherPayload = await submit(customers('M2'), key);
      expect(otherPayload.statusCode).toBe(422);
      expect(otherPayload.json()).toEqual({
        error: {
          code: 'idempotencyKeyReused',
          message: 'This Idempotency-Key was used with another body (another integration or payload). Use a new key for a new submission.',
        },
      });
      const otherIntegration = await submit({ ...customers('M1'), integrationSortingOrder: 20 }, key);
      expect([400, 422]).toContain(otherIntegration.statusCode);
      expect(await requestCount()).toBe(before);
    });

    it('keeps keys per caller: the same key from another application is its own request', async () => {
      const key = newKey();
      const a = await submit(customers('C1'), key);
      const b = await submit(customers('C1'), key, await t.headersFor('VENDOR IF ALL'));
      expect(a.statusCode).toBe(202);
      expect(b.statusCode).toBe(202);
      expect(b.headers['idempotent-replayed']).toBeUndefined();
      expect(b.json<{ requestId: string }>().requestId).not.toBe(a.json<{ requestId: string }>().requestId);
    });

    it('refuses a malformed key with 400 before anything is stored', async () => {
      const before = await requestCount();
      for (const key of ['x'.repeat(256), ' ', 'caf\u00e9']) {
        const res = await t.inject({
          method: 'POST',
          url: SET,
          payload: customers('B1'),
          headers: { 'idempotency-key': Buffer.from(key, 'utf8').toString('latin1') },
        });
        expect(res.statusCode, key).toBe(400);
        expect(res.json<{ error: { code: string; message: string } }>().error.code).toBe('invalidIdempotencyKey');
        expect(res.json<{ error: { message: string } }>().error.message).toMatch(
          /^Idempotency-Key must be 1 to 255 visible ASCII characters/,
        );
      }
      expect(await requestCount()).toBe(before);
    });

    it('makes one request of 50 repeats sent together', async () => {
      const key = newKey();
      const before = await requestCount();
      const answers = await Promise.all(Array.from({ length: 50 }, () => submit(customers('R1', 'R2'), key)));
      expect(answers.map((a) => a.statusCode)).toEqual(Array(50).fill(202));
      expect(new Set(answers.map((a) => a.json<{ requestId: string }>().requestId)).size).toBe(1);
      expect(answers.filter((a) => a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
      expect(await requestCount()).toBe(before + 1);
    });

    it('treats a payload streamed in chunks like the same payload sent small, and keeps no chunk of a repeat', async () => {
      const key = newKey();
      const raised = await t.inject({ method: 'PATCH', url: `${API}/integrations(10)`, payload: { maxPayloadSizeKb: 4096 } });
      expect(raised.statusCode, raised.body).toBe(200);
      // Over 1 MiB: the body is received in chunks (upload.ts).
      const nos = Array.from({ length: 30_000 }, (_, i) => `S${i}`);
      const body = customers(...nos);
      expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(1 << 20);
      const first = await submit(body, key);
      expect(first.statusCode, first.body).toBe(202);
      const chunks = async () =>
        Number(
          (
            await t.service.db.kysely
              .selectFrom('ifw_bulk_import_payload_chunk')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const chunksAfterFirst = await chunks();
      const again = await submit(body, key);
      expect(again.json()).toEqual(first.json());
      expect(again.headers['idempotent-replayed']).toBe('true');
      // The repeat's chunks, written as they arrived, are removed once it is answered.
      await until(chunks, { holds: (n) => n === chunksAfterFirst, what: 'the repeat’s chunks removed' });
      const mismatch = await submit({ ...body, payload: body.payload.replace('S1"', 'T1"') }, key);
      expect(mismatch.statusCode).toBe(422);
    });

    if (backend.name === 'postgres') {
      it('makes one request of 50 repeats sent together to two services on one database', async () => {
        // Its data directory is the first one's: the same development token issuer, so the same caller.
        const other = await startTestService({ clock, databaseUrl: fresh!.url, applyExample: false, config: { dataDir: t.dir } });
        try {
          const key = newKey();
          const before = await requestCount();
          const answers = await Promise.all(
            Array.from({ length: 50 }, (_, i) =>
              (i % 2 === 0 ? t : other).inject({
                method: 'POST',
                url: SET,
                payload: customers('P1'),
                headers: { 'idempotency-key': key, ...(i % 2 === 0 ? t.headers : other.headers) },
              }),
            ),
          );
          expect(answers.map((a) => a.statusCode)).toEqual(Array(50).fill(202));
          expect(new Set(answers.map((a) => a.json<{ requestId: string }>().requestId)).size).toBe(1);
          expect(await requestCount()).toBe(before + 1);
        } finally {
          await other.cleanup();
        }
      });
    }

    // Last: moving the clock a day on also ends the test tokens' lifetime.
    it('lets a key expire after its window (24 hours), and retention removes expired keys', async () => {
      const key = newKey();
      const first = (await submit(customers('E1'), key)).json<{ requestId: string }>();
      clock.advance(23 * HOUR);
      expect((await submit(customers('E1'), key)).json<{ requestId: string }>().requestId).toBe(first.requestId);
      clock.advance(HOUR + 1);
      const later = await submit(customers('E1'), key);
      expect(later.statusCode).toBe(202);
      expect(later.headers['idempotent-replayed']).toBeUndefined();
      expect(later.json<{ requestId: string }>().requestId).not.toBe(first.requestId);

      const expiring = newKey();
      await submit(customers('E2'), expiring);
      clock.advance(25 * HOUR);
      await runRetentionCleanup(t.service.db.kysely, { now: clock(), retentionDays: 30 });
      const keys = await t.service.db.kysely.selectFrom('ifw_idempotency_key').select('idempotency_key').execute();
      expect(keys.map((k) => k.idempotency_key)).not.toContain(expiring);
      expect(keys.map((k) => k.idempotency_key)).not.toContain(key);
    });
  });
}
