import { describe, expect, it } from 'vitest';
import type { IntegrationPlan, WriteMode } from '../../src/integrations/model.js';
import type { SqlValue } from '../../src/mapping/convert.js';
import { compileMapping, mapRecord, type RelationExists } from '../../src/mapping/engine.js';
import { describeValue, formatErrorMessage, formatSkippedMessage, recordError, type RecordError } from '../../src/mapping/messages.js';
import { extractRecords } from '../../src/mapping/payload.js';
import { compilePath, parsePath } from '../../src/json-path/paths.js';
import type { TargetField, TargetTable } from '../../src/tables/model.js';

interface Column {
  readonly field: TargetField;
  readonly source?: string;
  readonly constant?: string | null;
  readonly required?: boolean;
}

function planFor(columns: readonly Column[], writeMode: WriteMode = 'insert', recordsPath = ''): IntegrationPlan {
  return {
    integration: {
      sortingOrder: 7,
      name: 'test',
      type: 'restApi',
      targetTable: 't',
      recordsPath,
      acceptBulkImportRequests: true,
      maxPayloadSizeKb: null,
      writeMode,
      onRecordError: 'fail',
    },
    fields: columns.map((c, i) => ({
      integrationSortingOrder: 7,
      fieldNo: (i + 1) * 10,
      title: `Field ${c.field.name}`,
      sourcePath: c.source ?? c.field.name,
      columnType: c.constant === undefined ? 'standard' : 'constant',
      constantValue: c.constant ?? null,
    })),
    mappings: columns.map((c, i) => ({
      integrationSortingOrder: 7,
      fieldNo: (i + 1) * 10,
      targetField: c.field.name,
      required: c.required ?? false,
    })),
  };
}

const tableOf = (fields: readonly TargetField[], primaryKey: readonly string[] = []): TargetTable => ({ name: 't', fields, primaryKey });

/** Maps one record as record number 3; returns the row or the exact error messages. */
function map(
  columns: readonly Column[],
  record: unknown,
  options: { primaryKey?: readonly string[]; exists?: RelationExists } = {},
): { row?: SqlValue[]; messages?: string[] } {
  const mapping = compileMapping(
    planFor(columns),
    new Map([
      [
        't',
        tableOf(
          columns.map((c) => c.field),
          options.primaryKey,
        ),
      ],
      ['parent', parent],
    ]),
  );
  const row: SqlValue[] = new Array<SqlValue>(columns.length).fill(null);
  const violations = mapRecord(mapping, record, row, options.exists ?? (() => true));
  return violations === null ? { row } : { messages: violations.map((v) => recordError(3, v.field, v.value, v.rule).message) };
}

/** Converts one value of one field named "f". */
function convert(field: Omit<TargetField, 'name'>, value: unknown, required = false): { row?: SqlValue[]; messages?: string[] } {
  return map([{ field: { ...field, name: 'f' }, source: 'v', required }], value === undefined ? {} : { v: value });
}

const parent: TargetTable = { name: 'parent', primaryKey: ['no'], fields: [{ name: 'no', type: 'code' }] };
const long = 'a'.repeat(70);

