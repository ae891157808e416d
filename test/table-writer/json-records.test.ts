/**
 * Records at the root read from bytes straight (src/table-writer/json-records.ts) into COPY text
 * (json-copy.ts, PostgreSQL) and into values (json-values.ts, SQLite), each against the general path:
 * the payload parsed whole (parseJsonExact), each record mapped (mapBatch: mapRecord, and its values
 * written by copy-text.ts for COPY). Same lines, same violations, record for record; a text that is not
 * JSON is never taken, and where the reader gives up, what it sent is the general path's start. A
 * record's values are compared as they are (a number is not its text) through JSON.stringify.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../../src/core/exact-json.js';
import type { IntegrationPlan } from '../../src/integrations/model.js';
import type { SqlValue } from '../../src/mapping/convert.js';
import { compileMapping, type FieldViolation } from '../../src/mapping/engine.js';
import { copyString } from '../../src/table-writer/copy-text.js';
import { JsonCopyReader } from '../../src/table-writer/json-copy.js';
import { readsStraight, type JsonRecordReader } from '../../src/table-writer/json-records.js';
import { JsonValuesReader } from '../../src/table-writer/json-values.js';
import type { MappedBatch } from '../../src/table-writer/mapped-batches.js';
import { mapBatch } from '../../src/table-writer/mapped-batches.js';
import type { TargetTable } from '../../src/tables/model.js';

const table: TargetTable = {
  name: 'thing',
  primaryKey: [],
  fields: [
    { name: 'code', type: 'code', maxLength: 6 },
    { name: 'text', type: 'text', maxLength: 8 },
    { name: 'again', type: 'text', maxLength: 3 },
    { name: 'opt', type: 'option', options: ['DE', 'fr', 'Ünï'] },
    { name: 'dec', type: 'decimal' },
    { name: 'int', type: 'integer' },
    { name: 'bool', type: 'boolean' },
    { name: 'date', type: 'date' },
    { name: 'dt', type: 'datetime' },
    { name: 'guid', type: 'guid' },
    { name: 'req', type: 'text', maxLength: 5, required: true },
    { name: 'konst', type: 'code', maxLength: 5 },
  ],
};

/** Source paths by target field; `konst` is a constant column. */
const SOURCES: readonly [string, string][] = [
  ['code', 'code'],
  ['text', 'text'],
  ['again', 'text'],
  ['opt', 'a.opt'],
  ['dec', 'a.b.dec'],
  ['int', 'int'],
  ['bool', 'bool'],
  ['date', 'date'],
  ['dt', 'dt'],
  ['guid', '$.guid'],
  ['req', 'req'],
];

const plan: IntegrationPlan = {
  integration: {
    sortingOrder: 1,
    name: 'Things',
    type: 'restApi',
    targetTable: 'thing',
    recordsPath: '',
    acceptBulkImportRequests: true,
    maxPayloadSizeKb: null,
    writeMode: 'insert',
    onRecordError: 'skip',
  },
  fields: [
    ...SOURCES.map(([title, sourcePath], i) => ({
      integrationSortingOrder: 1,
      fieldNo: i + 1,
      title,
      sourcePath,
      columnType: 'standard' as const,
      constantValue: null,
    })),
    { integrationSortingOrder: 1, fieldNo: 99, title: 'konst', sourcePath: '', columnType: 'constant', constantValue: 'K1' },
  ],
  mappings: [
    ...SOURCES.map(([targetField], i) => ({ integrationSortingOrder: 1, fieldNo: i + 1, targetField, required: false })),
    { integrationSortingOrder: 1, fieldNo: 99, targetField: 'konst', required: false },
  ],
};
const mapping = compileMapping(plan, new Map([['thing', table]]));

interface Read {
  readonly lines: string[];
  readonly violations: Map<number, FieldViolation[]>;
  readonly gaveUp: boolean;
  readonly whole: number;
}

/** COPY text lines (PostgreSQL) or rows of values (SQLite). */
type Mode = 'copy' | 'values';
const width = mapping.columns.length;

/** A batch's records, a line each: COPY text as it is, values as JSON.stringify writes the row. */
function lines(batch: MappedBatch | { length: number; text: Uint8Array }): string[] {
  if ('text' in batch && batch.text !== undefined) {
    const got = copyString(batch.text).split('\n');
    got.pop();
    return got;
  }
  const { values } = batch as MappedBatch;
  return Array.from({ length: values.length / width }, (_, r) => JSON.stringify(values.slice(r * width, (r + 1) * width)));
}

