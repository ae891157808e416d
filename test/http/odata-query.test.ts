/**
 * The OData query options every list shares (src/http/odata.ts): `$filter` looks properties up as the
 * list's own (never through an object's prototype), types its values, and says what it supports;
 * `$orderby` and `$count` likewise. The service root is routed with or without its trailing slash.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { parseCount, parseFilter, parseOrderBy, rewriteODataUrl, type FilterPropertyType } from '../../src/http/odata.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const PROPERTIES: Record<string, FilterPropertyType> = {
  name: 'string',
  qty: 'integer',
  price: 'number',
  active: 'boolean',
  day: 'date',
  at: 'datetime',
  ref: 'guid',
  status: { oneOf: ['Open', 'Closed'] },
  first_name: 'string',
};

function refusal(run: () => unknown): { status: number; code: string; message: string } {
  try {
    run();
  } catch (err) {
    if (err instanceof AppError) return { status: err.status, code: err.code, message: err.message };
    throw err;
  }
  throw new Error('not refused');
}

describe('$filter', () => {
  it.each([
    ["name eq 'O''Brien'", [{ property: 'name', op: 'eq', value: "O'Brien" }]],
    [
      'qty ge -3 and price lt 2.5',
      [
        { property: 'qty', op: 'ge', value: -3 },
        { property: 'price', op: 'lt', value: 2.5 },
      ],
    ],
    ['active eq false', [{ property: 'active', op: 'eq', value: false }]],
    [
      "name eq 'x'and qty eq 1",
      [
        { property: 'name', op: 'eq', value: 'x' },
        { property: 'qty', op: 'eq', value: 1 },
      ],
    ],
    ['day le 2026-02-28', [{ property: 'day', op: 'le', value: '2026-02-28' }]],
    ['at gt 2026-01-31T13:00:00+01:00', [{ property: 'at', op: 'gt', value: '2026-01-31T12:00:00.000Z' }]],
    ['ref eq 0B9D6E2C-4F3A-4C1E-9A7B-2D5F8E1C3A60', [{ property: 'ref', op: 'eq', value: '0b9d6e2c-4f3a-4c1e-9a7b-2d5f8e1c3a60' }]],
    ["status ne 'Open'", [{ property: 'status', op: 'ne', value: 'Open' }]],
    [
      'status eq null and first_name ne null',
      [
        { property: 'status', op: 'eq', value: null },
        { property: 'first_name', op: 'ne', value: null },
      ],
    ],
  ])('%s', (text, clauses) => {
    expect(parseFilter(text, PROPERTIES)).toEqual(clauses);
  });

  it.each(['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf'])(
    'refuses %s, which every object inherits, as a property the list does not have',
    (name) => {
      expect(refusal(() => parseFilter(`${name} eq 1`, PROPERTIES))).toEqual({
        status: 400,
        code: 'invalidQuery',
        message: `$filter cannot use property "${name}"; filterable properties: name, qty, price, active, day, at, ref, status, first_name.`,
      });
    },
  );

  it.each([
    [
      'qty eq 9007199254740993',
      '$filter value 9007199254740993 does not fit property "qty" (integer): write a whole number from -2147483648 to 2147483647.',
    ],
    [
      'qty eq 2147483648',
      '$filter value 2147483648 does not fit property "qty" (integer): write a whole number from -2147483648 to 2147483647.',
    ],
    [
      'qty lt -2147483649',
      '$filter value -2147483649 does not fit property "qty" (integer): write a whole number from -2147483648 to 2147483647.',
    ],
    ["name eq 'a\u0000b'", '$filter value for property "name" contains the character U+0000, which the database cannot store.'],
    ['day eq 2026-02-30', '$filter value 2026-02-30 does not fit property "day" (date): write a date such as 2026-01-31.'],
    [
      "ref eq 'nope'",
      `$filter value 'nope' does not fit property "ref" (guid): write a GUID such as 0b9d6e2c-4f3a-4c1e-9a7b-2d5f8e1c3a60.`,
    ],
    [
      'price eq 1e3',
      '$filter is not understood at position 1: "price eq 1e3". Supported: <property> eq|ne|gt|ge|lt|le <value>, joined by "and".',
    ],
    ['qty lt null', '$filter compares qty with null using lt; null can only be compared with eq or ne.'],
  ])('refuses %s', (text, message) => {
    expect(refusal(() => parseFilter(text, PROPERTIES))).toEqual({ status: 400, code: 'invalidQuery', message });
  });
});

describe('$orderby and $count', () => {
  it('reads fields with asc or desc, comma-separated, among the allowed ones', () => {
    expect(parseOrderBy('name desc, qty,price ASC', ['name', 'qty', 'price'])).toEqual([
      { property: 'name', descending: true },
      { property: 'qty', descending: false },
      { property: 'price', descending: false },
    ]);
    expect(parseOrderBy(undefined, ['name'])).toEqual([]);
    expect(refusal(() => parseOrderBy('constructor', ['name'])).message).toBe(
      '$orderby item "constructor" is not supported; write <property> [asc|desc], comma-separated, with a property among: name.',
    );
  });

  it('reads $count as true or false only', () => {
    expect([parseCount(undefined), parseCount('false'), parseCount('true')]).toEqual([false, false, true]);
    expect(refusal(() => parseCount('1')).message).toBe('$count must be true or false, got "1".');
  });
});

describe('the lists of the service', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ workers: false });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it.each(['bulkImportRequests', 'importRuns'])('answer 400, not 500, to $filter=constructor eq 1 on %s', async (set) => {
    const res = await t.inject({ url: `${API}/${set}?$filter=${encodeURIComponent('constructor eq 1')}` });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      error: { code: 'invalidQuery', message: expect.stringContaining('cannot use property "constructor"') },
    });
  });

  it.each([
    ['a list', '/bulkImportRequests', '', 'json'],
    ['a list with its own options', '/bulkImportRequests', '$top=1', 'application/json'],
    ['a route that takes no options', '/jobQueueEntries', '', 'application/json;odata.metadata=minimal'],
    ['the service document', '', '', 'json'],
  ])('takes $format=json as a no-op on %s, as OData clients send it', async (_, set, options, format) => {
    const plain = await t.inject({ url: `${API}${set}${options === '' ? '' : `?${options}`}` });
    const formatted = await t.inject({ url: `${API}${set}?${options === '' ? '' : `${options}&`}$format=${encodeURIComponent(format)}` });
    expect(formatted.statusCode).toBe(200);
    expect(formatted.headers['content-type']).toBe(plain.headers['content-type']);
    expect(formatted.body).toBe(plain.body);
  });

  it.each(['xml', 'atom', ''])('refuses $format=%s on an API route: it answers JSON only', async (format) => {
    const res = await t.inject({ url: `${API}/bulkImportRequests?$format=${format}` });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: 'invalidQuery', message: expect.stringContaining('$format must be json') } });
  });

  it('routes the service root written with a trailing slash to the root, keeping the query', () => {
    expect(rewriteODataUrl(`${API}/`)).toBe(API);
    expect(rewriteODataUrl(`${API}/?$format=json`)).toBe(`${API}?$format=json`);
    expect(rewriteODataUrl(`${API}/bulkImportRequests`)).toBe(`${API}/bulkImportRequests`);
  });
});