describe('path compiler', () => {
  const doc = {
    a: 1,
    address: { city: 'Berlin', 'odd key': { x: 'odd' } },
    lines: [{ qty: 2 }, { qty: 5 }],
    items: [10, 20],
    '@odata.value': [1, 2, 3],
    obj: { '0': 'zero' },
    "it's": 'quoted',
    text: 'abc',
  };
  it.each([
    ['', doc],
    ['$', doc],
    ['a', 1],
    ['address.city', 'Berlin'],
    ['lines.0.qty', 2],
    ['lines.1.qty', 5],
    ['lines[1].qty', 5],
    ['$.address.city', 'Berlin'],
    ["$['address']['odd key'].x", 'odd'],
    ['$.address["odd key"].x', 'odd'],
    ["$['@odata.value']", [1, 2, 3]],
    ['$.items[0]', 10],
    ['$.items.1', 20],
    ['obj.0', 'zero'],
    ["$['it\\'s']", 'quoted'],
    ['missing', undefined],
    ['address.missing.deeper', undefined],
    ['lines.7.qty', undefined],
    ['text.length', undefined],
    ['items.length', undefined],
    ['toString', undefined],
    ['address.constructor', undefined],
    ['a.b', undefined],
  ])('%j reads %j', (path, expected) => {
    expect(compilePath(path)(doc)).toEqual(expected);
  });

  it('reads an own "__proto__" property of parsed JSON and nothing inherited', () => {
    expect(compilePath('__proto__')(JSON.parse('{"__proto__": 5}'))).toBe(5);
    expect(compilePath('hasOwnProperty')(JSON.parse('{"hasOwnProperty": "own"}'))).toBe('own');
  });

  it('parses once into name and index segments', () => {
    expect(parsePath("$.a[2]['b c'].3")).toEqual([
      { kind: 'name', name: 'a' },
      { kind: 'index', index: 2 },
      { kind: 'name', name: 'b c' },
      { kind: 'index', index: 3 },
    ]);
  });

  it.each([
    ['a..b', 'empty name at position 2'],
    ['a.', 'empty name at position 2'],
    ['.a', 'a dot path starts with a name'],
    ['$..a', 'recursive descent ("..") is not supported'],
    ['$.*', 'wildcards are not supported'],
    ['$[*]', 'only quoted names and non-negative indexes are supported in brackets (at position 1)'],
    ['$[-1]', 'only quoted names and non-negative indexes are supported in brackets (at position 1)'],
    ["$['a", 'unterminated quoted name'],
    ["$['a'x]", 'expected "]" after the quoted name at position 5'],
    ['$a', 'unexpected "a" at position 1'],
  ])('refuses %j: %s', (path, reason) => {
    expect(() => compilePath(path)).toThrow(`invalid path "${path}": ${reason}`);
  });
});

