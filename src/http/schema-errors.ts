/**
 * Schema violations in the words a person would use: where (`body.fields[0].type`), what is allowed
 * (`a whole number or null`, `one of "Ready", "On Hold"`), and what was sent (`got 1.5`). The
 * validator (ajv, with `verbose` so that each error carries its schema and the value) reports one
 * error per failed keyword, and for a union one per branch plus one for the union: the branches are
 * folded into the union's sentence.
 */

import { INTEGER_MAX, INTEGER_MIN } from '../core/bounds.js';

/** The part of an ajv error this module reads (fastify passes ajv's errors through). */
export interface SchemaError {
  readonly keyword: string;
  readonly instancePath: string;
  readonly schemaPath: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly message?: string;
  /** With ajv's `verbose`: the schema holding the failed keyword, and the value it was applied to. */
  readonly parentSchema?: unknown;
  readonly data?: unknown;
}

/** Where the failing value was: fastify's validation context. */
export type SchemaPart = 'body' | 'querystring' | 'params' | 'headers';

type Schema = Readonly<Record<string, unknown>>;

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

// ---- what is allowed -----------------------------------------------------------------------

/**
 * What a number may be. The bounds every integer has (what the databases hold, http/schemas.ts) go
 * without saying, except to a value beyond them (`storageBounds`).
 */
function range(schema: Schema, unit: string, storageBounds = false): string {
  const implicit = (key: string, value: number) =>
    !storageBounds && ((key === 'minimum' && value === INTEGER_MIN) || (key === 'maximum' && value === INTEGER_MAX));
  const bound = (key: string) => (typeof schema[key] === 'number' && !implicit(key, schema[key]) ? schema[key] : undefined);
  const [min, max, above, below] = [bound('minimum'), bound('maximum'), bound('exclusiveMinimum'), bound('exclusiveMaximum')];
  if (min !== undefined && max !== undefined) return `${unit} from ${min} to ${max}`;
  const lower = min !== undefined ? `at least ${min}` : above !== undefined ? `above ${above}` : undefined;
  const upper = max !== undefined ? `at most ${max}` : below !== undefined ? `below ${below}` : undefined;
  const parts = [lower, upper].filter((p): p is string => p !== undefined);
  if (parts.length === 0) return unit;
  if (parts.length === 1 && (min !== undefined || max !== undefined)) return `${unit} of ${parts[0]}`;
  return `${unit} ${parts.join(' and ')}`;
}

/** A count of things in words: singular and plural of the thing. */
interface Noun {
  readonly one: string;
  readonly many: string;
}

const CHARACTERS: Noun = { one: 'character', many: 'characters' };
const ITEMS: Noun = { one: 'item', many: 'items' };

const counted = (n: unknown, noun: Noun): string => `${String(n)} ${n === 1 ? noun.one : noun.many}`;

function sized(schema: Schema, minKey: string, maxKey: string, noun: Noun): string | undefined {
  const min = typeof schema[minKey] === 'number' ? schema[minKey] : undefined;
  const max = typeof schema[maxKey] === 'number' ? schema[maxKey] : undefined;
  if (min !== undefined && max !== undefined) return min === max ? `exactly ${counted(min, noun)}` : `${min} to ${counted(max, noun)}`;
  if (min !== undefined) return `at least ${counted(min, noun)}`;
  if (max !== undefined) return `at most ${counted(max, noun)}`;
  return undefined;
}

const FORMATS: Readonly<Record<string, string>> = {
  'date-time': 'an ISO 8601 date and time such as 2026-01-31T12:00:00Z',
  date: 'a date such as 2026-01-31',
  uuid: 'a GUID',
  uri: 'an absolute URL',
  email: 'an email address',
};

function describeString(schema: Schema): string {
  const format = typeof schema.format === 'string' ? schema.format : undefined;
  if (format !== undefined) return FORMATS[format] ?? `a string in ${format} format`;
  const length = sized(schema, 'minLength', 'maxLength', CHARACTERS);
  const pattern = typeof schema.pattern === 'string' ? ` matching ${schema.pattern}` : '';
  return `a string${length === undefined ? '' : ` of ${length}`}${pattern}`;
}

/** "a string" → { one: "string", many: "strings" }, for "an array of strings". */
function nounOf(form: string): Noun {
  const m = /^an? (string|whole number|number|object|array|GUID)\b(.*)$/.exec(form);
  if (m) return { one: `${m[1]}${m[2]}`, many: `${m[1]}s${m[2]}` };
  return { one: `value that is ${form}`, many: `values that are ${form}` };
}

