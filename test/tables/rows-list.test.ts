/**
 * `targetTables('<name>')/rows` is a list like the others: `$filter` on the declared fields (typed as
 * declared), `$orderby`, `$top` / `$skip` with `@odata.nextLink` at the service's page size, and
 * `$count=true`. On SQLite and on PostgreSQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { API, startTestService, type TestService } from '../helpers/service.js';
import { until } from '../helpers/until.js';

const ROWS = `${API}/targetTables('gadget')/rows`;

const gadget = {
  name: 'gadget',
  primaryKey: ['id'],
  fields: [
    { name: 'id', type: 'integer' },
    { name: 'name', type: 'text', required: true },
    { name: 'price', type: 'decimal' },
    { name: 'active', type: 'boolean' },
    { name: 'born', type: 'date' },
    { name: 'seen', type: 'datetime' },
    { name: 'ref', type: 'guid' },
    { name: 'size', type: 'option', options: ['S', 'M', 'L'] },
    { name: 'first_name', type: 'text' },
  ],
};

const GUID = '0b9d6e2c-4f3a-4c1e-9a7b-2d5f8e1c3a60';
// Stored as imports store them: booleans 0/1, dates as text, date-times in toISOString() form, GUIDs lowercase.
const INSERT = `insert into gadget (id, name, price, active, born, seen, ref, size, first_name) values
  (1, 'alpha',   2.5,  1,    '2026-01-31', '2026-01-31T10:00:00.000Z', '${GUID}', 'S',  'ann'),
  (2, 'bravo',   null, 0,    null,         null,                       null,      'M',  null),
  (3, 'charlie', 10,   null, '2025-12-01', '2025-12-01T08:30:00.000Z', null,      null, 'cid'),
  (4, 'delta',   3,    1,    '2026-02-01', '2026-02-01T00:00:00.000Z', null,      'L',  'dee'),
  (5, 'echo',    7.25, 0,    '2026-03-15', '2026-03-15T12:00:00.000Z', null,      'M',  'eve')`;

interface RowsAnswer {
  '@odata.context': string;
  '@odata.count'?: number;
  '@odata.nextLink'?: string;
  value: Record<string, unknown>[];
}

describe.each(BACKENDS)('target table rows on $name', (backend) => {
  describe.skipIf(backend.skip)(backend.name, () => {
    let fresh: FreshDatabase;
    let t: TestService;
    beforeAll(async () => {
      fresh = await backend.fresh();
      // Pages of two: paging is exercised with a handful of rows.
      t = await startTestService({ databaseUrl: fresh.url, workers: false, config: { maxPageSize: 2 } });
      expect((await t.inject({ method: 'POST', url: `${API}/targetTables`, payload: gadget })).statusCode).toBe(201);
      await sql.raw(INSERT).execute(t.service.db.kysely);
    });
    afterAll(async () => {
      await t?.cleanup();
      await fresh?.cleanup();
    });

    const get = async (query: string) => {
      const res = await t.inject({ url: `${ROWS}${query}` });
      return { status: res.statusCode, body: res.json<RowsAnswer & { error?: { code: string; message: string } }>() };
    };
    /** Every row of every page, following @odata.nextLink as a client would. */
    const all = async (query: string) => {
      const pages: RowsAnswer[] = [];
      let url: string | undefined = `${ROWS}${query}`;
      while (url !== undefined) {
        const res = await t.inject({ url });
        expect(res.statusCode).toBe(200);
        const page = res.json<RowsAnswer>();
        pages.push(page);
        url =
          page['@odata.nextLink'] === undefined
            ? undefined
            : new URL(page['@odata.nextLink']).pathname + new URL(page['@odata.nextLink']).search;
      }
      return { pages, ids: pages.flatMap((p) => p.value.map((r) => r.id)) };
    };
    const ids = async (query: string) => (await all(query)).ids;

    it('reads the rows typed as declared, by primary key, at most the page size per answer', async () => {
      const first = await get('');
      expect(first.status).toBe(200);
      expect(first.body['@odata.context']).toBe(`${API}/$metadata#targetTables('gadget')/rows`);
      expect(first.body.value).toEqual([
        {
          id: 1,
          name: 'alpha',
          price: 2.5,
          active: true,
          born: '2026-01-31',
          seen: '2026-01-31T10:00:00.000Z',
          ref: GUID,
          size: 'S',
          first_name: 'ann',
        },
        { id: 2, name: 'bravo', price: null, active: false, born: null, seen: null, ref: null, size: 'M', first_name: null },
      ]);
      expect(await ids('')).toEqual([1, 2, 3, 4, 5]);
    });

    it.each([
      ["name eq 'charlie'", [3]],
      ["name ne 'charlie'", [1, 2, 4, 5]],
      ['id gt 3', [4, 5]],
      ['id ge 2 and id le 3', [2, 3]],
      ['price lt 3', [1]],
      ['price ge 3.0 and price le 7.25', [4, 5]],
      ['active eq true', [1, 4]],
      ['active eq false', [2, 5]],
      ['active eq null', [3]],
      ['born ge 2026-01-31', [1, 4, 5]],
      ["born lt '2026-01-31'", [3]],
      ['seen gt 2026-01-31T10:00:00Z', [4, 5]],
      ['seen eq 2026-01-31T11:00:00+01:00', [1]],
      [`ref eq ${GUID.toUpperCase()}`, [1]],
      [`ref eq '${GUID}'`, [1]],
      ["size eq 'M'", [2, 5]],
      ['size eq null', [3]],
      ['price ne null', [1, 3, 4, 5]],
      ["first_name eq 'dee'", [4]],
      ["name eq 'o''brien'", []],
    ])('$filter=%s', async (filter, expected) => {
      expect(await ids(`?$filter=${encodeURIComponent(filter)}`)).toEqual(expected);
    });

    it.each([
      [
        'a property that is not a field',
        'colour eq 1',
        'cannot use property "colour"; filterable properties: id, name, price, active, born, seen, ref, size, first_name',
      ],
      ['a name every object inherits', 'constructor eq 1', 'cannot use property "constructor"'],
      ['another inherited name', "toString eq 'x'", 'cannot use property "toString"'],
      ['the prototype itself', '__proto__ eq null', 'cannot use property "__proto__"'],
      ['a string for an integer', "id eq '1'", 'does not fit property "id" (integer)'],
      ['a fraction for an integer', 'id eq 1.5', 'does not fit property "id" (integer)'],
      ['an integer beyond 2^53', 'id eq 9007199254740993', 'within ±9007199254740991'],
      ['an unquoted string', 'name eq alpha', 'is not understood at position 1'],
      ['a value outside the options', "size eq 'XL'", 'size is one of S, M, L'],
      ['an impossible date', 'born eq 2026-02-30', 'a date such as 2026-01-31'],
      ['an ordering comparison with null', 'price gt null', 'null can only be compared with eq or ne'],
      ['a word that is not a boolean', 'active eq yes', 'is not understood'],
      ['"or"', 'id eq 1 or id eq 2', 'only "and" joins comparisons'],
    ])('refuses $filter with %s: 400 invalidQuery', async (_what, filter, message) => {
      const res = await get(`?$filter=${encodeURIComponent(filter)}`);
      expect(res.status).toBe(400);
      expect(res.body.error?.code).toBe('invalidQuery');
      expect(res.body.error?.message).toContain(message);
    });

    it('pages through @odata.nextLink, keeping the filter, the order and $count, in the URL form callers write', async () => {
      const { pages, ids: seen } = await all(`?$filter=${encodeURIComponent('id ge 2')}&$orderby=id%20desc&$count=true`);
      expect(seen).toEqual([5, 4, 3, 2]);
      expect(pages.map((p) => p.value.length)).toEqual([2, 2]);
      expect(pages.map((p) => p['@odata.count'])).toEqual([4, 4]);
      const next = new URL(pages[0]!['@odata.nextLink']!);
      expect(next.pathname).toBe(`${API}/targetTables('gadget')/rows`);
      expect(Object.fromEntries(next.searchParams)).toEqual({ $filter: 'id ge 2', $orderby: 'id desc', $count: 'true', $skip: '2' });
      expect(pages[1]!['@odata.nextLink']).toBeUndefined();
    });

    it('honours $top and $skip within the page size', async () => {
      expect(await ids('?$top=3')).toEqual([1, 2, 3]);
      expect(await ids('?$skip=3')).toEqual([4, 5]);
      expect(await ids('?$top=1&$skip=4')).toEqual([5]);
      const none = await get('?$top=0&$count=true');
      expect(none.body).toEqual({ '@odata.context': `${API}/$metadata#targetTables('gadget')/rows`, '@odata.count': 5, value: [] });
    });

    it('counts the rows matching the filter on all pages with $count=true, and puts the count before value', async () => {
      const res = await t.inject({ url: `${ROWS}?$count=true&$filter=${encodeURIComponent('id ne 4')}` });
      expect(Object.keys(res.json<RowsAnswer>())).toEqual(['@odata.context', '@odata.count', 'value', '@odata.nextLink']);
      expect(res.json<RowsAnswer>()['@odata.count']).toBe(4);
      expect((await get(`?$count=true&$top=1&$filter=${encodeURIComponent('active eq true')}`)).body['@odata.count']).toBe(2);
      expect((await get('?$count=false')).body['@odata.count']).toBeUndefined();
      expect((await get('?$count=yes')).body.error).toEqual({ code: 'invalidQuery', message: '$count must be true or false, got "yes".' });
    });

    it('orders by any declared field, nulls first ascending and last descending, the primary key breaking ties', async () => {
      expect(await ids('?$orderby=price')).toEqual([2, 1, 4, 5, 3]);
      expect(await ids('?$orderby=price%20desc')).toEqual([3, 5, 4, 1, 2]);
      expect(await ids('?$orderby=active%20desc,name%20desc')).toEqual([4, 1, 5, 2, 3]);
      expect(await ids('?$orderby=size,id%20desc')).toEqual([3, 4, 5, 2, 1]);
      expect(await ids('?$orderby=id%20desc')).toEqual([5, 4, 3, 2, 1]);
      const refused = await get('?$orderby=colour');
      expect(refused.status).toBe(400);
      expect(refused.body.error?.message).toContain('with a property among: id, name, price, active, born, seen, ref, size, first_name');
    });

    it('refuses a query parameter it does not support, naming those it does', async () => {
      const res = await get('?$select=name');
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        code: 'invalidRequest',
        message: 'the query has an unknown parameter "$select"; allowed: $filter, $orderby, $top, $skip, $count',
      });
    });

    it('answers 404 for a table that is not declared', async () => {
      const res = await t.inject({ url: `${API}/targetTables('nope')/rows?$filter=${encodeURIComponent('id eq 1')}` });
      expect(res.statusCode).toBe(404);
    });
  });
});

