/**
 * One declaration of an entity set (src/http/entity-set.ts) gives its URLs, its key parsing, its
 * `@odata.context`, its envelope schemas, its paged list answer and the key `$metadata` declares. A
 * made-up set of gadgets (string key) with parts (integer key), labels (open, no key) and a spec
 * (single-valued) shows each, first on their own, then served by a real server.
 */
import pino from 'pino';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { entitySet, type ListRequest, type ListRows } from '../../src/http/entity-set.js';
import { API_BASE } from '../../src/http/odata.js';
import { ErrorSchema, KeyParams, literalUnion } from '../../src/http/schemas.js';
import { buildServer, type App } from '../../src/http/server.js';

const GADGET_STATUSES = ['Draft', 'Released', 'Retired'] as const;

const GadgetItem = Type.Object({ code: Type.String(), size: Type.Integer(), status: literalUnion(GADGET_STATUSES) });
const gadgets = entitySet({
  name: 'gadgets',
  key: 'code',
  keyType: 'string',
  noun: 'gadget',
  item: GadgetItem,
  listOptions: ['$filter', '$top', '$skip', '$orderby', '$count'],
});
const parts = gadgets.containsMany({
  name: 'parts',
  key: 'partNo',
  keyType: 'integer',
  noun: 'gadget part',
  keyParam: 'partKey',
  item: Type.Object({ partNo: Type.Integer(), title: Type.String() }),
});
const labels = gadgets.containsMany({
  name: 'labels',
  key: null,
  item: Type.Object({}, { additionalProperties: true }),
  listOptions: ['$top', '$skip'],
});
const spec = gadgets.containsOne({ name: 'spec', key: 'code', item: Type.Object({ code: Type.String(), text: Type.String() }) });
const runs = entitySet({
  name: 'gadgetRuns',
  key: 'runId',
  keyType: 'guid',
  noun: 'gadget run',
  item: Type.Object({ runId: Type.String({ format: 'uuid' }) }),
});

const GUID = '0B9D6E2C-4F3A-4C1E-9A7B-2D5F8E1C3A60';
const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** The 404 a key that cannot be one answers, or the value. */
function keyOf<T>(parse: (raw: string) => T, raw: string): T | string {
  try {
    return parse(raw);
  } catch (err) {
    if (err instanceof AppError) return `${err.status} ${err.message}`;
    throw err;
  }
}

describe('the URLs, contexts and keys of a declared set', () => {
  it('names the collection, one entity, its bound actions and its Location', () => {
    expect(gadgets.path).toBe(`${API_BASE}/gadgets`);
    expect(gadgets.itemPath).toBe(`${API_BASE}/gadgets/:key`);
    expect(gadgets.action('release')).toBe(`${API_BASE}/gadgets/:key/Microsoft.NAV.release`);
    expect(gadgets.collectionAction('check')).toBe(`${API_BASE}/gadgets/Microsoft.NAV.check`);
    expect(gadgets.url("o'clock")).toBe(`${API_BASE}/gadgets('o''clock')`);
    expect(runs.url(GUID.toLowerCase())).toBe(`${API_BASE}/gadgetRuns(${GUID.toLowerCase()})`);
    expect(parts.url('a', 7)).toBe(`${API_BASE}/gadgets('a')/parts(7)`);
    expect(parts.path).toBe(`${API_BASE}/gadgets/:key/parts`);
    expect(parts.itemPath).toBe(`${API_BASE}/gadgets/:key/parts/:partKey`);
    expect(spec.path).toBe(`${API_BASE}/gadgets/:key/spec`);
  });

  it('answers an entity and a list with @odata.context first', () => {
    expect(Object.keys(gadgets.entity({ code: 'a', size: 1 }))).toEqual(['@odata.context', 'code', 'size']);
    expect(gadgets.entity({ code: 'a' })).toEqual({ '@odata.context': `${API_BASE}/$metadata#gadgets/$entity`, code: 'a' });
    expect(gadgets.list([{ code: 'a' }])).toEqual({ '@odata.context': `${API_BASE}/$metadata#gadgets`, value: [{ code: 'a' }] });
    expect(parts.entity("o'clock", { partNo: 1 })).toEqual({
      '@odata.context': `${API_BASE}/$metadata#gadgets('o''clock')/parts/$entity`,
      partNo: 1,
    });
    expect(parts.list('a', [])).toEqual({ '@odata.context': `${API_BASE}/$metadata#gadgets('a')/parts`, value: [] });
    expect(spec.entity({ code: 'a' })).toEqual({ '@odata.context': `${API_BASE}/$metadata#gadgets/spec/$entity`, code: 'a' });
  });

  it('reads a string key quoted or bare, a quote doubled', () => {
    expect(keyOf(gadgets.key, "('o''clock')")).toBe("o'clock");
    expect(keyOf(gadgets.key, '(plain)')).toBe('plain');
    expect(keyOf(gadgets.key, "('')")).toBe("404 No gadget with key ('').");
    expect(keyOf(gadgets.key, 'plain')).toBe('404 No gadget with key plain.');
  });

  it('reads an integer key, and refuses anything else with 404', () => {
    expect(keyOf(parts.key, '(12)')).toBe(12);
    expect(keyOf(parts.key, '(-3)')).toBe(-3);
    expect(keyOf(parts.key, "('12')")).toBe("404 No gadget part with key ('12').");
    expect(keyOf(parts.key, '(1.5)')).toBe('404 No gadget part with key (1.5).');
  });

  it('reads a GUID key bare or quoted, in lowercase, and says what a key is when it is not one', () => {
    expect(keyOf(runs.key, `(${GUID})`)).toBe(GUID.toLowerCase());
    expect(keyOf(runs.key, `('${GUID}')`)).toBe(GUID.toLowerCase());
    expect(keyOf(runs.key, '(42)')).toBe('404 No gadget run 42: a runId is a GUID.');
  });

  it('carries the key $metadata declares on every route config', () => {
    expect(gadgets.config('read')).toEqual({ permission: 'read', odataKey: ['code'] });
    expect(parts.config('configure')).toEqual({ permission: 'configure', odataKey: ['partNo'] });
    expect(labels.config('read')).toEqual({ permission: 'read', odataKey: [] });
    expect(spec.config('read')).toEqual({ permission: 'read', odataKey: ['code'] });
  });
});