function describeType(type: string, schema: Schema): string {
  switch (type) {
    case 'integer':
      return range(schema, 'a whole number');
    case 'number':
      return range(schema, 'a number');
    case 'string':
      return describeString(schema);
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'null';
    case 'array': {
      const items = isSchema(schema.items) ? join(forms(schema.items)) : undefined;
      const noun = items === undefined || items === 'any value' ? undefined : nounOf(items);
      const count = sized(schema, 'minItems', 'maxItems', noun ?? ITEMS);
      if (count !== undefined) return `an array of ${count}`;
      return noun === undefined ? 'an array' : `an array of ${noun.many}`;
    }
    case 'object': {
      const pattern = isSchema(schema.patternProperties) ? Object.values(schema.patternProperties)[0] : undefined;
      const values = isSchema(schema.additionalProperties) ? schema.additionalProperties : pattern;
      if (isSchema(values) && !isSchema(schema.properties)) return `an object whose values are ${nounOf(join(forms(values))).many}`;
      const tag = isSchema(schema.properties)
        ? Object.entries(schema.properties).find(([, p]) => isSchema(p) && p.const !== undefined)
        : undefined;
      return tag !== undefined && isSchema(tag[1]) ? `an object with ${tag[0]} ${JSON.stringify(tag[1].const)}` : 'a JSON object';
    }
    default:
      return `a value of type ${type}`;
  }
}

/** Each form a schema allows: a literal (`"Ready"`) or a phrase (`a whole number from 1 to 10`). */
function forms(schema: Schema): string[] {
  if (schema.const !== undefined) return [JSON.stringify(schema.const)];
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v));
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (union !== undefined) return union.filter(isSchema).flatMap(forms);
  const types = Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === 'string' ? [schema.type] : [];
  if (types.length === 0) return ['any value'];
  return types.flatMap((t) => (t === 'boolean' ? ['true', 'false'] : [describeType(t, schema)]));
}

const isLiteral = (form: string): boolean => /^["\d-]|^(true|false)$/.test(form);

function listed(items: readonly string[], word: 'or' | 'and'): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} ${word} ${items[items.length - 1]}`;
}

/** Forms joined as a sentence: `a whole number or null`, `true or false`; three literals or more as `one of "a", "b", "c"`. */
function join(all: readonly string[]): string {
  const unique = [...new Set(all)];
  const literals = unique.filter(isLiteral);
  const others = unique.filter((f) => !isLiteral(f));
  if (literals.length < 3) return listed([...literals, ...others], 'or');
  return others.length === 0 ? `one of ${literals.join(', ')}` : `one of ${literals.join(', ')}, or ${listed(others, 'or')}`;
}

/** What a schema allows, as a phrase: `a whole number or null`. */
export function describeAllowed(schema: unknown): string {
  return isSchema(schema) ? join(forms(schema)) : 'a valid value';
}

// ---- what was sent -------------------------------------------------------------------------

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' && Number.isInteger(value) ? 'integer' : typeof value;
}

/** The JSON types a schema allows (`integer` counts as a number too). */
function allowedTypes(schema: Schema): Set<string> {
  const types = new Set<string>();
  const visit = (s: Schema) => {
    if (s.const !== undefined) types.add(jsonType(s.const));
    if (Array.isArray(s.enum)) for (const v of s.enum) types.add(jsonType(v));
    const listedTypes: unknown[] = Array.isArray(s.type) ? s.type : [s.type];
    for (const t of listedTypes) if (typeof t === 'string') types.add(t);
    const anyOf: unknown[] = Array.isArray(s.anyOf) ? s.anyOf : [];
    const oneOf: unknown[] = Array.isArray(s.oneOf) ? s.oneOf : [];
    const union = [...anyOf, ...oneOf];
    for (const branch of union) if (isSchema(branch)) visit(branch);
  };
  visit(schema);
  if (types.has('number')) types.add('integer');
  return types;
}

/** Say which type was sent (`the string "10"`) when the schema does not allow that type at all. */
const wrongType = (schema: Schema, value: unknown): boolean => !allowedTypes(schema).has(jsonType(value));

const shortText = (text: string): string => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);

export function describeValue(value: unknown, typed = false): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return typed ? `the string ${shortText(value)}` : shortText(value);
  if (Array.isArray(value))
    return value.length === 0 ? 'an empty array' : `an array of ${value.length} item${value.length === 1 ? '' : 's'}`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

// ---- where ---------------------------------------------------------------------------------

const IDENTIFIER = /^[A-Za-z_$@][A-Za-z0-9_$@.-]*$/;

function segments(instancePath: string): string[] {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** `body.fields[0].type`, `query parameter $top`, `path parameter key`. */
function place(part: SchemaPart, path: readonly string[]): string {
  const [first, ...rest] = path;
  const tail = (items: readonly string[]) =>
    items.map((s) => (/^\d+$/.test(s) ? `[${s}]` : IDENTIFIER.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`)).join('');
  switch (part) {
    case 'body':
      return `body${tail(path)}`;
    case 'querystring':
      return first === undefined ? 'the query' : `query parameter ${first}${tail(rest)}`;
    case 'params':
      return first === undefined ? 'the path' : `path parameter ${first}${tail(rest)}`;
    case 'headers':
      return first === undefined ? 'the headers' : `header ${first}${tail(rest)}`;
    default: {
      const never: never = part;
      return String(never);
    }
  }
}