describe('conversion to the target type', () => {
  it.each<[string, Omit<TargetField, 'name'>, unknown, SqlValue]>([
    ['text keeps a string as it is', { type: 'text' }, ' Hello ', ' Hello '],
    ['text takes a number', { type: 'text' }, 42.5, '42.5'],
    ['text takes a boolean', { type: 'text' }, true, 'true'],
    ['text counts characters, not UTF-16 units', { type: 'text', maxLength: 3 }, '😀😀😀', '😀😀😀'],
    ['text at exactly its length', { type: 'text', maxLength: 5 }, 'abcde', 'abcde'],
    ['code in capitals is stored as sent', { type: 'code' }, 'C001', 'C001'],
    ['code keeps inner spaces and signs', { type: 'code' }, 'AB 12-X/3', 'AB 12-X/3'],
    ['code in non-ASCII capitals', { type: 'code' }, 'ÆØÅ-Ü', 'ÆØÅ-Ü'],
    ['code takes a number', { type: 'code' }, 10, '10'],
    ['code at exactly its length', { type: 'code', maxLength: 4 }, 'AB12', 'AB12'],
    ['integer from a number', { type: 'integer' }, 42, 42],
    ['integer from a signed string', { type: 'integer' }, '-17', -17],
    ['integer from a plus-signed string', { type: 'integer' }, '+17', 17],
    ['integer from 1.0 in JSON (it parses as 1)', { type: 'integer' }, JSON.parse('1.0'), 1],
    ['decimal from a number', { type: 'decimal' }, 12.5, 12.5],
    ['decimal from a string', { type: 'decimal' }, '-12.50', -12.5],
    ['decimal from a leading-dot string', { type: 'decimal' }, '.5', 0.5],
    ['decimal from a trailing-dot string', { type: 'decimal' }, '1.', 1],
    ['decimal from an exponent', { type: 'decimal' }, '1.5E3', 1500],
    ['boolean true', { type: 'boolean' }, true, 1],
    ['boolean false', { type: 'boolean' }, false, 0],
    ['boolean 1', { type: 'boolean' }, 1, 1],
    ['boolean 0', { type: 'boolean' }, 0, 0],
    ['boolean "TRUE"', { type: 'boolean' }, 'TRUE', 1],
    ['boolean "False"', { type: 'boolean' }, 'False', 0],
    ['boolean "yes"', { type: 'boolean' }, 'yes', 1],
    ['boolean "No"', { type: 'boolean' }, 'No', 0],
    ['boolean "1"', { type: 'boolean' }, '1', 1],
    ['boolean "0"', { type: 'boolean' }, '0', 0],
    ['date as it is', { type: 'date' }, '2024-02-29', '2024-02-29'],
    ['datetime in UTC', { type: 'datetime' }, '2024-01-02T03:04:05Z', '2024-01-02T03:04:05.000Z'],
    ['datetime already normalized', { type: 'datetime' }, '2024-01-02T03:04:05.678Z', '2024-01-02T03:04:05.678Z'],
    ['datetime with an offset', { type: 'datetime' }, '2024-01-02T03:04:05+02:00', '2024-01-02T01:04:05.000Z'],
    ['datetime without seconds', { type: 'datetime' }, '2024-01-02T03:04-05:30', '2024-01-02T08:34:00.000Z'],
    ['datetime crossing the year', { type: 'datetime' }, '2024-12-31T23:30:00-01:00', '2025-01-01T00:30:00.000Z'],
    ['datetime crossing back over a leap day', { type: 'datetime' }, '2024-03-01T00:30:00+01:00', '2024-02-29T23:30:00.000Z'],
    ['datetime with microseconds (cut to ms)', { type: 'datetime' }, '2024-01-02T03:04:05.123456+00:00', '2024-01-02T03:04:05.123Z'],
    ['datetime with one fraction digit', { type: 'datetime' }, '2024-01-02T03:04:05.5Z', '2024-01-02T03:04:05.500Z'],
    ['datetime with lowercase t and z', { type: 'datetime' }, '2024-01-02t03:04:05z', '2024-01-02T03:04:05.000Z'],
    ['option exactly', { type: 'option', options: ['Open', 'Closed', 'On Hold'] }, 'On Hold', 'On Hold'],
    [
      'option in other case is stored in its canonical spelling',
      { type: 'option', options: ['Open', 'Closed', 'On Hold'] },
      'ON HOLD',
      'On Hold',
    ],
    ['guid in braces, uppercase', { type: 'guid' }, '{6F9619FF-8B86-D011-B42D-00C04FC964FF}', '6f9619ff-8b86-d011-b42d-00c04fc964ff'],
    ['guid plain', { type: 'guid' }, '6f9619ff-8b86-d011-b42d-00c04fc964ff', '6f9619ff-8b86-d011-b42d-00c04fc964ff'],
  ])('%s', (_name, field, value, expected) => {
    expect(convert(field, value)).toEqual({ row: [expected] });
  });

  it.each<[string, Omit<TargetField, 'name'>, unknown, string]>([
    ['text refuses an object', { type: 'text' }, { a: 1 }, 'record 3: field "f" value {"a":1} is not a text value'],
    ['text refuses an array', { type: 'text' }, [1, 2], 'record 3: field "f" value [1,2] is not a text value'],
    ['text over its length', { type: 'text', maxLength: 5 }, 'abcdef', 'record 3: field "f" value "abcdef" exceeds 5 characters'],
    [
      'text over the default length 250',
      { type: 'text' },
      'x'.repeat(251),
      `record 3: field "f" value "${'x'.repeat(60)}…" exceeds 250 characters`,
    ],
    [
      'text shows a long value cut to 60 characters',
      { type: 'text', maxLength: 10 },
      long,
      `record 3: field "f" value "${'a'.repeat(60)}…" exceeds 10 characters`,
    ],
    ['code over its length', { type: 'code', maxLength: 4 }, 'ABCDE', 'record 3: field "f" value "ABCDE" exceeds 4 characters'],
    [
      'code in lower case is refused, not upper-cased',
      { type: 'code' },
      'c001',
      'record 3: field "f" value "c001" is not in capitals (a code is stored as sent, never upper-cased)',
    ],
    [
      'code with a non-ASCII lower-case letter',
      { type: 'code' },
      'CØø',
      'record 3: field "f" value "CØø" is not in capitals (a code is stored as sent, never upper-cased)',
    ],
    [
      'code with white space around it is refused, not trimmed',
      { type: 'code' },
      ' C001 ',
      'record 3: field "f" value " C001 " has white space at its start or end (a code is stored as sent, never trimmed)',
    ],
    [
      'code ending in a non-breaking space',
      { type: 'code' },
      'C001\u00a0',
      'record 3: field "f" value "C001\u00a0" has white space at its start or end (a code is stored as sent, never trimmed)',
    ],
    [
      'code from a boolean reads "true", not in capitals',
      { type: 'code' },
      true,
      'record 3: field "f" value true is not in capitals (a code is stored as sent, never upper-cased)',
    ],
    [
      'code over the default length 20',
      { type: 'code' },
      'c'.repeat(21),
      `record 3: field "f" value "${'c'.repeat(21)}" exceeds 20 characters`,
    ],
    ['integer refuses a fraction', { type: 'integer' }, 1.5, 'record 3: field "f" value 1.5 is not an integer'],
    ['integer refuses "1.0"', { type: 'integer' }, '1.0', 'record 3: field "f" value "1.0" is not an integer'],
    ['integer refuses words', { type: 'integer' }, 'abc', 'record 3: field "f" value "abc" is not an integer'],
    ['integer refuses padding', { type: 'integer' }, ' 4', 'record 3: field "f" value " 4" is not an integer'],
    [
      'integer refuses an unsafe number',
      { type: 'integer' },
      2 ** 53,
      `record 3: field "f" value 9007199254740992 is outside the range an integer field holds exactly (-9007199254740991 to 9007199254740991)`,
    ],
    [
      'integer refuses an unsafe string',
      { type: 'integer' },
      '9007199254740993',
      'record 3: field "f" value "9007199254740993" is outside the range an integer field holds exactly (-9007199254740991 to 9007199254740991)',
    ],
    ['integer refuses a boolean', { type: 'integer' }, true, 'record 3: field "f" value true is not an integer'],
    ['decimal refuses a comma', { type: 'decimal' }, '1,5', 'record 3: field "f" value "1,5" is not a decimal number'],
    ['decimal refuses words', { type: 'decimal' }, 'ten', 'record 3: field "f" value "ten" is not a decimal number'],
    [
      'decimal refuses an overflow',
      { type: 'decimal' },
      '1e999',
      'record 3: field "f" value "1e999" is not held exactly by a decimal field (at most 15 significant digits, within ±1.8e308)',
    ],
    ['decimal refuses a boolean', { type: 'decimal' }, false, 'record 3: field "f" value false is not a decimal number'],
    ['boolean refuses 2', { type: 'boolean' }, 2, 'record 3: field "f" value 2 is not a boolean'],
    ['boolean refuses "y"', { type: 'boolean' }, 'y', 'record 3: field "f" value "y" is not a boolean'],
    ['boolean refuses an object', { type: 'boolean' }, {}, 'record 3: field "f" value {} is not a boolean'],
    [
      'date refuses 29 February of a common year',
      { type: 'date' },
      '2023-02-29',
      'record 3: field "f" value "2023-02-29" is not a date (YYYY-MM-DD)',
    ],
    ['date refuses month 13', { type: 'date' }, '2024-13-01', 'record 3: field "f" value "2024-13-01" is not a date (YYYY-MM-DD)'],
    ['date refuses a short month', { type: 'date' }, '2024-1-01', 'record 3: field "f" value "2024-1-01" is not a date (YYYY-MM-DD)'],
    [
      'date refuses a date-time',
      { type: 'date' },
      '2024-01-01T00:00:00Z',
      'record 3: field "f" value "2024-01-01T00:00:00Z" is not a date (YYYY-MM-DD)',
    ],
    ['date refuses a number', { type: 'date' }, 20240101, 'record 3: field "f" value 20240101 is not a date (YYYY-MM-DD)'],
    ...[
      '2024-01-02T03:04:05',
      '2024-01-02',
      '2024-02-30T00:00:00Z',
      '2024-01-02T24:00:00Z',
      '2024-01-02T03:60:00Z',
      '2024-01-02T03:04:60Z',
      '2024-01-02 03:04:05Z',
      '2024-01-02T03:04:05.Z',
      '2024-01-02T03:04:05+0200',
      '2024-01-02T03:04:05+24:00',
      '2024-01-02T03:04:05Z ',
    ].map((v): [string, Omit<TargetField, 'name'>, unknown, string] => [
      `datetime refuses ${v}`,
      { type: 'datetime' },
      v,
      `record 3: field "f" value ${JSON.stringify(v)} is not an ISO 8601 date-time with time zone`,
    ]),
    [
      'datetime refuses epoch milliseconds',
      { type: 'datetime' },
      1704164645000,
      'record 3: field "f" value 1704164645000 is not an ISO 8601 date-time with time zone',
    ],
    [
      'option refuses an unknown value and lists the allowed ones',
      { type: 'option', options: ['Open', 'Closed', 'On Hold'] },
      'Pending',
      'record 3: field "f" value "Pending" is not one of the allowed values: Open, Closed, On Hold',
    ],
    [
      'guid refuses missing dashes',
      { type: 'guid' },
      '6F9619FF8B86D011B42D00C04FC964FF',
      'record 3: field "f" value "6F9619FF8B86D011B42D00C04FC964FF" is not a GUID',
    ],
    [
      'guid refuses an unbalanced brace',
      { type: 'guid' },
      '{6f9619ff-8b86-d011-b42d-00c04fc964ff',
      'record 3: field "f" value "{6f9619ff-8b86-d011-b42d-00c04fc964ff" is not a GUID',
    ],
    [
      'guid refuses non-hex digits',
      { type: 'guid' },
      '6g9619ff-8b86-d011-b42d-00c04fc964ff',
      'record 3: field "f" value "6g9619ff-8b86-d011-b42d-00c04fc964ff" is not a GUID',
    ],
  ])('%s', (_name, field, value, message) => {
    expect(convert(field, value)).toEqual({ messages: [message] });
  });
});

