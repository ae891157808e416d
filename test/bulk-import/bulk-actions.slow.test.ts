/**
 * A bulk action at scale, on SQLite and PostgreSQL through the API: a filter matching 10 000 requests is
 * worked through 1 000 a call, each request cancelled once and none of the others touched, then deleted
 * the same way. The rules of each action are in bulk-actions.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedRequests, type BulkAnswer } from '../helpers/bulk-requests.js';
import { BACKENDS } from '../helpers/databases.js';
import { API, startTestServiceOn, type TestService } from '../helpers/service.js';

const SET = `${API}/bulkImportRequests`;

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`a bulk action over 10 000 requests on ${backend.name}`, () => {
    let t: TestService;

    beforeAll(async () => {
      t = await startTestServiceOn(backend, { workers: false });
    });
    afterAll(async () => {
      await t?.cleanup();
    });

    const db = () => t.service.db.kysely;
    const bulk = async (action: string, body: object): Promise<BulkAnswer> => {
      const res = await t.inject({ method: 'POST', url: `${SET}/Microsoft.NAV.bulk${action}`, payload: body });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<BulkAnswer>();
    };

    it('works through a filter matching 10 000 requests, 1 000 a call, each request cancelled once', async () => {
      const ids = await seedRequests(db(), 10_000, { status: 'Pending', integration: 30 });
      await seedRequests(db(), 50, { status: 'Pending', integration: 31 });
      const seen: string[] = [];
      let after: string | null = null;
      let calls = 0;
      for (;;) {
        const answer: BulkAnswer = await bulk('Cancel', { filter: 'integrationSortingOrder eq 30', ...(after === null ? {} : { after }) });
        calls++;
        expect(answer.matched).toBe(10_000);
        expect(answer.processed).toBeLessThanOrEqual(1000);
        expect(answer.refused).toBe(0);
        seen.push(...answer.results.map((r) => r.requestId));
        if (!answer.more) break;
        after = answer.next;
      }
      expect(calls).toBe(10);
      expect(seen).toEqual(ids);
      const counts = await db()
        .selectFrom('ifw_bulk_import_request')
        .select(['integration_sorting_order', 'status', (eb) => eb.fn.countAll<number>().as('n')])
        .groupBy(['integration_sorting_order', 'status'])
        .execute();
      expect(counts.map((c) => [c.integration_sorting_order, c.status, Number(c.n)]).sort()).toEqual([
        [30, 'Cancelled', 10_000],
        [31, 'Pending', 50],
      ]);
      // Then deleted the same way: nothing of them is left.
      let more = true;
      let deleted = 0;
      while (more) {
        const answer = await bulk('Delete', { filter: 'integrationSortingOrder eq 30' });
        deleted += answer.succeeded;
        more = answer.more;
      }
      expect(deleted).toBe(10_000);
      const left = await db()
        .selectFrom('ifw_bulk_import_request')
        .select('request_id')
        .where('request_id', 'in', ids.slice(0, 100))
        .execute();
      expect(left).toEqual([]);
    }, 300_000);
  });
}
