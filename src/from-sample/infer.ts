/**
 * A target table and an integration proposed from a sample payload, as pure functions: where the
 * records are (the largest array of objects), one field per value a record holds (nested objects
 * flattened to dotted source paths, lists left out), each field's type the narrowest one whose
 * converter (mapping/convert.ts, what an import runs) takes every sample value, names made valid for
 * the table rules (tables/validate.ts), and a primary key when one is evident.
 *
 * Types, narrowest first: boolean (JSON true/false), integer (whole JSON numbers within
 * core/bounds.ts), decimal (any JSON numbers the decimal field holds exactly), date, datetime and
 * guid (strings all of that form), else text long enough for the longest value with headroom. A
 * field that is absent, null or blank in some record is not required.
 */
import { INTEGER_MAX, INTEGER_MIN } from '../core/bounds.js';
import { NumberText } from '../core/exact-json.js';
import { compileConverter, Violation } from '../mapping/convert.js';
import type { FieldType } from '../tables/model.js';
import { formatPath } from './paths.js';

export interface ProposedField {
  /** Whether the field is created and mapped; the administrator may leave one out. */
  readonly include: boolean;
  readonly name: string;
  readonly type: FieldType;
  /** text and code only. */
  readonly maxLength?: number;
  readonly required: boolean;
  readonly primaryKey: boolean;
  /** Where the value sits in a record, as an integration field's source path. */
  readonly sourcePath: string;
  /** The first sample value, as text, to help the administrator. */
  readonly example: string;
}

export interface Proposal {
  /** Where the records are in the payload; blank: the payload itself is the array. */
  readonly recordsPath: string;
  readonly recordCount: number;
  readonly tableName: string;
  readonly fields: readonly ProposedField[];
  /** What the proposal left out or assumed, for the administrator to read. */
  readonly notes: readonly string[];
}

export interface ProposalOptions {
  /** Names of the target tables that exist: the proposed name is another one. */
  readonly takenTables?: ReadonlySet<string>;
  /** A name for the table when the records path gives none (an endpoint's code, say). */
  readonly hint?: string;
}

/** Why no proposal can be made from the sample. */
export interface NoProposal {
  readonly error: string;
}

const TABLE_NAME_LIMIT = 63;
const FIELD_NAME_LIMIT = 63;
const TEXT_LENGTHS = [20, 50, 100, 250, 500, 1000, 2048] as const;
const MAX_TEXT_LENGTH = 2048;
const SEARCH_DEPTH = 6;
const EXAMPLE_LENGTH = 60;
/** Records-path names that say nothing about what the records are. */
const GENERIC = new Set([
  'data',
  'value',
  'values',
  'items',
  'results',
  'result',
  'records',
  'rows',
  'list',
  'content',
  'entries',
  'elements',
  'hits',
  'response',
  'payload',
  'objects',
]);
const KEY_TYPES: readonly FieldType[] = ['text', 'code', 'integer', 'date', 'datetime', 'guid'];

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof NumberText);
/** No value for every converter: missing, null or the empty string. */
const isAbsent = (v: Json): boolean => v === undefined || v === null || v === '';
/** A blank string is no value to text, but a wrong one to numbers and dates: it makes no field required, and no such type. */
const isBlank = (v: Json): boolean => typeof v === 'string' && v.trim() === '';

// ---- records ---------------------------------------------------------------------------------

interface Found {
  readonly segments: readonly string[];
  readonly records: readonly Record<string, Json>[];
  /** Items of the array that are not objects. */
  readonly others: number;
}

/** The array of objects with the most objects, the shallowest first on a tie; undefined when there is none. */
function findRecords(root: Json): Found | undefined {
  let best: Found | undefined;
  const visit = (value: Json, segments: readonly string[]) => {
    if (Array.isArray(value)) {
      const records = value.filter(isObject);
      if (records.length > 0 && (best === undefined || records.length > best.records.length))
        best = { segments, records, others: value.length - records.length };
      return;
    }
    if (!isObject(value) || segments.length >= SEARCH_DEPTH) return;
    for (const [key, item] of Object.entries(value)) visit(item, [...segments, key]);
  };
  visit(root, []);
  return best;
}

/** A bulk import request's body pasted whole: its `payload` is the JSON text of the records. */
function unwrapRequestBody(root: Json): { root: Json; note?: string } {
  if (!isObject(root) || typeof root.payload !== 'string') return { root };
  try {
    return { root: JSON.parse(root.payload) as Json, note: 'The sample is a bulk import request; its "payload" text was read.' };
  } catch {
    return { root };
  }
}