describe('absent values', () => {
  const absent: [string, unknown][] = [
    ['missing', undefined],
    ['null', null],
    ['an empty string', ''],
  ];
  it.each(absent)('%s is NULL when not required', (_name, value) => {
    expect(convert({ type: 'integer' }, value)).toEqual({ row: [null] });
  });
  it.each(absent)('%s breaks "is required" of the mapping', (_name, value) => {
    expect(convert({ type: 'integer' }, value, true)).toEqual({ messages: ['record 3: field "f" is required'] });
  });
  it.each(['text', 'code', 'option', 'guid'] as const)('a blank string is absent for %s', (type) => {
    expect(convert({ type, options: ['A'] }, '  \t ')).toEqual({ row: [null] });
    expect(convert({ type, options: ['A'] }, '  \t ', true)).toEqual({ messages: ['record 3: field "f" is required'] });
  });
  it('a blank string is not a number (only the empty string is absent for numbers)', () => {
    expect(convert({ type: 'decimal' }, ' ')).toEqual({ messages: ['record 3: field "f" value " " is not a decimal number'] });
  });
  it('the target field\'s own "required" applies', () => {
    expect(map([{ field: { name: 'f', type: 'text', required: true } }], {})).toEqual({ messages: ['record 3: field "f" is required'] });
  });
  it('a primary key field is always required', () => {
    expect(map([{ field: { name: 'no', type: 'code' } }], { no: '' }, { primaryKey: ['no'] })).toEqual({
      messages: ['record 3: field "no" is required'],
    });
  });
});