/** The reader over `text` cut at `cuts` (byte offsets), in batches of `batch` records. */
function read(mode: Mode, text: string, cuts: readonly number[] = [], batch = 3): Read {
  const bytes = Buffer.from(text);
  const reader: JsonRecordReader<MappedBatch | { length: number; text: Uint8Array; violations: Map<number, FieldViolation[]> | null }> =
    mode === 'copy' ? new JsonCopyReader(mapping, batch) : new JsonValuesReader(mapping, batch);
  const got: string[] = [];
  const violations = new Map<number, FieldViolation[]>();
  const emit = (b: MappedBatch | { length: number; text: Uint8Array; violations: Map<number, FieldViolation[]> | null }): void => {
    for (const [i, v] of b.violations ?? []) violations.set(got.length + i, v);
    const batchLines = lines(b);
    expect(batchLines).toHaveLength(b.length);
    got.push(...batchLines);
  };
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  let gaveUp = false;
  for (const to of [...at, bytes.length]) {
    if (!reader.write(bytes.subarray(from, to), emit)) {
      gaveUp = true;
      break;
    }
    from = to;
  }
  if (!gaveUp) gaveUp = !reader.end(emit);
  expect(got).toHaveLength(reader.sent);
  return { lines: got, violations, gaveUp, whole: reader.mappedWhole };
}

/**
 * The general path: the text parsed whole, its records mapped one by one; null when it is no JSON
 * array. Read from its UTF-8 bytes, as the mapping thread reads it (a lone surrogate is not carried).
 */
