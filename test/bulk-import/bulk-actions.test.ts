/**
 * Bulk actions (bulkImportRequests/Microsoft.NAV.bulkCancel|bulkReset|bulkResubmit|bulkDelete), DELETE of
 * one request and the payload download, on SQLite and PostgreSQL through the API: each state rule holds
 * per request as for a single action (a refused request is reported with the reason, the others go
 * ahead), a call takes at most 1 000 requests and says whether more remain, continuing from `next`
 * takes every request once (a filter matching 10 000 requests: bulk-actions.slow.test.ts), a bad filter changes
 * nothing, and a deleted request leaves no payload, chunk, error or Idempotency-Key behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/databases.js';
import { seedRequests, type BulkAnswer, type SeedRow } from '../helpers/bulk-requests.js';
import { API, startTestServiceOn, type TestService } from '../helpers/service.js';

const SET = `${API}/bulkImportRequests`;
const STATUSES = ['Pending', 'Processing', 'Completed', 'Failed', 'Cancelled'] as const;

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`bulk actions, delete and payload on ${backend.name}`, () => {
    let t: TestService;

    beforeAll(async () => {
      t = await startTestServiceOn(backend, { workers: false });
    });
    afterAll(async () => {
      await t?.cleanup();
    });

    const db = () => t.service.db.kysely;
    const seed = (count: number, row: SeedRow) => seedRequests(db(), count, row);
    const statusOf = async (id: string) =>
      (await db().selectFrom('ifw_bulk_import_request').select('status').where('request_id', '=', id).executeTakeFirst())?.status;
    const bulk = async (action: string, body: object): Promise<BulkAnswer> => {
      const res = await t.inject({ method: 'POST', url: `${SET}/Microsoft.NAV.bulk${action}`, payload: body });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<BulkAnswer>();
    };
    const clear = async () => {
      await db().deleteFrom('ifw_bulk_import_error').execute();
      await db().deleteFrom('ifw_bulk_import_payload_chunk').execute();
      await db().deleteFrom('ifw_idempotency_key').execute();
      await db().deleteFrom('ifw_bulk_import_request').execute();
    };

    it('cancel: Pending and Processing are cancelled, every ended request is refused with the reason, changing nothing', async () => {
      await clear();
      const by: Record<string, string> = Object.fromEntries(
        await Promise.all(STATUSES.map(async (s) => [s, (await seed(1, { status: s, integration: 20 }))[0]!])),
      );
      const answer = await bulk('Cancel', { filter: 'integrationSortingOrder eq 20' });
      expect(answer).toMatchObject({ action: 'cancel', matched: 5, processed: 5, succeeded: 2, refused: 3, more: false, next: null });
      const outcome = Object.fromEntries(answer.results.map((r) => [r.requestId, r]));
      for (const s of ['Pending', 'Processing']) {
        expect(outcome[by[s]!]).toMatchObject({ outcome: 'Cancelled', status: 'Cancelled', error: null });
        expect(await statusOf(by[s]!)).toBe('Cancelled');
      }
      for (const s of ['Completed', 'Failed', 'Cancelled']) {
        expect(outcome[by[s]!]).toMatchObject({ outcome: 'Refused', status: s, error: { code: 'invalidStatusTransition' } });
        expect(outcome[by[s]!]!.error!.message).toBe(`Request ${by[s]} is ${s}; only Pending or Processing requests can be cancelled.`);
        expect(await statusOf(by[s]!)).toBe(s);
      }
    });

    it('reset: only Processing goes back to Pending, the rest is refused', async () => {
      await clear();
      const by: Record<string, string> = Object.fromEntries(
        await Promise.all(STATUSES.map(async (s) => [s, (await seed(1, { status: s }))[0]!])),
      );
      const answer = await bulk('Reset', { filter: '' });
      expect(answer).toMatchObject({ matched: 5, succeeded: 1, refused: 4 });
      for (const r of answer.results) {
        if (r.requestId === by.Processing) expect(r).toMatchObject({ outcome: 'Reset', status: 'Pending', error: null });
        else expect(r).toMatchObject({ outcome: 'Refused', error: { code: 'invalidStatusTransition' } });
      }
      const row = await db()
        .selectFrom('ifw_bulk_import_request')
        .selectAll()
        .where('request_id', '=', by.Processing!)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'Pending', lease_owner: null, attempts: 0 });
      expect(await statusOf(by.Completed!)).toBe('Completed');
    });

    it('resubmit: Failed and Cancelled become new requests naming each other, once; the rest is refused', async () => {
      await clear();
      const by: Record<string, string> = Object.fromEntries(
        await Promise.all(STATUSES.map(async (s) => [s, (await seed(1, { status: s, submittedBy: 'user:ops' }))[0]!])),
      );
      const answer = await bulk('Resubmit', { filter: "submittedBy eq 'user:ops'" });
      expect(answer).toMatchObject({ matched: 5, succeeded: 2, refused: 3 });
      for (const s of ['Failed', 'Cancelled']) {
        const r = answer.results.find((x) => x.requestId === by[s])!;
        expect(r).toMatchObject({ outcome: 'Resubmitted', status: s, error: null });
        const created = await db()
          .selectFrom('ifw_bulk_import_request')
          .selectAll()
          .where('request_id', '=', r.newRequestId!)
          .executeTakeFirstOrThrow();
        expect(created).toMatchObject({
          status: 'Pending',
          resubmitted_from: by[s],
          payload: '[{"no":"C1","name":"One"}]',
          integration_sorting_order: 10,
        });
      }
      // Again: the two were resubmitted already, so every request is refused and nothing is created.
      const before = await db()
        .selectFrom('ifw_bulk_import_request')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const again = await bulk('Resubmit', { filter: "submittedBy eq 'user:ops'" });
      expect(again).toMatchObject({ matched: 5, succeeded: 0, refused: 5 });
      expect(again.results.find((x) => x.requestId === by.Failed)!.error!.message).toContain('already resubmitted as');
      const after = await db()
        .selectFrom('ifw_bulk_import_request')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
    });

    it('delete: ended requests go with their errors, chunks and Idempotency-Keys; Pending and Processing are refused', async () => {
      await clear();
      const by: Record<string, string> = Object.fromEntries(
        await Promise.all(STATUSES.map(async (s) => [s, (await seed(1, { status: s }))[0]!])),
      );
      for (const id of Object.values(by)) {
        await db()
          .insertInto('ifw_bulk_import_error')
          .values({ request_id: id, seq: 1, record_no: 1, field: 'no', value: 'x', rule: 'r', message: 'm' })
          .execute();
        await db()
          .insertInto('ifw_bulk_import_payload_chunk')
          .values({ request_id: id, seq: 0, data: Buffer.from('[]') })
          .execute();
        await db()
          .insertInto('ifw_idempotency_key')
          .values({
            caller: 'user:ops',
            idempotency_key: id,
            fingerprint: 'f',
            request_id: id,
            submitted_at: '2026-01-01T00:00:00.000Z',
            expires_at: '2999-01-01T00:00:00.000Z',
          })
          .execute();
      }
      const answer = await bulk('Delete', { filter: '' });
      expect(answer).toMatchObject({ matched: 5, succeeded: 3, refused: 2 });
      for (const s of ['Pending', 'Processing']) {
        const r = answer.results.find((x) => x.requestId === by[s])!;
        expect(r).toMatchObject({ outcome: 'Refused', status: s, error: { code: 'requestNotEnded' } });
      }
      for (const s of ['Completed', 'Failed', 'Cancelled'])
        expect(answer.results.find((x) => x.requestId === by[s])).toMatchObject({ outcome: 'Deleted', status: null });
      const left = async (table: 'ifw_bulk_import_error' | 'ifw_bulk_import_payload_chunk' | 'ifw_idempotency_key') =>
        (await db().selectFrom(table).select('request_id').execute()).map((r) => r.request_id).sort();
      const kept = [by.Pending!, by.Processing!].sort();
      for (const table of ['ifw_bulk_import_error', 'ifw_bulk_import_payload_chunk', 'ifw_idempotency_key'] as const)
        expect(await left(table)).toEqual(kept);
      expect((await db().selectFrom('ifw_bulk_import_request').select('request_id').execute()).map((r) => r.request_id).sort()).toEqual(
        kept,
      );
    });

    it('a filter by status and time range selects exactly those requests', async () => {
      await clear();
      const inside = await seed(3, { status: 'Pending', submittedAt: '2026-11-02T10:00:00.000Z' });
      await seed(2, { status: 'Pending', submittedAt: '2026-11-05T10:00:00.000Z' });
      await seed(2, { status: 'Failed', submittedAt: '2026-11-02T10:00:00.000Z' });
      const answer = await bulk('Cancel', {
        filter: "status eq 'Pending' and submittedAt ge 2026-11-01T00:00:00Z and submittedAt lt 2026-11-03T00:00:00Z",
      });
      expect(answer.results.map((r) => r.requestId)).toEqual(inside);
      expect(answer.succeeded).toBe(3);
    });

    it('takes at most top (and 1 000) per call; next continues without taking a request twice', async () => {
      await clear();
      const ids = await seed(1205, { status: 'Completed' });
      const first = await bulk('Cancel', { filter: "status eq 'Completed'" });
      // All refused (Completed cannot be cancelled), yet they still match: next moves past them.
      expect(first).toMatchObject({ matched: 1205, processed: 1000, refused: 1000, more: true, next: ids[999] });
      expect(first.results.map((r) => r.requestId)).toEqual(ids.slice(0, 1000));
      const second = await bulk('Cancel', { filter: "status eq 'Completed'", after: first.next, top: 200 });
      expect(second).toMatchObject({ matched: 1205, processed: 200, more: true, next: ids[1199] });
      const third = await bulk('Cancel', { filter: "status eq 'Completed'", after: second.next });
      expect(third).toMatchObject({ processed: 5, more: false, next: null });
      expect(third.results.map((r) => r.requestId)).toEqual(ids.slice(1200));
      const over = await t.inject({ method: 'POST', url: `${SET}/Microsoft.NAV.bulkCancel`, payload: { filter: '', top: 1001 } });
      expect(over.statusCode).toBe(400);
      expect(over.json().error.code).toBe('invalidRequest');
    });

    it('refuses a bad filter, an unknown property or a missing filter with 400, changing nothing', async () => {
      await clear();
      const [id] = await seed(1, { status: 'Pending' });
      for (const payload of [
        { filter: "status eq 'Nope'" },
        { filter: "colour eq 'red'" },
        { filter: 'status eq' },
        {},
        { filter: '', after: 'x' },
        { filter: '', extra: 1 },
      ]) {
        const res = await t.inject({ method: 'POST', url: `${SET}/Microsoft.NAV.bulkCancel`, payload });
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expect(res.json().error.code).toMatch(/^(invalidQuery|invalidRequest)$/);
      }
      expect(await statusOf(id!)).toBe('Pending');
      const standard = await t.inject({
        method: 'POST',
        url: `${SET}/Microsoft.NAV.bulkCancel`,
        payload: { filter: '' },
        headers: await t.headersFor('VENDOR IF STANDARD'),
      });
      expect(standard.statusCode).toBe(403);
      expect(await statusOf(id!)).toBe('Pending');
    });

    it('DELETE of one request: an ended one goes (204, then 404); Pending and Processing are refused with 409', async () => {
      await clear();
      for (const s of STATUSES) {
        const [id] = await seed(1, { status: s });
        const res = await t.inject({ method: 'DELETE', url: `${SET}(${id})` });
        if (s === 'Pending' || s === 'Processing') {
          expect(res.statusCode).toBe(409);
          expect(res.json()).toEqual({
            error: {
              code: 'requestNotEnded',
              message: `Request ${id} is ${s}; only a Completed, Failed or Cancelled request can be deleted. Cancel it first if it must not be imported.`,
            },
          });
          expect(await statusOf(id!)).toBe(s);
        } else {
          expect(res.statusCode, res.body).toBe(204);
          expect(await statusOf(id!)).toBeUndefined();
          expect((await t.inject({ method: 'GET', url: `${SET}(${id})` })).statusCode).toBe(404);
          expect((await t.inject({ method: 'DELETE', url: `${SET}(${id})` })).statusCode).toBe(404);
        }
      }
      const [failed] = await seed(1, { status: 'Failed' });
      const standard = await t.inject({ method: 'DELETE', url: `${SET}(${failed})`, headers: await t.headersFor('VENDOR IF STANDARD') });
      expect(standard.statusCode).toBe(403);
      const vendor = await t.inject({ method: 'DELETE', url: `${SET}(${failed})`, headers: await t.headersFor('VENDOR IF ALL') });
      expect(vendor.statusCode).toBe(204);
    });

    it('a deleted submission frees its Idempotency-Key: the same key submits anew', async () => {
      await clear();
      const submit = () =>
        t.inject({
          method: 'POST',
          url: SET,
          headers: { 'idempotency-key': 'delete-me-1' },
          payload: { integrationSortingOrder: 10, payload: '[]' },
        });
      const first = (await submit()).json<{ requestId: string }>().requestId;
      await t.inject({ method: 'POST', url: `${SET}(${first})/Microsoft.NAV.cancel` });
      expect((await t.inject({ method: 'DELETE', url: `${SET}(${first})` })).statusCode).toBe(204);
      const second = await submit();
      expect(second.statusCode).toBe(202);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(second.json<{ requestId: string }>().requestId).not.toBe(first);
    });

    it('downloads a payload stored whole or in chunks, byte for byte, as an attachment; VENDOR IF ALL may, VENDOR IF STANDARD not', async () => {
      await clear();
      const text = '[{"no":"C1","name":"Ünïcode ✓"}]';
      const [whole] = await seed(1, { status: 'Completed', payload: text });
      const res = await t.inject({ method: 'GET', url: `${SET}(${whole})/payload`, headers: await t.headersFor('VENDOR IF ALL') });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${whole}.json"`);
      expect(res.body).toBe(text);

      // In chunks, a character split between two of them.
      const bytes = Buffer.from('[' + Array.from({ length: 300 }, (_, i) => `{"no":"C${i}","name":"Ä${i}"}`).join(',') + ']');
      const cut = bytes.indexOf(Buffer.from('Ä')) + 1;
      const parts = [bytes.subarray(0, cut), bytes.subarray(cut, 4000), bytes.subarray(4000)];
      const [chunked] = await seed(1, { status: 'Failed', payload: '' });
      await db()
        .updateTable('ifw_bulk_import_request')
        .set({ payload_chunks: 3, payload_length: bytes.toString().length })
        .where('request_id', '=', chunked!)
        .execute();
      await db()
        .insertInto('ifw_bulk_import_payload_chunk')
        .values(parts.map((data, seq) => ({ request_id: chunked!, seq, data })))
        .execute();
      const down = await t.inject({ method: 'GET', url: `${SET}(${chunked})/payload` });
      expect(down.statusCode).toBe(200);
      expect(Buffer.compare(down.rawPayload, bytes)).toBe(0);

      expect(
        (await t.inject({ method: 'GET', url: `${SET}(${whole})/payload`, headers: await t.headersFor('VENDOR IF STANDARD') })).statusCode,
      ).toBe(403);
      const unknown = await t.inject({ method: 'GET', url: `${SET}(0190f0e0-0000-7000-8000-000000000000)/payload` });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().error.code).toBe('notFound');
    });
  });
}