describe('records', () => {
  const columns: Column[] = [
    { field: { name: 'no', type: 'code' } },
    { field: { name: 'qty', type: 'integer' }, source: 'lines[0].qty' },
    { field: { name: 'parentNo', type: 'code', relation: { table: 'parent', field: 'no' } } },
  ];

  it('maps every column through its source path', () => {
    expect(map(columns, { no: 'A1', lines: [{ qty: '4' }], parentNo: 'P' })).toEqual({ row: ['A1', 4, 'P'] });
  });

  it('reports every broken rule of a record, in column order', () => {
    expect(map(columns, { qty: 1, lines: [{ qty: 'x' }], parentNo: 'P' }, { exists: () => false, primaryKey: ['no'] })).toEqual({
      messages: [
        'record 3: field "no" is required',
        'record 3: field "qty" value "x" is not an integer',
        'record 3: field "parentNo" value "P" does not exist in table "parent" (field "no")',
      ],
    });
  });

  it('checks a relation with the converted value', () => {
    const asked: unknown[] = [];
    map(columns, { no: 'A', parentNo: 7 }, { exists: (_c, v) => (asked.push(v), true) });
    expect(asked).toEqual(['7']);
  });

  it('does not check the relation of an absent value', () => {
    expect(map(columns, { no: 'A' }, { exists: () => false })).toEqual({ row: ['A', null, null] });
  });

  it.each([42, 'text', null, [{ no: 'a' }]])('refuses a record that is not an object: %j', (record) => {
    expect(map(columns, record)).toEqual({ messages: [`record 3: value ${JSON.stringify(record)} is not a JSON object`] });
  });

  it('gives a constant column its converted constant in every record', () => {
    const constant: Column[] = [
      { field: { name: 'no', type: 'code' } },
      { field: { name: 'status', type: 'option', options: ['New', 'Done'] }, constant: 'new' },
    ];
    expect(map(constant, { no: 'A', status: 'Done' })).toEqual({ row: ['A', 'New'] });
  });
});

