/**
 * Numbers are stored exactly as sent or refused with a record error that shows them as sent, never
 * rounded (docs/integrations.md, "Numbers"): the exact JSON reading itself, then imports on both
 * databases, whole and streamed, and a REST API's page read from a real local server.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { exactNumber, holdsExactly, mayBeInexact, NumberText, parseJsonExact } from '../../src/core/exact-json.js';
import { describeValue } from '../../src/mapping/messages.js';
import { fetchPages } from '../../src/rest-source/fetch-pages.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { connectionTo, endpointAt, paging } from '../helpers/paging-server.js';
import { API, startTestService, type TestService } from '../helpers/service.js';
import { until } from '../helpers/until.js';

describe('exact JSON numbers', () => {
  it.each([
    ['9007199254740993', new NumberText('9007199254740993')],
    ['123456789012345678901234567890.123', new NumberText('123456789012345678901234567890.123')],
    ['1e400', new NumberText('1e400')],
    ['-1e400', new NumberText('-1e400')],
    ['1e-400', new NumberText('1e-400')],
    ['0.10000000000000000001', new NumberText('0.10000000000000000001')],
    ['9007199254740991', 9007199254740991],
    ['0.1', 0.1],
    ['0.10000000000000000000', 0.1],
    ['123456789.123456', 123456789.123456],
    ['1.7976931348623157e308', 1.7976931348623157e308],
    ['5e-324', 5e-324],
    ['-0', -0],
    ['12E3', 12000],
  ])('%s reads as %o', (text, expected) => {
    expect(exactNumber(text)).toEqual(expected);
  });

  it('parses like JSON.parse, with the numbers a double would change kept as text', () => {
    const text = '{"a":[9007199254740993,1.5,"12345678901234567890"],"__proto__":{"x":1},"b":{"c":1e400}}';
    const parsed = parseJsonExact(text) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(Object.keys(JSON.parse(text) as object));
    const a = parsed.a as unknown[];
    expect(a[0]).toEqual(new NumberText('9007199254740993'));
    expect(a.slice(1)).toEqual([1.5, '12345678901234567890']);
    expect((parsed.b as Record<string, unknown>).c).toEqual(new NumberText('1e400'));
    // A "__proto__" member stays a member, as JSON.parse makes it.
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toContain('__proto__');
    expect(() => parseJsonExact('[1,')).toThrow(SyntaxError);
    expect(parseJsonExact('12345678901234567')).toEqual(new NumberText('12345678901234567'));
  });

  it('reads a text without long digit runs with JSON.parse alone, and the same', () => {
    const text = JSON.stringify([{ no: 'C1', qty: 12, amount: 12.5, at: '2025-01-01T00:00:00Z' }]);
    expect(parseJsonExact(text)).toEqual(JSON.parse(text) as unknown);
  });

  it('finds the texts that may write an inexact number exactly where the regular expression does', () => {
    const pattern = /[0-9][0-9.]{15}|[eE][+-]?[0-9]{3}/;
    // Texts made mostly of digits and points, with the odd letter, sign or quote, at every position.
    const char = fc.constantFrom(...'0123456789........eE+-" a,');
    fc.assert(
      fc.property(fc.string({ unit: char, maxLength: 120 }), (text) => mayBeInexact(text) === pattern.test(text)),
      { numRuns: 5000, seed: 20261125 },
    );
    for (const text of [
      '1234567890123456',
      '.1234567890123456',
      '...............1',
      'x'.repeat(40) + '1'.repeat(16),
      '1e400',
      'E-400',
      '1'.repeat(15),
    ]) {
      expect(mayBeInexact(text)).toBe(pattern.test(text));
    }
  });

  it('shows a number in a message as it was sent', () => {
    expect(describeValue(new NumberText('9007199254740993'))).toBe('9007199254740993');
    expect(describeValue(Infinity)).toBe('Infinity');
    expect(describeValue(new NumberText(`1.${'2'.repeat(80)}`))).toBe(`1.${'2'.repeat(58)}…`);
    expect(holdsExactly('1.0', 1)).toBe(true);
    expect(holdsExactly('9007199254740993', 9007199254740992)).toBe(false);
  });
});

describe.each(BACKENDS)('numbers imported on $name', (backend) => {
  let fresh: FreshDatabase;
  let t: TestService;
  let base: string;

  beforeAll(async () => {
    if (backend.skip) return;
    fresh = await backend.fresh();
    t = await startTestService({ databaseUrl: fresh.url, workers: true, config: { host: '127.0.0.1', port: 0, schedulerTickMs: 50 } });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    const call = (method: string, url: string, body: unknown) =>
      fetch(`${base}${API}/${url}`, { method, headers: { ...t.headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const table = await call('PUT', "targetTables('measure')", {
      name: 'measure',
      primaryKey: ['id'],
      fields: [
        { name: 'id', type: 'code', maxLength: 20 },
        { name: 'qty', type: 'integer' },
        { name: 'amount', type: 'decimal' },
        { name: 'label', type: 'text', maxLength: 100 },
      ],
    });
    expect(table.status).toBeLessThan(300);
    const names = ['id', 'qty', 'amount', 'label'];
    const integration = await call('POST', 'integrations', {
      sortingOrder: 20,
      name: 'Measures',
      type: 'file',
      targetTable: 'measure',
      acceptBulkImportRequests: true,
      fields: names.map((name, i) => ({ fieldNo: i + 1, title: name, sourcePath: name })),
      mappings: names.map((name, i) => ({ fieldNo: i + 1, targetField: name, required: name === 'id' })),
    });
    expect(integration.status).toBe(201);
  });

  afterAll(async () => {
    await t?.cleanup();
    await fresh?.cleanup();
  });

  const get = async (url: string) =>
    (await fetch(`${base}${API}/${url}`, { headers: t.headers })).json() as Promise<Record<string, unknown>>;
  /** Submits a payload (its JSON text as written here), whole or streamed, and waits for the request to end. */
  const imported = async (payload: string, streamed: boolean) => {
    const body = JSON.stringify({ integrationSortingOrder: 20, payload });
    const answer = await fetch(`${base}${API}/bulkImportRequests`, {
      method: 'POST',
      headers: { ...t.headers, 'content-type': 'application/json' },
      body: streamed ? new Blob([body]).stream() : body,
      duplex: 'half',
    });
    expect(answer.status).toBe(202);
    const { requestId } = (await answer.json()) as { requestId: string };
    return until(
      async () => {
        const r = await get(`bulkImportRequests(${requestId})`);
        return r.status === 'Completed' || r.status === 'Failed' ? r : undefined;
      },
      { what: `request ${requestId} ended` },
    );
  };
  const rowOf = async (id: string) =>
    ((await get(`targetTables('measure')/rows?$filter=${encodeURIComponent(`id eq '${id}'`)}`)).value as Record<string, unknown>[])[0];

  it.skipIf(backend.skip)('stores numbers a field holds exactly, and a long number in a text field as its text', async () => {
    for (const streamed of [false, true]) {
      const id = streamed ? 'OK-S' : 'OK-W';
      const request = await imported(
        `[{"id":"${id}","qty":9007199254740991,"amount":0.10000000000000000000,"label":12345678901234567890.5}]`,
        streamed,
      );
      expect(request.status, id).toBe('Completed');
      const row = await rowOf(id);
      expect(Number(row?.qty), id).toBe(9007199254740991);
      expect(String(row?.qty), id).toBe('9007199254740991');
      expect(Number(row?.amount), id).toBe(0.1);
      expect(row?.label, id).toBe('12345678901234567890.5');
    }
  });

  it.skipIf(backend.skip)('refuses a number a field would change, whole or streamed, showing it as sent, and writes nothing', async () => {
    const cases = [
      {
        id: 'N-1',
        record: '"qty":9007199254740993',
        message: 'field "qty" value 9007199254740993 is outside the range an integer field holds exactly',
      },
      { id: 'N-2', record: '"qty":"9007199254740993"', message: 'field "qty" value "9007199254740993" is outside the range' },
      { id: 'N-3', record: '"qty":1e20', message: 'field "qty" value 100000000000000000000 is outside the range' },
      {
        id: 'N-4',
        record: '"amount":123456789012345678901234567890.123',
        message: 'field "amount" value 123456789012345678901234567890.123 is not held exactly by a decimal field',
      },
      { id: 'N-5', record: '"amount":1e400', message: 'field "amount" value 1e400 is not held exactly by a decimal field' },
      {
        id: 'N-6',
        record: '"amount":"0.10000000000000000001"',
        message: 'field "amount" value "0.10000000000000000001" is not held exactly',
      },
      { id: 'N-7', record: '"amount":-1e-400', message: 'field "amount" value -1e-400 is not held exactly' },
    ];
    for (const streamed of [false, true]) {
      for (const c of cases) {
        const id = `${c.id}${streamed ? 'S' : 'W'}`;
        const request = await imported(`[{"id":"${id}",${c.record}}]`, streamed);
        expect(request.status, id).toBe('Failed');
        expect(request.errorMessage, id).toContain(`record 1: ${c.message}`);
        expect(await rowOf(id), id).toBeUndefined();
      }
    }
  });

  it.skipIf(backend.skip)('refuses a code whose capitals would be longer than the text sent, showing the text sent', async () => {
    const request = await imported(`[{"id":"${'ß'.repeat(15)}"}]`, false);
    expect(request.status).toBe('Failed');
    expect(request.errorMessage).toBe(
      `record 1: field "id" value "${'ß'.repeat(15)}" is not in capitals (a code is stored as sent, never upper-cased)`,
    );
  });
});

describe("a REST API's page", () => {
  let server: http.Server;
  let origin: string;

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"data":[{"id":9007199254740993,"amount":1e400,"price":12.5,"code":"12345678901234567890"}]}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('keeps the numbers a double would change as they were sent', async () => {
    const records: unknown[] = [];
    await fetchPages(connectionTo(origin), endpointAt('/items', paging.none()), (page) => {
      records.push(...(page.records ?? []));
    });
    expect(records).toEqual([
      { id: new NumberText('9007199254740993'), amount: new NumberText('1e400'), price: 12.5, code: '12345678901234567890' },
    ]);
  });
});