// ---- values per source path ------------------------------------------------------------------

interface Column {
  readonly segments: readonly string[];
  /** Values the records hold there (not missing, null or empty), in record order. */
  readonly values: Json[];
  /** Records in which it has a value that is not blank. */
  present: number;
  hasList: boolean;
}

function columnsOf(records: readonly Record<string, Json>[]): { columns: Column[]; nested: Set<string> } {
  const columns = new Map<string, Column>();
  const nested = new Set<string>();
  const lists = new Set<string>();
  const key = (segments: readonly string[]) => JSON.stringify(segments);
  const visit = (record: Record<string, Json>, prefix: readonly string[]) => {
    for (const [name, value] of Object.entries(record)) {
      const segments = [...prefix, name];
      if (isObject(value) && prefix.length < SEARCH_DEPTH) {
        nested.add(key(segments));
        visit(value, segments);
        continue;
      }
      let column = columns.get(key(segments));
      if (column === undefined) {
        column = { segments, values: [], present: 0, hasList: false };
        columns.set(key(segments), column);
      }
      if (Array.isArray(value)) lists.add(key(segments));
      if (Array.isArray(value) || isObject(value)) column.hasList = true;
      else if (!isAbsent(value)) {
        column.values.push(value);
        if (!isBlank(value)) column.present++;
      }
    }
  };
  for (const record of records) visit(record, []);
  // A key that is an object in some records and a value in others: its object's fields are kept; where
  // it is a list, a path through it would read the list's items, so those fields count as lists too.
  const kept = [...columns.entries()].filter(([k]) => !nested.has(k)).map(([, c]) => c);
  for (const c of kept) if (c.segments.some((_, i) => i > 0 && lists.has(key(c.segments.slice(0, i))))) c.hasList = true;
  return { columns: kept, nested };
}

const accepts = (type: FieldType, values: readonly Json[]): boolean => {
  const convert = compileConverter({ name: 'sample', type, ...(type === 'text' ? { maxLength: MAX_TEXT_LENGTH } : {}) });
  return values.every((v) => !(convert(v) instanceof Violation));
};

const textOf = (v: Json): string => (v instanceof NumberText ? v.text : String(v));
const codePoints = (s: string): number => [...s].length;

/** The narrowest type whose converter takes every value; text when none of the others does. */
export function inferType(values: readonly Json[]): FieldType {
  if (values.length === 0) return 'text';
  if (values.every((v) => typeof v === 'boolean')) return 'boolean';
  if (values.every((v) => typeof v === 'number' || v instanceof NumberText)) {
    if (values.every((v) => typeof v === 'number' && Number.isInteger(v) && v >= INTEGER_MIN && v <= INTEGER_MAX)) return 'integer';
    if (accepts('decimal', values)) return 'decimal';
    return 'text';
  }
  if (values.every((v) => typeof v === 'string')) {
    for (const type of ['date', 'datetime', 'guid'] as const) if (accepts(type, values)) return type;
  }
  return 'text';
}

/** The smallest of the usual lengths that holds the longest value and half as much again. */
export function textLength(values: readonly Json[]): number {
  const longest = values.reduce<number>((max, v) => Math.max(max, codePoints(textOf(v))), 0);
  const wanted = Math.ceil(longest * 1.5);
  return TEXT_LENGTHS.find((n) => n >= wanted) ?? MAX_TEXT_LENGTH;
}

// ---- names -----------------------------------------------------------------------------------

function unique(name: string, taken: ReadonlySet<string>, limit: number, fold: (s: string) => string): string {
  if (!taken.has(fold(name))) return name;
  for (let n = 2; ; n++) {
    const suffix = `_${n}`;
    const candidate = `${name.slice(0, limit - suffix.length)}${suffix}`;
    if (!taken.has(fold(candidate))) return candidate;
  }
}

/** Letters, digits and "_", starting with a letter, at most `limit` characters. */
function identifier(raw: string, limit: number, fallback: string): string {
  const words = raw
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  const named = words === '' ? fallback : /^[A-Za-z]/.test(words) ? words : `${fallback}_${words}`;
  return named.slice(0, limit).replace(/_+$/, '');
}

/** A field name from a source path's names: `address.city` → `address_city`; camelCase is kept. */
export function fieldNameOf(segments: readonly string[]): string {
  const raw = segments.join('_');
  const words = raw.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  if (words !== '' && /^[A-Za-z]/.test(words)) return words.slice(0, FIELD_NAME_LIMIT).replace(/_+$/, '');
  return identifier(raw, FIELD_NAME_LIMIT, 'field');
}