describe('compiling a plan', () => {
  const no: TargetField = { name: 'no', type: 'code' };
  const name: TargetField = { name: 'name', type: 'text', required: true };
  const compile = (
    columns: readonly Column[],
    mode: WriteMode = 'insert',
    primaryKey: readonly string[] = ['no'],
    plan = planFor(columns, mode),
  ) => compileMapping(plan, new Map([['t', tableOf([no, name, { name: 'extra', type: 'integer' }], primaryKey)]]));

  it('accepts a complete plan', () => {
    expect(compile([{ field: no }, { field: name }]).keyColumns).toEqual([0]);
  });
  it.each<[string, () => unknown, string]>([
    [
      'an unknown target field',
      () => compile([{ field: no }, { field: name }, { field: { name: 'nope', type: 'text' } }]),
      'integration field 30 "Field nope": target field "nope" does not exist in table "t"',
    ],
    ['an unmapped primary key field', () => compile([{ field: name }]), 'primary key field "no" of table "t" is not mapped'],
    ['an unmapped required field on insert', () => compile([{ field: no }]), 'required field "name" of table "t" is not mapped'],
    ['an unmapped required field on upsert', () => compile([{ field: no }], 'upsert'), 'required field "name" of table "t" is not mapped'],
    [
      'update without a primary key',
      () => compile([{ field: no }], 'update', []),
      'write mode "update" needs a primary key, and table "t" has none',
    ],
    [
      'a bad source path',
      () => compile([{ field: no, source: 'a..b' }, { field: name }]),
      'integration field 10 "Field no": source path: invalid path "a..b": empty name at position 2',
    ],
    [
      'a bad records path',
      () => compile([{ field: no }, { field: name }], 'insert', ['no'], planFor([{ field: no }, { field: name }], 'insert', '$[*]')),
      'records path: invalid path "$[*]": only quoted names and non-negative indexes are supported in brackets (at position 1)',
    ],
    [
      'an invalid constant',
      () => compile([{ field: no }, { field: name }, { field: { name: 'extra', type: 'integer' }, constant: 'ten' }]),
      'integration field 30 "Field extra": constant value "ten" for field "extra" is not an integer',
    ],
    [
      'an empty constant for a required field',
      () => compile([{ field: no }, { field: name, constant: '' }]),
      'integration field 20 "Field name": field "name" is required, but the constant value is empty',
    ],
    [
      'a target field mapped twice',
      () => compile([{ field: no }, { field: name }, { field: name, source: 'other' }]),
      'integration field 30 "Field name": target field "name" is already mapped by field 20',
    ],
    ['no mappings', () => compile([]), 'integration 7 has no mappings'],
  ])('refuses %s', (_name, run, message) => {
    expect(run).toThrow(message);
  });
  it('lets an update leave required fields unmapped', () => {
    expect(compile([{ field: no }], 'update').columns).toHaveLength(1);
  });
  it('refuses a relation to an undeclared table', () => {
    const plan = planFor([{ field: no }, { field: name }, { field: { name: 'extra', type: 'integer' } }]);
    const table = tableOf([no, name, { name: 'extra', type: 'integer', relation: { table: 'ghost', field: 'id' } }], ['no']);
    expect(() => compileMapping(plan, new Map([['t', table]]))).toThrow(
      'field "extra" relates to field "id" of table "ghost", which is not declared',
    );
  });
});