describe('the envelope schemas', () => {
  it('puts @odata.context before the properties of one entity', () => {
    expect(json(gadgets.Entity)).toEqual({
      type: 'object',
      required: ['@odata.context', 'code', 'size', 'status'],
      properties: {
        '@odata.context': { type: 'string' },
        code: { type: 'string' },
        size: { type: 'integer' },
        status: { anyOf: GADGET_STATUSES.map((s) => ({ type: 'string', const: s })) },
      },
    });
  });

  it('gives a list that pages @odata.nextLink, and @odata.count before value when it counts', () => {
    expect(Object.keys(gadgets.List.properties)).toEqual(['@odata.context', '@odata.count', 'value', '@odata.nextLink']);
    expect(gadgets.List.required).toEqual(['@odata.context', 'value']);
    expect(json(gadgets.List.properties['@odata.count'])).toEqual({
      type: 'integer',
      minimum: -2147483648,
      maximum: 2147483647,
      description: 'With $count=true: the gadgets matching $filter, on all pages',
    });
    expect(json(gadgets.List.properties.value)).toEqual({ type: 'array', items: json(GadgetItem) });
    expect(Object.keys(labels.List.properties)).toEqual(['@odata.context', 'value', '@odata.nextLink']);
    expect(Object.keys(parts.List.properties)).toEqual(['@odata.context', 'value']);
    expect(json(labels.List.properties.value)).toEqual({
      type: 'array',
      items: { type: 'object', properties: {}, additionalProperties: true },
    });
  });

  it('takes exactly the declared query options, in the declared order', () => {
    expect(Object.keys(gadgets.ListQuery.properties)).toEqual(['$filter', '$top', '$skip', '$orderby', '$count']);
    expect(json(gadgets.ListQuery)).toMatchObject({ additionalProperties: false });
    expect(Object.keys(labels.ListQuery.properties)).toEqual(['$top', '$skip']);
  });

  it('gives a keyed sub-resource the parameters of both keys', () => {
    expect(json(parts.Params)).toEqual({
      type: 'object',
      required: ['key', 'partKey'],
      properties: { key: { type: 'string' }, partKey: { type: 'string' } },
    });
  });

  it('refuses a list that takes $top without $skip, or $count without paging', () => {
    const item = Type.Object({ id: Type.String() });
    expect(() => entitySet({ name: 'a', key: 'id', keyType: 'string', noun: 'a', item, listOptions: ['$top'] })).toThrow(
      'the list of a takes $top and $skip together',
    );
    expect(() => entitySet({ name: 'b', key: 'id', keyType: 'string', noun: 'b', item, listOptions: ['$filter', '$count'] })).toThrow(
      'the list of b takes $count only when it pages',
    );
    expect(() => entitySet({ name: 'not a name', key: 'id', keyType: 'string', noun: 'c', item })).toThrow('is not an OData identifier');
  });
});

// ---- paging ------------------------------------------------------------------------------------

interface Gadget {
  readonly code: string;
  readonly size: number;
  readonly status: (typeof GADGET_STATUSES)[number];
}
const STORE: readonly Gadget[] = ['a', 'b', 'c', 'd', 'e'].map((code, i) => ({
  code,
  size: 10 * (i + 1),
  status: i < 2 ? 'Draft' : 'Released',
}));