// ---- sentences -----------------------------------------------------------------------------

function allowedProperties(schema: Schema, part: SchemaPart): string {
  const names = isSchema(schema.properties) ? Object.keys(schema.properties) : [];
  const annotations = isSchema(schema.patternProperties) && Object.keys(schema.patternProperties).some((p) => p.includes('@odata'));
  const extra = annotations ? ' (and @odata annotations)' : '';
  if (names.length === 0) return part === 'querystring' ? 'it takes no parameters' : `it takes no properties${extra}`;
  return `allowed: ${names.join(', ')}${extra}`;
}

function sentence(error: SchemaError, part: SchemaPart, bodyAbsent: boolean): string {
  const path = segments(error.instancePath);
  const at = place(part, path);
  const schema = isSchema(error.parentSchema) ? error.parentSchema : {};
  const value = error.data;
  const allowed = () => describeAllowed(schema);
  switch (error.keyword) {
    case 'required': {
      const missing = String(error.params.missingProperty);
      const property = isSchema(schema.properties) ? schema.properties[missing] : undefined;
      const what = property === undefined ? '' : `: ${describeAllowed(property)}`;
      return `${place(part, [...path, missing])} is required${what}`;
    }
    case 'additionalProperties': {
      const unknown = String(error.params.additionalProperty);
      const noun = part === 'querystring' && path.length === 0 ? 'parameter' : 'property';
      return `${at} has an unknown ${noun} ${JSON.stringify(unknown)}; ${allowedProperties(schema, part)}`;
    }
    case 'type':
      if (part === 'body' && path.length === 0 && bodyAbsent) return emptyBody(schema);
      return `${at} must be ${allowed()}, got ${describeValue(value, true)}`;
    case 'minLength':
    case 'maxLength':
      return `${at} must be ${allowed()}, got ${typeof value === 'string' ? counted([...value].length, CHARACTERS) : describeValue(value)}`;
    case 'minItems':
    case 'maxItems':
      return `${at} must be ${allowed()}, got ${describeValue(value)}`;
    case 'pattern':
      return `${at} must match ${String(error.params.pattern)}, got ${describeValue(value)}`;
    case 'const':
    case 'enum':
    case 'anyOf':
    case 'oneOf':
      return `${at} must be ${allowed()}, got ${describeValue(value, wrongType(schema, value))}`;
    case 'minimum':
    case 'maximum':
      if (error.params.limit === INTEGER_MIN || error.params.limit === INTEGER_MAX)
        return `${at} must be ${range(schema, 'a whole number', true)}, got ${describeValue(value)}`;
      return `${at} must be ${allowed()}, got ${describeValue(value)}`;
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
    case 'format':
      return `${at} must be ${allowed()}, got ${describeValue(value)}`;
    default:
      return `${at} ${error.message ?? 'is not valid'}`;
  }
}

function emptyBody(schema: Schema): string {
  const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
  const properties = isSchema(schema.properties) ? Object.keys(schema.properties) : [];
  const which = required.length > 0 ? listed(required, 'and') : `one or more of ${properties.join(', ')}`;
  return `The request body is empty; this endpoint needs a JSON object with ${which}`;
}

/** One error per failing place: a union's branch errors are folded into the union's own. */
function withoutBranchErrors(errors: readonly SchemaError[]): SchemaError[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  return errors.filter((e) => !unions.some((u) => u !== e && e.schemaPath.startsWith(`${u.schemaPath}/`)));
}

/**
 * The message for a request that breaks its route's schema. `bodyAbsent`: the request had no body
 * (fastify validates a missing body as null, so the value alone cannot tell).
 */
export function describeSchemaErrors(errors: readonly SchemaError[], part: SchemaPart, bodyAbsent = false): string {
  const sentences = [...new Set(withoutBranchErrors(errors).map((e) => sentence(e, part, bodyAbsent)))];
  return sentences.length === 0 ? `The request ${part} is not valid` : sentences.join('; ');
}
