/**
 * The proposal from a sample: records path, names, types, required, key; and, for generated samples,
 * that every proposal passes the service's own rules for tables and integrations and maps every
 * sample record without an error.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NumberText, parseJsonExact } from '../../src/core/exact-json.js';
import { declarationsOf, type SampleChoice } from '../../src/from-sample/declarations.js';
import { fieldNameOf, inferType, proposeFromSample, tableNameOf, textLength, type Proposal } from '../../src/from-sample/infer.js';
import { formatPath } from '../../src/from-sample/paths.js';
import { validateFieldList, validateIntegration, validateMappingList } from '../../src/integrations/validate.js';
import { compilePath } from '../../src/json-path/paths.js';
import { compileMapping, mapRecord } from '../../src/mapping/engine.js';
import type { SqlValue } from '../../src/mapping/convert.js';
import { validateTargetTable } from '../../src/tables/validate.js';

const propose = (sample: unknown, options = {}): Proposal => {
  const p = proposeFromSample(sample, options);
  if ('error' in p) throw new Error(p.error);
  return p;
};
const byName = (p: Proposal) => Object.fromEntries(p.fields.map((f) => [f.name, f]));

describe('proposing a table and an integration from a sample', () => {
  it('reads a root array of contacts: types, lengths, required, nested paths and the key', () => {
    const p = propose(
      parseJsonExact(
        JSON.stringify([
          {
            id: 1,
            name: 'Ada Lovelace',
            email: 'ada@example.com',
            score: 9.5,
            active: true,
            born: '1815-12-10',
            seen: '2026-11-01T10:00:00Z',
            address: { city: 'London' },
          },
          {
            id: 2,
            name: 'Grace Hopper',
            email: null,
            score: 7,
            active: false,
            born: '1906-12-09',
            seen: '2026-11-02T11:30:00+01:00',
            address: { city: 'New York' },
          },
        ]),
      ),
      { hint: 'contacts' },
    );
    expect(p.recordsPath).toBe('');
    expect(p.recordCount).toBe(2);
    expect(p.tableName).toBe('contacts');
    const f = byName(p);
    expect(Object.keys(f)).toEqual(['id', 'name', 'email', 'score', 'active', 'born', 'seen', 'address_city']);
    expect(f.id).toMatchObject({ type: 'integer', required: true, primaryKey: true, sourcePath: 'id' });
    expect(f.name).toMatchObject({ type: 'text', maxLength: 20, required: true, primaryKey: false });
    expect(f.email).toMatchObject({ type: 'text', required: false });
    expect(f.score).toMatchObject({ type: 'decimal', required: true });
    expect(f.active!.type).toBe('boolean');
    expect(f.born!.type).toBe('date');
    expect(f.seen!.type).toBe('datetime');
    expect(f.address_city).toMatchObject({ type: 'text', sourcePath: 'address.city' });
  });

  it('finds the records inside an envelope and names the table after them', () => {
    const p = propose({ '@odata.context': 'x', meta: { count: 2 }, customers: [{ code: 'A' }, { code: 'B' }] });
    expect(p.recordsPath).toBe('customers');
    expect(p.tableName).toBe('customers');
    expect(byName(p).code).toMatchObject({ primaryKey: true, type: 'text' });
  });

  it('takes the largest list of objects, and a generic name gives way to the hint', () => {
    const p = propose({ data: { items: [{ a: 1 }, { a: 2 }, { a: 3 }] }, links: [{ rel: 'self' }] }, { hint: 'Orders API' });
    expect(p.recordsPath).toBe('data.items');
    expect(p.tableName).toBe('orders_api');
  });

  it('reads a bulk import request pasted whole', () => {
    const p = propose({ integrationSortingOrder: 1, payload: JSON.stringify({ rows: [{ x: 'a' }] }) });
    expect(p.recordsPath).toBe('rows');
    expect(p.notes.join(' ')).toMatch(/bulk import request/);
  });

  it('refuses a sample without records', () => {
    expect(proposeFromSample({ a: 1 })).toEqual({ error: expect.stringMatching(/no list of records/) });
    expect(proposeFromSample([1, 2])).toEqual({ error: expect.stringMatching(/no list of records/) });
  });

  it('leaves lists out, and proposes no key when the candidates repeat or are missing', () => {
    const p = propose([
      { id: 1, tags: ['a'] },
      { id: 1, tags: [] },
    ]);
    expect(p.fields.map((f) => f.name)).toEqual(['id']);
    expect(p.fields[0]!.primaryKey).toBe(false);
    expect(p.notes.join(' ')).toMatch(/Lists are not imported: tags/);
    expect(p.notes.join(' ')).toMatch(/No primary key/);
  });

  it('finds <table>Id as the key', () => {
    const p = propose({
      orders: [
        { orderId: 'A-1', qty: 2 },
        { orderId: 'A-2', qty: 3 },
      ],
    });
    expect(byName(p).orderId!.primaryKey).toBe(true);
  });

  it.each([
    [[1, 2, -3], 'integer'],
    [[1, 2.5], 'decimal'],
    [[2_147_483_648], 'decimal'],
    [[new NumberText('123456789012345678901234567890')], 'text'],
    [[true, false], 'boolean'],
    [[true, 1], 'text'],
    [['2026-02-28', '2024-02-29'], 'date'],
    [['2026-02-30'], 'text'],
    [['2026-01-01T00:00:00Z', '2026-01-01'], 'text'],
    [['2026-01-01T00:00:00.5+02:00'], 'datetime'],
    [['2026-01-01T00:00:00'], 'text'],
    [['6f1c1a8e-5b5e-4d9b-9a43-3f2a1d0c9e11'], 'guid'],
    [['12', 'x'], 'text'],
    [[], 'text'],
  ] as const)('%j is %s', (values, type) => {
    expect(inferType(values)).toBe(type);
  });

  it.each([
    [['abc'], 20],
    [['x'.repeat(14)], 50],
    [['x'.repeat(200)], 500],
    [['x'.repeat(1500)], 2048],
    [['😀'.repeat(14)], 50],
  ] as const)('text length for %#', (values, length) => {
    expect(textLength(values)).toBe(length);
  });

  it.each([
    [['first name'], 'first_name'],
    [['address', 'city'], 'address_city'],
    [['1st'], 'field_1st'],
    [['@odata.etag'], 'odata_etag'],
    [['Straße'], 'Stra_e'],
    [['___'], 'field'],
    [['x'.repeat(80)], 'x'.repeat(63)],
  ] as const)('field name of %j is %s', (segments, name) => {
    expect(fieldNameOf(segments)).toBe(name);
  });

  it.each([
    ['Contacts', 'contacts'],
    ['ifw_x', 't_ifw_x'],
    ['sqlite_master', 't_sqlite_master'],
    ['9lives', 'table_9lives'],
    ['Crème brûlée', 'creme_brulee'],
  ])('table name of %j is %s', (raw, name) => {
    expect(tableNameOf(raw)).toBe(name);
  });

  it('gives a taken table name a number', () => {
    expect(tableNameOf('contacts', new Set(['contacts', 'contacts_2']))).toBe('contacts_3');
  });

  it.each([
    [['a', 'b'], 'a.b'],
    [['first name'], 'first name'],
    [['@odata.etag'], "$['@odata.etag']"],
    [["it's"], "$['it\\'s']"],
    [['$x'], "$['$x']"],
    [['a[0]'], "$['a[0]']"],
    [['*'], "$['*']"],
  ] as const)('source path of %j is %s, which reads the value back', (segments, text) => {
    expect(formatPath(segments)).toBe(text);
    let record: unknown = 'value';
    for (const s of [...segments].reverse()) record = { [s]: record };
    expect(compilePath(text)(record)).toBe('value');
  });
});

// ---- every proposal passes the service's rules -------------------------------------------------

const scalar = fc.oneof(
  fc.integer({ min: -3_000_000_000, max: 3_000_000_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 30 }),
  fc.date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.date({ min: new Date('1900-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  fc.uuid(),
  fc.constantFrom('', '  ', 'x'.repeat(3000)),
);
const key = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.constantFrom('id', 'code', 'Id', 'contactId', 'a.b', "o'k", '$', '0', 'ifw_x'),
);
const value = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(scalar, { maxLength: 2 }),
    fc.dictionary(key, tie('v'), { maxKeys: 3 }),
  ),
})).v;
const record = fc.dictionary(key, value, { minKeys: 1, maxKeys: 6 });
const sample = fc.oneof(
  fc.array(record, { minLength: 1, maxLength: 6 }),
  fc.record({ data: fc.array(record, { minLength: 1, maxLength: 6 }) }),
  fc.record({ result: fc.record({ 'the rows': fc.array(record, { minLength: 1, maxLength: 6 }) }) }),
);

describe('every proposal is valid', () => {
  it('passes the table and integration rules, and maps every sample record whose values it read', () => {
    fc.assert(
      fc.property(sample, fc.string({ maxLength: 20 }), (raw, hint) => {
        // Through JSON text and back, as a pasted sample arrives.
        const parsed = parseJsonExact(JSON.stringify(raw));
        const proposal = proposeFromSample(parsed, { hint });
        // Every generated sample holds a list of objects.
        if ('error' in proposal) throw new Error(`no proposal: ${proposal.error}`);
        if (!proposal.fields.some((f) => f.include)) return;
        // When no key is evident the administrator chooses one: here the first field the rules allow as a key.
        const evident = proposal.fields.some((f) => f.primaryKey);
        const chosen = evident ? -1 : proposal.fields.findIndex((f) => f.include && f.type !== 'decimal' && f.type !== 'boolean');
        if (!evident && chosen < 0) return;
        const choice: SampleChoice = {
          tableName: proposal.tableName,
          recordsPath: proposal.recordsPath,
          sortingOrder: 7,
          integrationName: 'Generated',
          integrationType: 'file',
          acceptBulkImportRequests: true,
          writeMode: evident ? 'upsert' : 'insert',
          fields: proposal.fields.map((f, i) => (i === chosen ? { ...f, primaryKey: true, required: true } : f)),
        };
        const { table: tableInput, integration } = declarationsOf(choice);
        const keyed = evident ? [] : [choice.fields[chosen]!.name];
        const table = validateTargetTable(tableInput, new Map());
        const valid = validateIntegration(integration, table);
        const fields = validateFieldList(integration.fields, valid.sortingOrder, 'fields');
        const mappings = validateMappingList(
          integration.mappings,
          { integrationSortingOrder: valid.sortingOrder, fieldNos: new Set(fields.map((f) => f.fieldNo)), table },
          'mappings',
        );
        const compiled = compileMapping({ integration: valid, fields, mappings }, new Map([[table.name, table]]));
        const records = compiled.records(parsed) as unknown[];
        expect(records.length).toBeGreaterThanOrEqual(proposal.recordCount);
        const row: SqlValue[] = [];
        for (const r of records) {
          if (typeof r !== 'object' || r === null || Array.isArray(r)) continue;
          const violations = mapRecord(compiled, r, row, () => true);
          // Text longer than a text field can hold is the one thing a proposal cannot fit (it says so in a note).
          const refused = (violations ?? []).filter(
            (v) => !v.rule.startsWith('exceeds') && !(keyed.includes(v.field ?? '') && v.rule === 'is required'),
          );
          expect(refused).toEqual([]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a proposal with a key chosen by hand passes too', () => {
    fc.assert(
      fc.property(sample, (raw) => {
        const proposal = proposeFromSample(parseJsonExact(JSON.stringify(raw)));
        if ('error' in proposal) return;
        const first = proposal.fields.findIndex((f) => f.include);
        if (first < 0) return;
        const fields = proposal.fields.map((f, i) => ({
          ...f,
          primaryKey: i === first,
          ...(i === first && (f.type === 'decimal' || f.type === 'boolean') ? { type: 'text' as const, maxLength: 250 } : {}),
        }));
        const { table, integration } = declarationsOf({
          tableName: proposal.tableName,
          recordsPath: proposal.recordsPath,
          sortingOrder: 1,
          integrationName: 'x',
          integrationType: 'restApi',
          acceptBulkImportRequests: false,
          writeMode: 'insert',
          fields,
        });
        const t = validateTargetTable(table, new Map());
        validateIntegration(integration, t);
      }),
      { numRuns: 200 },
    );
  });
});