describe('the rows endpoint in the OpenAPI document and the docs', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ workers: true });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('declares its query options and its answer: rows as open objects, described', async () => {
    const doc = (await t.inject({ url: '/docs/json' })).json<{
      paths: Record<
        string,
        { get: { parameters: { name: string; in: string }[]; responses: Record<string, { content: Record<string, { schema: unknown }> }> } }
      >;
    }>();
    const route = doc.paths[`${API}/targetTables({key})/rows`]!.get;
    expect(route.parameters.filter((p) => p.in === 'query').map((p) => p.name)).toEqual(['$filter', '$orderby', '$top', '$skip', '$count']);
    const schema = route.responses['200']!.content['application/json']!.schema as {
      properties: Record<string, { items?: { type: string; additionalProperties: boolean; description: string } }>;
    };
    expect(Object.keys(schema.properties)).toEqual(['@odata.context', '@odata.count', 'value', '@odata.nextLink']);
    expect(schema.properties.value!.items).toMatchObject({ type: 'object', additionalProperties: true });
    expect(schema.properties.value!.items!.description).toContain("One property per field of the table's declaration");
  });

  it('answers the examples of docs/integrations.md as documented', async () => {
    const payload = fs.readFileSync(path.resolve(import.meta.dirname, '../../examples/customers-payload.json'), 'utf8');
    const submitted = await t.inject({
      method: 'POST',
      url: `${API}/bulkImportRequests`,
      payload: { integrationSortingOrder: 10, payload },
    });
    const { requestId } = submitted.json<{ requestId: string }>();
    await until(async () => (await t.inject({ url: `${API}/bulkImportRequests(${requestId})` })).json<{ status: string }>().status, {
      what: 'the example payload Completed',
      holds: (status) => status === 'Completed',
    });
    const doc = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/integrations.md'), 'utf8');
    const examples = [...doc.matchAll(/^```\nGET (targetTables\('customer'\)\/rows\?.+)\n```\n```json\n(.+)\n```$/gm)];
    expect(examples.length).toBe(3);
    for (const [, url, answer] of examples) {
      const res = await t.inject({ url: `${API}/${url!.replace(/ /g, '%20')}` });
      expect(res.json(), url).toEqual(JSON.parse(answer!));
    }
  });
});