/** What a query over STORE does with what page() hands it: equality filters, one sort, skip and limit. */
function rowsOf(query: ListRows): Promise<Gadget[]> {
  const matching = STORE.filter((g) => query.filter.every((c) => g[c.property as keyof Gadget] === c.value));
  const descending = query.orderBy[0]?.descending === true;
  const sorted = descending ? [...matching].reverse() : matching;
  return Promise.resolve(sorted.slice(query.skip, query.skip + query.limit));
}
const countOf = (filter: ListRows['filter']) => rowsOf({ filter, orderBy: [], skip: 0, limit: STORE.length }).then((rows) => rows.length);

const request = (query: ListRequest['query'], url = '/gadgets'): ListRequest => ({
  query,
  originalUrl: `${API_BASE}${url}`,
  protocol: 'http',
  host: 'service.test',
});
const pageOf = (query: ListRequest['query'], asked: Partial<ListRows>[] = []) =>
  gadgets.page(request(query), {
    maxPageSize: 2,
    filter: { status: { oneOf: GADGET_STATUSES }, size: 'integer' },
    orderBy: { by: 'code', default: 'asc' },
    rows: (q) => {
      asked.push(q);
      return rowsOf(q);
    },
    count: countOf,
  });

describe('a paged list', () => {
  it('answers at most a page, asks for one row more, and links the next page on the URL the caller wrote', async () => {
    const asked: Partial<ListRows>[] = [];
    const first = await pageOf({}, asked);
    expect(asked).toEqual([{ filter: [], orderBy: [{ property: 'code', descending: false }], skip: 0, limit: 3 }]);
    expect(first).toEqual({
      '@odata.context': `${API_BASE}/$metadata#gadgets`,
      value: STORE.slice(0, 2),
      '@odata.nextLink': `http://service.test${API_BASE}/gadgets?$skip=2`,
    });
    const last = await pageOf({ $skip: '4' });
    expect(last).toEqual({ '@odata.context': `${API_BASE}/$metadata#gadgets`, value: STORE.slice(4) });
  });

  it('keeps what is left of $top in the next link, and stops when it is used up', async () => {
    const first = await pageOf({ $top: '3' });
    expect(first.value.map((g) => g.code)).toEqual(['a', 'b']);
    expect(first['@odata.nextLink']).toBe(`http://service.test${API_BASE}/gadgets?$skip=2&$top=1`);
    const second = await pageOf({ $top: '1', $skip: '2' });
    expect(second.value.map((g) => g.code)).toEqual(['c']);
    expect(second['@odata.nextLink']).toBeUndefined();
  });

  it('hands the parsed $filter to the query, counts with $count=true, and puts @odata.count before value', async () => {
    const asked: Partial<ListRows>[] = [];
    const answer = await pageOf({ $filter: "status eq 'Released'", $count: 'true' }, asked);
    expect(asked[0]?.filter).toEqual([{ property: 'status', op: 'eq', value: 'Released' }]);
    expect(Object.keys(answer)).toEqual(['@odata.context', '@odata.count', 'value', '@odata.nextLink']);
    expect(answer['@odata.count']).toBe(3);
    expect((await pageOf({ $count: 'false' }))['@odata.count']).toBeUndefined();
  });

  it('orders by its one property, asc or desc, and refuses any other order', async () => {
    expect((await pageOf({ $orderby: 'code   desc' })).value.map((g) => g.code)).toEqual(['e', 'd']);
    expect((await pageOf({ $orderby: 'code' })).value.map((g) => g.code)).toEqual(['a', 'b']);
    await expect(pageOf({ $orderby: 'size desc' })).rejects.toThrow('$orderby supports code asc or code desc.');
  });

  it('refuses a wrong $filter before a wrong $top, as 400 invalidQuery', async () => {
    await expect(pageOf({ $filter: "colour eq 'red'", $top: 'many' })).rejects.toMatchObject({
      status: 400,
      code: 'invalidQuery',
      message: '$filter cannot use property "colour"; filterable properties: status, size.',
    });
    await expect(pageOf({ $top: 'many' })).rejects.toMatchObject({ status: 400, code: 'invalidQuery' });
    await expect(pageOf({ $filter: "status eq 'Gone'" })).rejects.toThrow('status is one of Draft, Released, Retired');
  });

  it('orders by any of several properties when declared so, and answers each row as the spec says', async () => {
    const asked: Partial<ListRows>[] = [];
    const answer = await labels.page(request({ $orderby: 'size desc,code' }, "/gadgets('a')/labels"), 'a', {
      maxPageSize: 10,
      orderBy: { among: ['size', 'code'] },
      rows: (q) => {
        asked.push(q);
        return rowsOf(q);
      },
      item: (g) => ({ label: g.code.toUpperCase() }),
    });
    expect(asked[0]?.orderBy).toEqual([
      { property: 'size', descending: true },
      { property: 'code', descending: false },
    ]);
    expect(answer).toEqual({
      '@odata.context': `${API_BASE}/$metadata#gadgets('a')/labels`,
      value: ['E', 'D', 'C', 'B', 'A'].map((label) => ({ label })),
    });
  });
});

