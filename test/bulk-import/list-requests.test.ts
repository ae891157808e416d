import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const SET = `${API}/bulkImportRequests`;
const clock = manualClock('2026-03-01T00:00:00.000Z');
let t: TestService;
const ids: string[] = [];

beforeAll(async () => {
  t = await startTestService({ workers: false, clock, config: { maxPageSize: 100 } });
  for (let i = 0; i < 250; i++) {
    clock.advance(1000);
    const res = await t.inject({ method: 'POST', url: SET, payload: { integrationSortingOrder: 10, payload: '[]' } });
    ids.push(res.json().requestId as string);
  }
  // Give some of them other states, so that the filters have something to tell apart.
  await t.service.db.kysely
    .updateTable('ifw_bulk_import_request')
    .set({ status: 'Completed' })
    .where('request_id', 'in', ids.slice(0, 30))
    .execute();
  await t.service.db.kysely
    .updateTable('ifw_bulk_import_request')
    .set({ status: 'Failed' })
    .where('request_id', 'in', ids.slice(30, 35))
    .execute();
});
afterAll(async () => t.cleanup());

const get = async (url: string) => {
  const res = await t.inject({ url: url.replace(/^https?:\/\/[^/]+/, '') });
  return { status: res.statusCode, body: res.json() };
};

describe('GET bulkImportRequests (list)', () => {
  it('pages through every request with @odata.nextLink, oldest first, each once', async () => {
    const seen: string[] = [];
    let url: string | undefined = SET;
    let pages = 0;
    while (url !== undefined) {
      const { status, body } = await get(url);
      expect(status).toBe(200);
      expect(body.value.length).toBeLessThanOrEqual(100);
      seen.push(...body.value.map((r: { requestId: string }) => r.requestId));
      url = body['@odata.nextLink'];
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
  });

  it('gives no next link when the page holds the rest', async () => {
    const { body } = await get(`${SET}?$skip=200`);
    expect(body.value).toHaveLength(50);
    expect(body['@odata.nextLink']).toBeUndefined();
  });

  it('honours $top and $skip without a next link when $top fits in one page', async () => {
    const { body } = await get(`${SET}?$top=10&$skip=5`);
    expect(body.value.map((r: { requestId: string }) => r.requestId)).toEqual(ids.slice(5, 15));
    expect(body['@odata.nextLink']).toBeUndefined();
  });

  it('splits a $top larger than a page and stops at $top', async () => {
    const first = await get(`${SET}?$top=150`);
    expect(first.body.value).toHaveLength(100);
    const next = first.body['@odata.nextLink'] as string;
    expect(next).toContain('$top=50');
    expect(next).toContain('$skip=100');
    const second = await get(next);
    expect(second.body.value).toHaveLength(50);
    expect(second.body['@odata.nextLink']).toBeUndefined();
    expect([...first.body.value, ...second.body.value].map((r: { requestId: string }) => r.requestId)).toEqual(ids.slice(0, 150));
  });

  it('filters on status', async () => {
    const { body } = await get(`${SET}?$filter=status eq 'Failed'`);
    expect(body.value.map((r: { requestId: string }) => r.requestId)).toEqual(ids.slice(30, 35));
    expect(body.value.every((r: { status: string }) => r.status === 'Failed')).toBe(true);
  });

  it('filters on status and integrationSortingOrder together, and keeps the filter in the next link', async () => {
    const first = await get(`${SET}?$filter=${encodeURIComponent("status eq 'Pending' and integrationSortingOrder eq 10")}`);
    expect(first.body.value).toHaveLength(100);
    const next = first.body['@odata.nextLink'] as string;
    expect(decodeURIComponent(next)).toContain("$filter=status eq 'Pending' and integrationSortingOrder eq 10");
    const second = await get(next);
    expect(second.body.value).toHaveLength(100);
    const third = await get(second.body['@odata.nextLink'] as string);
    expect(third.body.value).toHaveLength(15);
    expect(third.body['@odata.nextLink']).toBeUndefined();
    const all = [...first.body.value, ...second.body.value, ...third.body.value].map((r: { requestId: string }) => r.requestId);
    expect(all).toEqual(ids.slice(35));
    const none = await get(`${SET}?$filter=integrationSortingOrder eq 11`);
    expect(none.body.value).toEqual([]);
  });

  it('filters on submittedAt and orders newest first on request', async () => {
    const { body } = await get(`${SET}?$filter=submittedAt ge 2026-03-01T00:04:00Z&$orderby=submittedAt desc&$top=3`);
    expect(body.value.map((r: { requestId: string }) => r.requestId)).toEqual([ids[249], ids[248], ids[247]]);
  });

  it.each([
    ['an unknown property', "$filter=payload eq 'x'"],
    ['an unknown status', "$filter=status eq 'Done'"],
    ['a string for an integer property', "$filter=integrationSortingOrder eq '10'"],
    ['or', "$filter=status eq 'Failed' or status eq 'Completed'"],
    ['a dangling comparison', '$filter=status eq'],
    ['a negative $top', '$top=-1'],
    ['a non-numeric $skip', '$skip=abc'],
    ['an unsupported $orderby', '$orderby=status'],
    ['an unknown query option', '$expand=details'],
  ])('refuses %s with 400 invalidQuery or invalidRequest', async (_what, query) => {
    const { status, body } = await get(`${SET}?${query}`);
    expect(status).toBe(400);
    expect(['invalidQuery', 'invalidRequest']).toContain(body.error.code);
  });
});
