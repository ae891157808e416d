/**
 * The pure parts behind the target table pages: where an API refusal belongs in a form (the path read
 * against the form's shape, rows counted as the user sees them), and the rows page's plain filter.
 */
import { describe, expect, it } from 'vitest';
import { placeError } from '../../src/tables/error-places.js';
import type { TargetTable } from '../../src/tables/model.js';
import { plainFilter } from '../../src/tables/row-filter.js';
import { declarationOf, TABLE_FORM_SHAPE, blankRow, type FieldRow } from '../../src/tables/table-form.js';

describe('placeError', () => {
  it.each([
    ['name: "X" is not a valid table name', { input: 'name', text: 'Table name: "X" is not a valid table name' }],
    [
      'fields[2].maxLength: must be between 1 and 2048, got 0',
      { input: 'fields.2.length', group: 'fields', text: 'Fields, row 3, Length: must be between 1 and 2048, got 0' },
    ],
    [
      'fields[0].options[1]: "M" is listed twice',
      { input: 'fields.0.options', group: 'fields', text: 'Fields, row 1, Option values: "M" is listed twice' },
    ],
    [
      'fields[1].relation.field: "x" is not the key',
      { input: 'fields.1.relationField', group: 'fields', text: 'Fields, row 2, Relation field: "x" is not the key' },
    ],
    [
      'fields[1].relation: field "a" is integer',
      { input: 'fields.1.relationTable', group: 'fields', text: 'Fields, row 2, Relation: field "a" is integer' },
    ],
    ['fields[3]: something about the row', { input: 'fields.3.name', group: 'fields', text: 'Fields, row 4: something about the row' }],
    ['fields: declare at least one field', { group: 'fields', text: 'Fields: declare at least one field' }],
    ['primaryKey[0]: "b" is boolean', { input: 'fields.0.key', group: 'primaryKey', text: 'Primary key, row 1: "b" is boolean' }],
    ['Target table "x" already exists; redeclare it', { text: 'Target table "x" already exists; redeclare it' }],
    ['constructor: not a property of the form', { text: 'constructor: not a property of the form' }],
  ])('%s', (message, placed) => {
    expect(placeError(message, TABLE_FORM_SHAPE)).toEqual(placed);
  });

  it('counts rows as the form shows them, through rowOf', () => {
    expect(placeError('fields[1].type: bad', TABLE_FORM_SHAPE, (_group, i) => i + 2)).toEqual({
      input: 'fields.3.type',
      group: 'fields',
      text: 'Fields, row 4, Type: bad',
    });
  });
});

describe('declarationOf', () => {
  const row = (r: Partial<FieldRow>): FieldRow => ({ ...blankRow(), ...r });

  it('leaves out blank rows and rows ticked Remove, and maps the API items back to the form rows', () => {
    const declaration = declarationOf(
      {
        name: ' t ',
        rows: [
          row({ name: 'a', type: 'integer', key: true }),
          row({}),
          row({ name: 'gone', remove: true }),
          row({ name: 'b', options: 'X\n\n Y ', type: 'option' }),
        ],
      },
      [],
    );
    if ('refused' in declaration) throw new Error(declaration.refused.text);
    expect(declaration.input).toEqual({
      name: 't',
      primaryKey: ['a'],
      fields: [
        { name: 'a', type: 'integer' },
        { name: 'b', type: 'option', options: ['X', 'Y'] },
      ],
    });
    expect(declaration.rowOf('fields', 1)).toBe(3);
    expect(declaration.rowOf('primaryKey', 0)).toBe(0);
  });

  it("reads a relation that names only a table as that table's key, this table's own included", () => {
    const country: TargetTable = { name: 'country', primaryKey: ['code'], fields: [{ name: 'code', type: 'code', required: true }] };
    const declaration = declarationOf(
      {
        name: 'person',
        rows: [
          row({ name: 'id', type: 'integer', key: true }),
          row({ name: 'parent', type: 'integer', relationTable: 'person' }),
          row({ name: 'country', type: 'code', relationTable: 'country' }),
        ],
      },
      [country],
    );
    if ('refused' in declaration) throw new Error(declaration.refused.text);
    expect(declaration.input.fields.map((f) => f.relation)).toEqual([
      undefined,
      { table: 'person', field: 'id' },
      { table: 'country', field: 'code' },
    ]);
  });

  it('keeps the order of an existing key when the same fields are ticked', () => {
    const declaration = declarationOf({ name: 't', rows: [row({ name: 'a', key: true }), row({ name: 'b', key: true })] }, [], ['b', 'a']);
    if ('refused' in declaration) throw new Error(declaration.refused.text);
    expect(declaration.input.primaryKey).toEqual(['b', 'a']);
  });
});

describe('plainFilter', () => {
  const table: TargetTable = {
    name: 't',
    primaryKey: ['id'],
    fields: [
      { name: 'id', type: 'integer', required: true },
      { name: 'name', type: 'text', maxLength: 50 },
      { name: 'born', type: 'date' },
      { name: 'seen', type: 'datetime' },
      { name: 'active', type: 'boolean' },
    ],
  };

  it.each([
    [{}, { clauses: [], text: [] }],
    [
      { column: 'id', op: 'gt', value: '10' },
      { clauses: [{ property: 'id', op: 'gt', value: 10 }], text: [] },
    ],
    [
      { column: 'born', op: 'lt', value: '2026-01-31' },
      { clauses: [{ property: 'born', op: 'lt', value: '2026-01-31' }], text: [] },
    ],
    [
      { column: 'seen', op: 'gt', value: '2026-01-31T12:00:00+01:00' },
      { clauses: [{ property: 'seen', op: 'gt', value: '2026-01-31T11:00:00.000Z' }], text: [] },
    ],
    [
      { column: 'active', op: 'eq', value: 'True' },
      { clauses: [{ property: 'active', op: 'eq', value: true }], text: [] },
    ],
    [
      { column: 'name', op: 'eq', value: "O'Brien" },
      { clauses: [{ property: 'name', op: 'eq', value: "O'Brien" }], text: [] },
    ],
    [
      { column: 'name', op: 'contains', value: 'rie' },
      { clauses: [], text: [{ property: 'name', op: 'contains', value: 'rie' }] },
    ],
  ])('%j', (input, expected) => {
    expect(plainFilter(table, input)).toEqual(expected);
  });

  it.each([
    [
      { column: 'born', op: 'lt', value: '2026-02-30' },
      'value',
      'Value: born is a date field; write a date such as 2026-01-31, not "2026-02-30"',
    ],
    [{ column: 'id', op: 'eq', value: '1.5' }, 'value', 'Value: id is an integer field; write a whole number such as 42, not "1.5"'],
    [{ column: 'active', op: 'eq', value: 'maybe' }, 'value', 'Value: active is a boolean field; write true or false, not "maybe"'],
    [
      { column: 'name', op: 'gt', value: 'x' },
      'op',
      'Operator: name is a text field, which takes equals, contains, starts with; not "greater than"',
    ],
    [{ column: 'nope', op: 'eq', value: 'x' }, 'column', 'Column: "nope" is not a field of table "t"'],
    [{ column: 'name', op: 'eq', value: '' }, 'value', 'Value: type what name equals'],
  ])('refuses %j', (input, at, message) => {
    expect(plainFilter(table, input)).toEqual({ input: at, message });
  });
});