function general(mode: Mode, text: string): { lines: string[]; violations: Map<number, FieldViolation[]> } | null {
  let records: unknown;
  try {
    records = parseJsonExact(Buffer.from(text).toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(records)) return null;
  const row = new Array<SqlValue>(mapping.columns.length).fill(null);
  const got: string[] = [];
  const violations = new Map<number, FieldViolation[]>();
  records.forEach((record, i) => {
    const batch = mapBatch(mapping, [record], row, mode === 'copy');
    if (batch.violations !== null) violations.set(i, batch.violations.get(0)!);
    got.push(...lines(batch));
  });
  return { lines: got, violations };
}

function expectSame(mode: Mode, text: string, cuts: readonly number[] = [], batch = 3): Read {
  const got = read(mode, text, cuts, batch);
  const expected = general(mode, text);
  if (expected === null) {
    expect(got.gaveUp, `taken, but not a JSON array: ${text}`).toBe(true);
    return got;
  }
  if (got.gaveUp) {
    expect(got.lines).toEqual(expected.lines.slice(0, got.lines.length));
    expect(got.violations).toEqual(new Map([...expected.violations].filter(([i]) => i < got.lines.length)));
  } else {
    expect({ lines: got.lines, violations: got.violations }).toEqual(expected);
  }
  return got;
}

const RECORD = `{"code":"C1","text":"Rom","a":{"opt":"DE","b":{"dec":12.5}},"int":7,"bool":true,"date":"2024-02-29","dt":"2024-01-01T10:00:00.000Z","guid":"0f8fad5b-d9cb-469f-a165-70867728950e","req":"r"}`;

describe.each(['copy', 'values'] as const)('records read straight into %s', (mode) => {
  const same = (text: string, cuts: readonly number[] = [], batch = 3): Read => expectSame(mode, text, cuts, batch);

  it('reads usual records without parsing them, and writes what the general path writes', () => {
    const text = `[${Array.from({ length: 10 }, () => RECORD).join(',')}]`;
    const got = same(text, [], 4);
    expect(got).toMatchObject({ gaveUp: false, whole: 0 });
    const guid = '0f8fad5b-d9cb-469f-a165-70867728950e';
    if (mode === 'copy')
      expect(got.lines[0]!.split('\t')).toEqual([
        'C1',
        'Rom',
        'Rom',
        'DE',
        '12.5',
        '7',
        '1',
        '2024-02-29',
        '2024-01-01T10:00:00.000Z',
        guid,
        'r',
        'K1',
      ]);
    // Numbers are numbers, a boolean 1 or 0, as the general path binds them.
    else
      expect(JSON.parse(got.lines[0]!)).toEqual([
        'C1',
        'Rom',
        'Rom',
        'DE',
        12.5,
        7,
        1,
        '2024-02-29',
        '2024-01-01T10:00:00.000Z',
        guid,
        'r',
        'K1',
      ]);
  });

  it('writes the values the converters change, and maps whole the records that break a rule, in the same order', () => {
    const records = [
      // Converted: an option in other case, a date-time with an offset, numbers JavaScript writes otherwise, words for booleans.
      {
        code: 'C2',
        a: { opt: 'de', b: { dec: '1.50' } },
        int: '12',
        bool: 'Yes',
        dt: '2024-01-01T10:00:00+02:00',
        guid: '{0F8FAD5B-D9CB-469F-A165-70867728950E}',
        req: ' x ',
      },
      { code: 'C3', text: 'Ünïcödé', again: '😀', a: { opt: 'Ünï' }, req: 'tab\there' },
      // Beyond ASCII: a code in upper case, and one with a lower-case letter only there.
      { code: 'ÇÉ', text: 'Üb', req: 'r' },
      { code: 'Çé', req: 'r' },
      // Broken rules: a lower-case code, too long a text, an integer with a fraction, no required value.
      { code: 'c4', text: 'much too long', int: 1.5 },
      { code: ' C5', req: '' },
      // Absent along the path, null on it, and not an object there.
      { a: null, req: 'r' },
      { a: [1], req: 'r' },
      'not a record',
      [],
      null,
    ];
    const text = JSON.stringify(records).replace('"1.50"', '1.50').replace('"12"', '12.0');
    const got = same(text);
    expect(got.gaveUp).toBe(false);
    expect(got.whole).toBeGreaterThanOrEqual(7);
    expect(got.violations.get(4)!.map((v) => v.field)).toEqual(['code', 'text', 'again', 'int', 'req']);
    expect(got.violations.get(3)!.map((v) => v.field)).toEqual(['code']);
    const cells = mode === 'copy' ? got.lines[2]!.split('\t') : (JSON.parse(got.lines[2]!) as unknown[]);
    expect(cells.slice(0, 2)).toEqual(['ÇÉ', 'Üb']);
  });

  it('takes numbers as sent only where JavaScript writes them back the same', () => {
    const numbers = [
      ...['0', '-0', '-0.5', '1.50', '1E5', '1e-7', '0.000001', '0.0000001', '0.00000012', '-0.0000005', '100', '-12.25', '1e400'],
      ...[
        '123456789012345',
        '1234567890123456',
        '9007199254740993',
        '12345678901234.5',
        '1234567890.1234567',
        '1.0000000000000001',
        '0.12345678901234567',
      ],
    ];
    for (const n of numbers) {
      const text = `[{"a":{"b":{"dec":${n}}},"req":"r"},{"int":${n},"req":"r"},{"text":${n},"req":"r"}]`;
      same(text);
    }
  });

  it('maps whole a record with a key twice or an escaped key (JSON.parse keeps the last), and reads the keys it does not map as they come', () => {
    for (const record of [
      '{"code":"A1","code":"B2","req":"r"}',
      '{"a":{"opt":"DE"},"a":{"opt":"fr"},"req":"r"}',
      '{"a":{"opt":"DE","b":{"dec":1}},"a":{"opt":"fr"},"req":"r"}',
      '{"c\\u006fde":"E1","req":"r"}',
      '{"other":{"code":"X"},"list":[{"a":1},[],"s\\"q"],"code":"O1","req":"r","x":1e5}',
      '{"__proto__":{"code":"P"},"constructor":1,"req":"r"}',
    ]) {
      const got = same(`[${record}]`);
      expect(got.gaveUp).toBe(false);
    }
  });

  it('gives up on a text that is not a JSON array, on deep nesting and on trailing data, having sent only whole records before', () => {
    for (const text of [
      '',
      '   ',
      '{}',
      '\ufeff[]',
      `[${RECORD},${RECORD}`,
      `[${RECORD}] x`,
      `[${RECORD},]`,
      `[${RECORD} ${RECORD}]`,
      `[{"code":"A1","req":"r","x":01}]`,
      `[{"code":"A1","req":"r","x":"raw\ttab"}]`,
      `[{"code":"A1","req":"r","x":nul}]`,
      `[${RECORD},${RECORD},${RECORD},${RECORD},{"deep":${'['.repeat(100)}${']'.repeat(100)},"req":"r"}]`,
    ]) {
      expect(same(text).gaveUp, text.slice(0, 60)).toBe(true);
    }
    expect(read(mode, `[${RECORD},${RECORD},${RECORD},${RECORD},{"deep":${'['.repeat(100)}${']'.repeat(100)}}]`).lines).toHaveLength(3);
  });

  it('reads records cut anywhere into pieces, a record larger than a piece too', () => {
    const big = `{"code":"B1","text":"${'x'.repeat(5000)}","req":"r"}`;
    const text = `[ ${RECORD} ,\n${big},${RECORD}\t]  `;
    for (let cut = 0; cut <= text.length; cut += 7) expect(same(text, [cut, cut + 1000, cut + 1003]).gaveUp).toBe(false);
  });

  it('agrees with the general path on any records, damaged or not, cut anywhere', () => {
    const word = fc.oneof(
      fc.string({ maxLength: 10, unit: 'binary' }),
      fc.constantFrom(
        '',
        ' ',
        '  ',
        ' A',
        'A ',
        'AB1',
        'ab',
        'DE',
        'de',
        'FR',
        'Ünï',
        'ÜNÏ',
        'Çé',
        'ÇÉ',
        'yes',
        'No',
        'TRUE',
        '1',
        '0',
        'x\u0000y',
      ),
      fc.constantFrom(
        '2024-02-29',
        '2023-02-29',
        '2024-01-01T10:00:00Z',
        '2024-01-01T23:30:00-01:30',
        '2024-01-01T10:00:00.000Z',
        '2024-01-01',
      ),
      fc.constantFrom('0f8fad5b-d9cb-469f-a165-70867728950e', '{0F8FAD5B-D9CB-469F-A165-70867728950E}', 'not-a-guid'),
    );
    const numberText = fc.oneof(
      fc.constantFrom(
        '0',
        '-0',
        '0.5',
        '-0.50',
        '12',
        '1E5',
        '1e-7',
        '2.5e+3',
        '123456789012345',
        '1234567890123456',
        '9007199254740993',
        '1e400',
        '0.000001',
      ),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
      fc.integer().map(String),
      // Numbers as anyone may write them: a fraction ending in zeros, many digits, exponents.
      fc
        .tuple(
          fc.constantFrom('', '-'),
          fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,17}$/)),
          fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{1,9}$/)),
          fc.oneof(fc.constant(''), fc.constant(''), fc.stringMatching(/^[eE][+-]?[0-9]{1,3}$/)),
        )
        .map((parts) => parts.join('')),
    );
    const scalar = fc.oneof(
      word.map((w) => JSON.stringify(w)),
      numberText,
      fc.constantFrom('true', 'false', 'null'),
    );
    const value: fc.Arbitrary<string> = fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      scalar,
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    );
    const keyName = fc.constantFrom(
      'code',
      'text',
      'int',
      'bool',
      'date',
      'dt',
      'guid',
      'req',
      'a',
      'other',
      'c\\u006fde',
      'opt',
      'b',
      'dec',
    );
    const ws = fc.constantFrom('', '', '', ' ', '\n', ' \t ');
    const object: fc.Arbitrary<string> = fc.letrec<{ obj: string }>((tie) => ({
      obj: fc
        .array(fc.tuple(keyName, fc.oneof({ depthSize: 'small' }, value, value, tie('obj')), ws, ws), { maxLength: 9 })
        .map((members) => `{${members.map(([k, v, s1, s2]) => `${s1}"${k}"${s2}:${s1}${v}${s2}`).join(',')}}`),
    })).obj;
    // Records shaped as the mapping reads them (so that every column meets every kind of value), their
    // members in any order, some twice.
    const member = (key: string, v: fc.Arbitrary<string>): fc.Arbitrary<string[]> =>
      fc.oneof(
        { arbitrary: fc.constant<string[]>([]), weight: 2 },
        { arbitrary: v.map((x) => [`"${key}":${x}`]), weight: 12 },
        { arbitrary: fc.tuple(v, v).map(([x, y]) => [`"${key}":${x}`, `"${key}":${y}`]), weight: 1 },
      );
    const members = (parts: fc.Arbitrary<string[]>[]): fc.Arbitrary<string> =>
      fc
        .tuple(...parts)
        .chain((ms) => fc.shuffledSubarray(ms.flat(), { minLength: ms.flat().length }))
        .map((ms) => `{${ms.join(',')}}`);
    // Mostly values each field takes (a record with one violation is mapped whole), some that break a rule.
    const quoted = (words: string[]): fc.Arbitrary<string> => fc.constantFrom(...words).map((w) => JSON.stringify(w));
    const good: Record<string, fc.Arbitrary<string>> = {
      code: quoted(['A1', 'B-2', 'ÄB', ' ', '', 'A B', 'a1', 'A1 ', 'TOOLONG1']),
      text: fc.oneof(
        quoted(['a', 'Rom', 'é', 'ab ', '   ', '']),
        fc.string({ maxLength: 3 }).map((w) => JSON.stringify(w)),
      ),
      int: fc.oneof(fc.integer().map(String), fc.constantFrom('0', '-0', '12', '1e2', '123456789012345', '9007199254740993')),
      bool: fc.constantFrom('true', 'false', '1', '0', '"yes"', '"No"', 'null'),
      date: quoted(['2024-02-29', '2024-01-01', '']),
      dt: quoted([
        ...['2024-01-01T10:00:00Z', '2024-01-01T23:30:00-01:30', '2024-01-01T10:00:00.000Z', '2024-01-01T10:00:00.1234+00:00'],
        ...['2024-02-29t10:00z', '2024-01-01T10:00:00.5-00:00', '2023-02-29T10:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01T10:00:60Z'],
        ...['2024-01-01T10:00:00.Z', '2024-01-01T10:00:00.1234567891Z', '0999-01-01T00:00:00+00:00', '2024-01-01T10:00+00:00'],
        ...[
          '2024-01-01T10:00:00+00:0',
          '2024-01-01T10:00:00',
          '2024-13-01T10:00:00Z',
          '2024-01-01T10:00:00.12Z',
          '2024-01-01T10:00:0Z',
          '2024-01-01T10:00:00Zx',
        ],
      ]),
      guid: quoted(['0f8fad5b-d9cb-469f-a165-70867728950e', '{0F8FAD5B-D9CB-469F-A165-70867728950E}']),
      req: quoted(['r', 'ab', ' c']),
      opt: quoted(['DE', 'de', 'fr', 'Ünï', 'ünï', '']),
      dec: numberText,
      other: value,
    };
    const field = (key: string): fc.Arbitrary<string[]> =>
      member(key, fc.oneof({ arbitrary: good[key]!, weight: 8 }, { arbitrary: value, weight: 1 }));
    const shaped = members([
      ...['code', 'text', 'int', 'bool', 'date', 'dt', 'guid', 'req', 'other'].map(field),
      member('a', fc.oneof(members([field('opt'), member('b', fc.oneof(members([field('dec')]), value))]), fc.constant('null'), value)),
    ]);
    const record = fc.oneof(shaped, shaped, object, value);
    const text = fc
      .tuple(fc.array(fc.tuple(record, ws), { maxLength: 8 }), ws)
      .map(([rs, s]) => `${s}[${rs.map(([r, w]) => `${w}${r}${w}`).join(',')}]${s}`);
    const damaged = fc
      .tuple(text, fc.nat(), fc.constantFrom('', ',', ']', '[', '}', '{', '"', '\\', 'x', ' ', '0', ':'))
      .map(([t, at, edit]) => t.slice(0, at % Math.max(1, t.length)) + edit + t.slice((at % Math.max(1, t.length)) + 1));
    fc.assert(
      fc.property(fc.oneof(text, text, damaged), fc.array(fc.nat(), { maxLength: 4 }), fc.integer({ min: 1, max: 4 }), (t, cuts, batch) => {
        const got = same(t, cuts, batch);
        if (general(mode, t) !== null) expect(got.gaveUp, t).toBe(false);
      }),
      { numRuns: 2000, seed: 20261127 },
    );
  });

  it('is used only for records at the root whose source paths are names', () => {
    expect(readsStraight(mapping, '')).toBe(true);
    expect(readsStraight(mapping, 'data')).toBe(false);
    const indexed = compileMapping(
      { ...plan, fields: plan.fields.map((f) => (f.fieldNo === 1 ? { ...f, sourcePath: 'codes[0]' } : f)) },
      new Map([['thing', table]]),
    );
    expect(readsStraight(indexed, '')).toBe(false);
  });
});
