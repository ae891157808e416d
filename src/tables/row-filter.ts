/**
 * The rows page's plain filter: a column, an operator in words and a value, turned into the same
 * clauses a `$filter` gives (`parseFilter` converts the value, so a date, a date-time or a GUID is
 * compared in the form imports store) or into a text match (contains, starts with), which `$filter`
 * does not have. A value that does not fit the column is refused in words, for the page to show under
 * the input.
 */
import { AppError } from '../core/errors.js';
import { parseFilter } from '../http/odata.js';
import type { FilterClause } from '../storage/filter.js';
import type { FieldType, TargetTable } from './model.js';
import { filterProperties } from './row-routes.js';
import type { TextMatch } from './rows.js';

export const PLAIN_OPERATORS = [
  ['eq', 'equals'],
  ['contains', 'contains'],
  ['startswith', 'starts with'],
  ['gt', 'greater than'],
  ['lt', 'less than'],
] as const;
type PlainOperator = (typeof PLAIN_OPERATORS)[number][0];

/** Which operators each field type takes: text matching for strings, order for numbers and dates. */
const OPERATORS_OF: Readonly<Record<FieldType, readonly PlainOperator[]>> = {
  text: ['eq', 'contains', 'startswith'],
  code: ['eq', 'contains', 'startswith'],
  option: ['eq', 'contains', 'startswith'],
  guid: ['eq'],
  boolean: ['eq'],
  integer: ['eq', 'gt', 'lt'],
  decimal: ['eq', 'gt', 'lt'],
  date: ['eq', 'gt', 'lt'],
  datetime: ['eq', 'gt', 'lt'],
};

/** What a value of each type looks like, for a refusal. */
const EXPECTED: Readonly<Record<Exclude<FieldType, 'option'>, string>> = {
  text: 'any text',
  code: 'any text',
  guid: 'a GUID such as 0b9d6e2c-4f3a-4c1e-9a7b-2d5f8e1c3a60',
  boolean: 'true or false',
  integer: 'a whole number such as 42',
  decimal: 'a number such as 12.5',
  date: 'a date such as 2026-01-31',
  datetime: 'a date and time with its zone, such as 2026-01-31T12:00:00Z',
};

export interface PlainFilterInput {
  readonly column?: string | undefined;
  readonly op?: string | undefined;
  readonly value?: string | undefined;
}

export interface PlainFilter {
  readonly clauses: readonly FilterClause[];
  readonly text: readonly TextMatch[];
}

/** A refusal, for the input it concerns. */
export interface PlainFilterError {
  readonly input: 'column' | 'op' | 'value';
  readonly message: string;
}

const label = (op: string): string => PLAIN_OPERATORS.find(([o]) => o === op)?.[1] ?? op;
const words = (ops: readonly PlainOperator[]): string => ops.map(label).join(', ');
/** `an integer field`, `a date field`. */
const kind = (type: FieldType): string => `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type} field`;
const quoted = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** The OData literal for a value of the type, or undefined when it cannot be one. */
function literal(type: FieldType, value: string): string | undefined {
  switch (type) {
    case 'integer':
    case 'decimal':
      return /^-?\d+(?:\.\d+)?$/.test(value) ? value : undefined;
    case 'boolean': {
      const v = value.toLowerCase();
      return v === 'true' || v === 'false' ? v : undefined;
    }
    case 'text':
    case 'code':
    case 'option':
    case 'guid':
    case 'date':
    case 'datetime':
      return quoted(value);
    default: {
      const never: never = type;
      return never;
    }
  }
}

export function plainFilter(table: TargetTable, input: PlainFilterInput): PlainFilter | PlainFilterError {
  const column = (input.column ?? '').trim();
  const value = (input.value ?? '').trim();
  const op = input.op ?? 'eq';
  if (column === '') {
    if (value === '') return { clauses: [], text: [] };
    return { input: 'column', message: `Column: choose the column to compare with "${value}"` };
  }
  const field = table.fields.find((f) => f.name === column);
  if (field === undefined) return { input: 'column', message: `Column: "${column}" is not a field of table "${table.name}"` };
  const allowed = OPERATORS_OF[field.type];
  if (!allowed.includes(op as PlainOperator)) {
    return { input: 'op', message: `Operator: ${column} is ${kind(field.type)}, which takes ${words(allowed)}; not "${label(op)}"` };
  }
  if (value === '') return { input: 'value', message: `Value: type what ${column} ${label(op)}` };
  if (value.includes('\u0000')) return { input: 'value', message: 'Value: cannot contain the character U+0000' };
  if (op === 'contains' || op === 'startswith') return { clauses: [], text: [{ property: column, op, value }] };

  const expected = field.type === 'option' ? `one of ${(field.options ?? []).join(', ')}` : EXPECTED[field.type];
  const refused: PlainFilterError = {
    input: 'value',
    message: `Value: ${column} is ${kind(field.type)}; write ${expected}, not "${value}"`,
  };
  const text = literal(field.type, value);
  if (text === undefined) return refused;
  try {
    return { clauses: parseFilter(`${column} ${op} ${text}`, filterProperties(table)), text: [] };
  } catch (err) {
    if (err instanceof AppError && err.status === 400) return refused;
    throw err;
  }
}