describe('payload records', () => {
  const get = (path: string) => compilePath(path);
  it('takes the root array when the records path is blank', () => {
    expect(extractRecords('[{"a":1}]', '', get(''))).toEqual([{ a: 1 }]);
  });
  it.each([
    ['data.items', '{"data":{"items":[1]}}'],
    ['$.data.items', '{"data":{"items":[1]}}'],
    ["$['@odata.value']", '{"@odata.value":[1]}'],
  ])('takes the array at %s', (path, payload) => {
    expect(extractRecords(payload, path, get(path))).toEqual([1]);
  });
  it('refuses a payload that is not JSON', () => {
    const error = extractRecords('{"a":', '', get('')) as RecordError;
    expect(error).toMatchObject({ recordNo: null, field: null, value: null, rule: 'is not valid JSON' });
    expect(error.message).toMatch(/^payload is not valid JSON: ./);
  });
  it('refuses a root that is not an array', () => {
    expect(extractRecords('{"a":1}', '', get(''))).toMatchObject({
      message: "payload: the root is not an array (set the integration's records path)",
    });
  });
  it('refuses a records path that does not point to an array', () => {
    expect(extractRecords('{"data":{"items":{}}}', 'data.items', get('data.items'))).toMatchObject({
      message: 'payload: records path "data.items" does not point to an array',
    });
  });
});

describe('messages', () => {
  const errors = (n: number): RecordError[] => Array.from({ length: n }, (_, i) => recordError(i + 1, 'f', null, 'is required'));

  it.each<[number, string]>([
    [1, 'record 1: field "f" is required'],
    [3, 'record 1: field "f" is required; record 2: field "f" is required; record 3: field "f" is required'],
    [4, 'record 1: field "f" is required; record 2: field "f" is required; record 3: field "f" is required; … and 1 more error'],
    [5, 'record 1: field "f" is required; record 2: field "f" is required; record 3: field "f" is required; … and 2 more errors'],
  ])('formats %i errors', (n, expected) => {
    expect(formatErrorMessage(errors(n), n)).toBe(expected);
  });

  it('counts errors that were not kept', () => {
    expect(formatErrorMessage(errors(1000), 1001)).toBe(
      'record 1: field "f" is required; record 2: field "f" is required; record 3: field "f" is required; … and 998 more errors',
    );
  });

  it('is empty without errors', () => {
    expect(formatErrorMessage([], 0)).toBe('');
  });

  it.each<[number, string]>([
    [1, '1 record skipped: record 1: field "f" is required'],
    [2, '2 records skipped: record 1: field "f" is required; record 2: field "f" is required'],
  ])('formats %i skipped records', (n, expected) => {
    expect(formatSkippedMessage(n, errors(n), n)).toBe(expected);
  });

  it.each<[unknown, string]>([
    ['abc', '"abc"'],
    ['a'.repeat(60), `"${'a'.repeat(60)}"`],
    ['a'.repeat(61), `"${'a'.repeat(60)}…"`],
    ['say "hi"', '"say \\"hi\\""'],
    [12.5, '12.5'],
    [null, 'null'],
    [{ long: 'x'.repeat(80) }, `{"long":"${'x'.repeat(51)}…`],
  ])('describes %j as %s', (value, expected) => {
    expect(describeValue(value)).toBe(expected);
  });

  it('builds a record message from its parts', () => {
    expect(recordError(3, 'email', describeValue('averyveryverylong'), 'exceeds 80 characters')).toEqual({
      recordNo: 3,
      field: 'email',
      value: '"averyveryverylong"',
      rule: 'exceeds 80 characters',
      message: 'record 3: field "email" value "averyveryverylong" exceeds 80 characters',
    });
    expect(recordError(12, null, null, 'CHECK constraint failed: x').message).toBe('record 12: CHECK constraint failed: x');
  });
});

describe('describeValue on values nested deeper than the stack', () => {
  it('describes the value instead of failing', () => {
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(describeValue(deep)).toBe('[…]');
    expect(describeValue({ a: deep })).toBe('{…}');
  });
});