/** A table name: lowercase words joined by "_", not one of the service's or the database's own prefixes. */
export function tableNameOf(raw: string, taken: ReadonlySet<string> = new Set()): string {
  let name = identifier(raw, TABLE_NAME_LIMIT, 'table').toLowerCase();
  if (name.startsWith('ifw_') || name.startsWith('sqlite_')) name = `t_${name}`.slice(0, TABLE_NAME_LIMIT);
  return unique(name, taken, TABLE_NAME_LIMIT, (s) => s);
}

// ---- the proposal ----------------------------------------------------------------------------

function primaryKeyOf(fields: readonly ProposedField[], columns: readonly Column[], table: string, records: number): number | undefined {
  const fold = (s: string) => s.toLowerCase().replace(/[_-]/g, '');
  const singular = table.endsWith('s') ? table.slice(0, -1) : table;
  const wanted = ['id', `${fold(table)}id`, `${fold(singular)}id`, 'code'];
  for (const name of wanted) {
    const i = fields.findIndex((f, k) => columns[k]!.segments.length === 1 && fold(columns[k]!.segments[0]!) === name);
    if (i < 0) continue;
    const field = fields[i]!;
    const values = columns[i]!.values.map(textOf);
    if (KEY_TYPES.includes(field.type) && columns[i]!.present === records && new Set(values).size === values.length) return i;
  }
  return undefined;
}

/** The proposal for a parsed sample, or why there is none. */
export function proposeFromSample(sample: Json, options: ProposalOptions = {}): Proposal | NoProposal {
  const notes: string[] = [];
  const { root, note } = unwrapRequestBody(sample);
  if (note !== undefined) notes.push(note);
  const found = findRecords(root);
  if (found === undefined) return { error: 'The sample holds no list of records (an array of JSON objects), at its root or inside it.' };
  const { records, segments } = found;
  const recordsPath = formatPath(segments);
  if (found.others > 0) notes.push(`${found.others} item(s) of the list are not objects and were not read.`);

  const last = [...segments].reverse().find((s) => !/^\d+$/.test(s) && !GENERIC.has(s.toLowerCase()));
  const tableName = tableNameOf(last ?? options.hint ?? 'imported_records', options.takenTables);

  const { columns: all } = columnsOf(records);
  const lists = all.filter((c) => c.hasList && c.values.length === 0);
  if (lists.length > 0) notes.push(`Lists are not imported: ${lists.map((c) => formatPath(c.segments)).join(', ')}.`);
  const columns = all.filter((c) => !lists.includes(c));
  const mixed = columns.filter((c) => c.hasList);
  if (mixed.length > 0)
    notes.push(`Left out, since some records hold a list there: ${mixed.map((c) => formatPath(c.segments)).join(', ')}.`);
  const names = new Set<string>();
  const fields: ProposedField[] = columns.map((c) => {
    const name = unique(fieldNameOf(c.segments), names, FIELD_NAME_LIMIT, (s) => s.toLowerCase());
    names.add(name.toLowerCase());
    const type = inferType(c.values);
    const longest = c.values.reduce<number>((max, v) => Math.max(max, codePoints(textOf(v))), 0);
    if (type === 'text' && longest > MAX_TEXT_LENGTH)
      notes.push(`Values of ${formatPath(c.segments)} are longer than ${MAX_TEXT_LENGTH} characters, the most a text field holds.`);
    const example = c.values.length === 0 ? '' : textOf(c.values[0]);
    return {
      // A value that is a list in some records would refuse those records: left out unless chosen.
      include: !c.hasList,
      name,
      type,
      ...(type === 'text' ? { maxLength: textLength(c.values) } : {}),
      required: c.present === records.length && !c.hasList,
      primaryKey: false,
      sourcePath: formatPath(c.segments),
      example: example.length > EXAMPLE_LENGTH ? `${example.slice(0, EXAMPLE_LENGTH - 1)}…` : example,
    };
  });
  const key = primaryKeyOf(fields, columns, tableName, records.length);
  if (key === undefined)
    notes.push('No primary key is evident (a field named id, <table>Id or code with a value in every record, each different): choose one.');
  return {
    recordsPath,
    recordCount: records.length,
    tableName,
    fields: fields.map((f, i) => (i === key ? { ...f, primaryKey: true, required: true } : f)),
    notes,
  };
}