// ---- served ------------------------------------------------------------------------------------

describe('a declared set served by the server', () => {
  let app: App;
  const everything = {
    authenticate: () => Promise.resolve({ kind: 'application' as const, name: 'test', permissionSets: ['SUPER' as const] }),
  };

  beforeAll(async () => {
    app = await buildServer({
      logger: pino({ level: 'silent' }),
      bodyLimitBytes: 1 << 20,
      authenticator: everything,
      routes: [
        (scope) => {
          scope.get(
            gadgets.path,
            {
              config: gadgets.config('read'),
              schema: { querystring: gadgets.ListQuery, response: { 200: gadgets.List, 400: ErrorSchema } },
            },
            (req) =>
              gadgets.page(req, {
                maxPageSize: 2,
                filter: { size: 'integer' },
                orderBy: { by: 'code', default: 'asc' },
                rows: rowsOf,
                count: countOf,
              }),
          );
          scope.get(
            gadgets.itemPath,
            { config: gadgets.config('read'), schema: { params: KeyParams, response: { 200: gadgets.Entity, 404: ErrorSchema } } },
            (req) => {
              const code = gadgets.key(req.params.key);
              const gadget = STORE.find((g) => g.code === code);
              if (gadget === undefined) throw new AppError(404, 'notFound', `No gadget '${code}'.`);
              return Promise.resolve(gadgets.entity(gadget));
            },
          );
          scope.get(parts.path, { config: parts.config('read'), schema: { params: KeyParams, response: { 200: parts.List } } }, (req) =>
            Promise.resolve(parts.list(gadgets.key(req.params.key), [{ partNo: 1, title: 'lid' }])),
          );
          scope.post(
            gadgets.action('release'),
            { config: gadgets.config('configure'), schema: { params: KeyParams, response: { 200: gadgets.Entity } } },
            (req) => Promise.resolve(gadgets.entity({ ...STORE[0]!, code: gadgets.key(req.params.key), status: 'Released' as const })),
          );
        },
      ],
    });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers the list, paged, with the next link as the caller wrote the URL', async () => {
    const res = await app.inject({ method: 'GET', url: `${API_BASE}/gadgets?$count=true&$filter=size%20eq%2020` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ '@odata.context': `${API_BASE}/$metadata#gadgets`, '@odata.count': 1, value: [STORE[1]] });
    const all = await app.inject({ method: 'GET', url: `${API_BASE}/gadgets` });
    expect(all.json()).toMatchObject({ value: STORE.slice(0, 2), '@odata.nextLink': `http://localhost${API_BASE}/gadgets?$skip=2` });
  });

  it('answers one entity at name(<key>) and 404 for a key that cannot be one', async () => {
    const res = await app.inject({ method: 'GET', url: `${API_BASE}/gadgets('c')` });
    expect(res.json()).toEqual({ '@odata.context': `${API_BASE}/$metadata#gadgets/$entity`, ...STORE[2] });
    const bad = await app.inject({ method: 'GET', url: `${API_BASE}/gadgets('')` });
    expect(bad.statusCode).toBe(404);
    expect(bad.json()).toEqual({ error: { code: 'notFound', message: "No gadget with key ('')." } });
  });

  it('runs a bound action at …(<key>)/Microsoft.NAV.<action>', async () => {
    const res = await app.inject({ method: 'POST', url: `${API_BASE}/gadgets('z')/Microsoft.NAV.release` });
    expect(res.json()).toMatchObject({ code: 'z', status: 'Released' });
  });

  it('declares the set, its key, its sub-resource and its action in $metadata', async () => {
    const res = await app.inject({ method: 'GET', url: `${API_BASE}/$metadata?$format=json` });
    const document = res.json();
    const types = document['Microsoft.NAV'];
    expect(types.gadget.$Key).toEqual(['code']);
    expect(types.gadget.parts).toMatchObject({ $Kind: 'NavigationProperty', $Collection: true, $Type: 'Microsoft.NAV.gadgetPart' });
    expect(types.gadgetPart.$Key).toEqual(['partNo']);
    expect(types.release[0]).toMatchObject({ $IsBound: true });
    expect(types.default.gadgets).toEqual({ $Collection: true, $Type: 'Microsoft.NAV.gadget' });
  });
});
