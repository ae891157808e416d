/**
 * Resubmit (Microsoft.NAV.resubmit), on SQLite and PostgreSQL: a Failed or Cancelled request becomes a
 * new Pending request with the same payload and integration (a payload stored in chunks too), the two
 * name each other, a request is resubmitted once, and every other status, an unknown id or an
 * integration that no longer accepts bulk requests is refused, changing nothing. The console's button
 * does the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/databases.js';
import { API, startTestServiceOn, type TestService } from '../helpers/service.js';
import { until } from '../helpers/until.js';

const SET = `${API}/bulkImportRequests`;

interface Details {
  status: string;
  recordCount: number;
  insertedCount: number;
  skippedCount: number;
  errorMessage: string;
  resubmittedFrom: string | null;
  resubmittedAs: string | null;
  integrationSortingOrder: number;
  submittedBy: string | null;
}

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`resubmit on ${backend.name}`, () => {
    let t: TestService;

    beforeAll(async () => {
      t = await startTestServiceOn(backend, { workers: true });
      const raised = await t.inject({ method: 'PATCH', url: `${API}/integrations(10)`, payload: { maxPayloadSizeKb: 8192 } });
      expect(raised.statusCode, raised.body).toBe(200);
    });
    afterAll(async () => {
      await t?.cleanup();
    });

    const submit = async (records: object[]): Promise<string> => {
      const res = await t.inject({ method: 'POST', url: SET, payload: { integrationSortingOrder: 10, payload: JSON.stringify(records) } });
      expect(res.statusCode, res.body).toBe(202);
      return res.json<{ requestId: string }>().requestId;
    };
    const details = async (id: string): Promise<Details> => (await t.inject({ method: 'GET', url: `${SET}(${id})/details` })).json();
    const ended = (id: string) =>
      until(() => details(id), { holds: (d) => d.status !== 'Pending' && d.status !== 'Processing', what: `request ${id} ended` });
    const resubmit = (id: string) => t.inject({ method: 'POST', url: `${SET}(${id})/Microsoft.NAV.resubmit` });
    const requestCount = async (): Promise<number> =>
      Number(
        (
          await t.service.db.kysely
            .selectFrom('ifw_bulk_import_request')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    it('makes a Failed request (payload in chunks) a new Pending request with the same payload; the two name each other', async () => {
      // Over 1 MiB, so stored in chunks; the last record has no name, so the request fails as a whole.
      const records: object[] = Array.from({ length: 30_000 }, (_, i) => ({ no: `RS${i}`, name: `Customer ${i}` }));
      records.push({ no: 'RS-LAST' });
      const failedId = await submit(records);
      const failed = await ended(failedId);
      expect(failed.status).toBe('Failed');

      // Skip the bad record from now on: the resubmitted request imports the rest.
      const skip = await t.inject({ method: 'PATCH', url: `${API}/integrations(10)`, payload: { onRecordError: 'skip' } });
      expect(skip.statusCode, skip.body).toBe(200);

      const res = await resubmit(failedId);
      expect(res.statusCode, res.body).toBe(202);
      const body = res.json<{ requestId: string; status: string; submittedAt: string }>();
      expect(body.status).toBe('Pending');
      expect(body.requestId).not.toBe(failedId);
      expect(res.headers.location).toBe(`${SET}(${body.requestId})`);

      const done = await ended(body.requestId);
      expect(done).toMatchObject({
        status: 'Completed',
        recordCount: 30_000,
        insertedCount: 30_000,
        skippedCount: 1,
        integrationSortingOrder: 10,
        resubmittedFrom: failedId,
        resubmittedAs: null,
        submittedBy: 'application:test-super',
      });
      expect((await details(failedId)).resubmittedAs).toBe(body.requestId);
      expect((await details(failedId)).status).toBe('Failed');

      const again = await resubmit(failedId);
      expect(again.statusCode).toBe(409);
      expect(again.json()).toEqual({
        error: {
          code: 'invalidStatusTransition',
          message: `Request ${failedId} was already resubmitted as ${body.requestId}; poll that request, or resubmit it if it failed too.`,
        },
      });
      await t.inject({ method: 'PATCH', url: `${API}/integrations(10)`, payload: { onRecordError: 'fail' } });
    });

    it('resubmits a Cancelled request, and refuses Pending, Processing and Completed ones, unknown ids and an integration that stopped accepting', async () => {
      const completed = await submit([{ no: 'RC1', name: 'One' }]);
      expect((await ended(completed)).status).toBe('Completed');
      const before = await requestCount();
      const refused = await resubmit(completed);
      expect(refused.statusCode).toBe(409);
      expect(refused.json()).toEqual({
        error: {
          code: 'invalidStatusTransition',
          message: `Request ${completed} is Completed; only Failed or Cancelled requests can be resubmitted.`,
        },
      });
      const unknown = await resubmit('0190f0e0-0000-7000-8000-000000000000');
      expect(unknown.statusCode).toBe(404);
      expect(await requestCount()).toBe(before);

      // A Cancelled request: the processor is On Hold while it is submitted and cancelled.
      const entry = `${API}/jobQueueEntries('bulk-import-processor')`;
      expect((await t.inject({ method: 'POST', url: `${entry}/Microsoft.NAV.setOnHold` })).statusCode).toBe(200);
      const cancelledId = await submit([{ no: 'RC2', name: 'Two' }]);
      expect((await t.inject({ method: 'POST', url: `${SET}(${cancelledId})/Microsoft.NAV.cancel` })).statusCode).toBe(200);
      expect((await t.inject({ method: 'POST', url: `${entry}/Microsoft.NAV.setReady` })).statusCode).toBe(200);
      expect((await details(cancelledId)).status).toBe('Cancelled');
      const off = await t.inject({ method: 'PATCH', url: `${API}/integrations(10)`, payload: { acceptBulkImportRequests: false } });
      expect(off.statusCode, off.body).toBe(200);
      const notAccepting = await resubmit(cancelledId);
      expect(notAccepting.statusCode).toBe(400);
      expect(notAccepting.json<{ error: { code: string } }>().error.code).toBe('bulkImportNotEnabled');
      expect((await details(cancelledId)).resubmittedAs).toBeNull();
      await t.inject({ method: 'PATCH', url: `${API}/integrations(10)`, payload: { acceptBulkImportRequests: true } });
      const res = await resubmit(cancelledId);
      expect(res.statusCode, res.body).toBe(202);
      expect((await ended(res.json<{ requestId: string }>().requestId)).status).toBe('Completed');
    });
  });
}
