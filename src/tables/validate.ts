/**
 * The rules of a target table declaration, as pure functions: the shape a caller sends (a typebox
 * schema shared by the HTTP API and `ifw apply`), its validation into the normalized declaration that
 * is stored, and the comparison of a redeclaration with the stored one. Messages start with the path
 * of the offending property (`fields[2].type: …`); callers that nest the declaration pass `at`.
 */
import { Type, type Static } from 'typebox';
import { incompatibleAt, invalidAt, pathOf, sameJson } from '../core/validation.js';
import { FIELD_TYPES, fieldMaxLength, type FieldType, type TargetField, type TargetTable } from './model.js';
import { Integer } from '../http/schemas.js';

export const FieldRelationSchema = Type.Object({ table: Type.String(), field: Type.String() }, { additionalProperties: false });

const TargetFieldProperties = {
  name: Type.String(),
  type: Type.String({ description: `One of ${FIELD_TYPES.join(', ')}` }),
  maxLength: Type.Optional(Integer({ description: 'text and code only; default text 250, code 20' })),
  required: Type.Optional(Type.Boolean()),
  options: Type.Optional(Type.Array(Type.String(), { description: 'option only: the allowed values' })),
  relation: Type.Optional(FieldRelationSchema),
};
export const TargetFieldSchema = Type.Object(TargetFieldProperties, { additionalProperties: false });

export const TargetTableProperties = {
  name: Type.String({ description: 'Also the name of the SQL table' }),
  primaryKey: Type.Array(Type.String()),
  fields: Type.Array(TargetFieldSchema),
};
export const TargetTableSchema = Type.Object(TargetTableProperties, { additionalProperties: false });

export type TargetFieldInput = Static<typeof TargetFieldSchema>;
export type TargetTableInput = Static<typeof TargetTableSchema>;

// ---- validation ----------------------------------------------------------------------------

const TABLE_NAME = /^[a-z][a-z0-9_]{0,62}$/;
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
const MAX_LENGTH_LIMIT = 2048;
const OPTION_VALUE_LIMIT = 250;
/** Floating and two-valued types make poor keys (rounding, and at most two rows). */
const KEY_TYPES: readonly FieldType[] = ['text', 'code', 'integer', 'date', 'datetime', 'option', 'guid'];

const isFieldType = (type: string): type is FieldType => (FIELD_TYPES as readonly string[]).includes(type);

/** Related fields hold the same values: equal types, or text and code (both strings). */
function compatibleTypes(a: FieldType, b: FieldType): boolean {
  const strings: readonly FieldType[] = ['text', 'code'];
  return a === b || (strings.includes(a) && strings.includes(b));
}

function validateTableName(name: string, at: string): void {
  if (!TABLE_NAME.test(name)) {
    throw invalidAt(at, `"${name}" is not a valid table name: use 1 to 63 lowercase letters, digits and "_", starting with a letter`);
  }
  if (name.startsWith('ifw_') || name.startsWith('sqlite_')) {
    throw invalidAt(at, `"${name}" is reserved: names starting with "ifw_" or "sqlite_" belong to the service and the database`);
  }
}

/**
 * `related` holds the declared tables this one may relate to (by name); a relation to the table
 * itself is checked against the declaration being validated.
 */
export function validateTargetTable(input: TargetTableInput, related: ReadonlyMap<string, TargetTable>, at = ''): TargetTable {
  validateTableName(input.name, pathOf(at, 'name'));
  if (input.fields.length === 0) throw invalidAt(pathOf(at, 'fields'), 'declare at least one field');

  const seen = new Map<string, number>();
  input.fields.forEach((f, i) => {
    const where = pathOf(pathOf(at, 'fields'), i);
    if (!FIELD_NAME.test(f.name)) {
      throw invalidAt(
        pathOf(where, 'name'),
        `"${f.name}" is not a valid field name: use 1 to 63 letters, digits and "_", starting with a letter`,
      );
    }
    const earlier = seen.get(f.name.toLowerCase());
    if (earlier !== undefined) {
      throw invalidAt(
        pathOf(where, 'name'),
        `"${f.name}" is declared twice (also fields[${earlier}]); field names are compared without case`,
      );
    }
    seen.set(f.name.toLowerCase(), i);
  });

  const fields = input.fields.map((f, i) => validateField(f, input.primaryKey.includes(f.name), pathOf(pathOf(at, 'fields'), i)));
  const primaryKey = validatePrimaryKey(input.primaryKey, fields, at);
  const table: TargetTable = { name: input.name, fields, primaryKey };
  fields.forEach((f, i) => {
    if (f.relation !== undefined) validateRelation(table, f, related, pathOf(pathOf(pathOf(at, 'fields'), i), 'relation'));
  });
  return table;
}

function validatePrimaryKey(names: readonly string[], fields: readonly TargetField[], at: string): string[] {
  const where = pathOf(at, 'primaryKey');
  if (names.length === 0) throw invalidAt(where, 'name at least one field that identifies a row');
  const key: string[] = [];
  names.forEach((name, i) => {
    const field = fields.find((f) => f.name === name);
    if (field === undefined) throw invalidAt(pathOf(where, i), `"${name}" is not one of the declared fields`);
    if (key.includes(name)) throw invalidAt(pathOf(where, i), `"${name}" is listed twice`);
    if (!KEY_TYPES.includes(field.type)) {
      throw invalidAt(pathOf(where, i), `"${name}" is ${field.type}, which cannot be part of a primary key (use ${KEY_TYPES.join(', ')})`);
    }
    key.push(name);
  });
  return key;
}

/** The normalized field: explicit maxLength for text and code, required always present (true for key fields). */
function validateField(f: TargetFieldInput, inPrimaryKey: boolean, at: string): TargetField {
  if (!isFieldType(f.type)) throw invalidAt(pathOf(at, 'type'), `"${f.type}" is not a field type; use one of ${FIELD_TYPES.join(', ')}`);
  const type = f.type;
  if (f.maxLength !== undefined) {
    if (type !== 'text' && type !== 'code')
      throw invalidAt(pathOf(at, 'maxLength'), `only text and code fields have a maximum length, not ${type}`);
    if (f.maxLength < 1 || f.maxLength > MAX_LENGTH_LIMIT)
      throw invalidAt(pathOf(at, 'maxLength'), `must be between 1 and ${MAX_LENGTH_LIMIT}, got ${f.maxLength}`);
  }
  if (type === 'option') {
    if (f.options === undefined || f.options.length === 0)
      throw invalidAt(pathOf(at, 'options'), 'an option field lists its allowed values');
    f.options.forEach((value, i) => {
      if (value === '' || value.length > OPTION_VALUE_LIMIT)
        throw invalidAt(pathOf(pathOf(at, 'options'), i), `an option value has 1 to ${OPTION_VALUE_LIMIT} characters`);
      if (f.options!.indexOf(value) !== i) throw invalidAt(pathOf(pathOf(at, 'options'), i), `"${value}" is listed twice`);
    });
  } else if (f.options !== undefined) {
    throw invalidAt(pathOf(at, 'options'), `only option fields have option values, not ${type}`);
  }
  const maxLength = fieldMaxLength({ name: f.name, type, ...(f.maxLength !== undefined ? { maxLength: f.maxLength } : {}) });
  return {
    name: f.name,
    type,
    ...(maxLength !== undefined ? { maxLength } : {}),
    required: inPrimaryKey || f.required === true,
    ...(type === 'option' ? { options: [...f.options!] } : {}),
    ...(f.relation !== undefined ? { relation: { table: f.relation.table, field: f.relation.field } } : {}),
  };
}

function validateRelation(table: TargetTable, field: TargetField, related: ReadonlyMap<string, TargetTable>, at: string): void {
  const relation = field.relation!;
  const target = relation.table === table.name ? table : related.get(relation.table);
  if (target === undefined) throw invalidAt(pathOf(at, 'table'), `no target table "${relation.table}" is declared; declare it first`);
  if (target.primaryKey.length !== 1 || target.primaryKey[0] !== relation.field) {
    throw invalidAt(
      pathOf(at, 'field'),
      `"${relation.field}" is not the key of table "${target.name}": a relation names a table's single-field primary key (${target.name} has ${target.primaryKey.join(', ')})`,
    );
  }
  const key = target.fields.find((f) => f.name === relation.field)!;
  if (!compatibleTypes(field.type, key.type)) {
    throw invalidAt(
      at,
      `field "${field.name}" is ${field.type} but ${target.name}.${key.name} is ${key.type}; related fields need the same type`,
    );
  }
}

// ---- redeclaration -------------------------------------------------------------------------

export interface TableChangePlan {
  readonly unchanged: boolean;
  readonly addedFields: readonly TargetField[];
  /** Existing fields whose required flag flips; the SQL NOT NULL constraint has to follow. */
  readonly requiredChanges: readonly { readonly field: string; readonly required: boolean }[];
}

/**
 * What redeclaring `current` as `next` takes, or a 409 naming the field and why when it would lose or
 * reinterpret stored data. Facts about the rows (are there any, are there NULLs) are the service's.
 */
export function planTableChange(current: TargetTable, next: TargetTable, at = ''): TableChangePlan {
  if (!sameJson(current.primaryKey, next.primaryKey)) {
    throw incompatibleAt(
      pathOf(at, 'primaryKey'),
      `the primary key of table "${current.name}" is (${current.primaryKey.join(', ')}) and cannot change to (${next.primaryKey.join(', ')})`,
    );
  }
  const nextByName = new Map(next.fields.map((f, i) => [f.name.toLowerCase(), { field: f, index: i }]));
  for (const old of current.fields) {
    const found = nextByName.get(old.name.toLowerCase());
    if (found === undefined) {
      throw incompatibleAt(pathOf(at, 'fields'), `field "${old.name}" of table "${current.name}" is missing; fields cannot be removed`);
    }
    checkFieldChange(old, found.field, pathOf(pathOf(at, 'fields'), found.index));
  }
  const currentNames = new Set(current.fields.map((f) => f.name.toLowerCase()));
  const addedFields = next.fields.filter((f) => !currentNames.has(f.name.toLowerCase()));
  const requiredChanges = current.fields.flatMap((old) => {
    const now = nextByName.get(old.name.toLowerCase())!.field;
    return old.required === now.required ? [] : [{ field: old.name, required: now.required === true }];
  });
  return { unchanged: sameJson(current, next), addedFields, requiredChanges };
}

function checkFieldChange(old: TargetField, next: TargetField, at: string): void {
  // Each refusal names the property it concerns (`fields[2].type`), so that a form can show it under that input.
  const refuse = (property: string, reason: string) => incompatibleAt(pathOf(at, property), `field "${old.name}": ${reason}`);
  if (old.name !== next.name) throw refuse('name', `cannot be renamed to "${next.name}"`);
  if (old.type !== next.type) throw refuse('type', `its type cannot change from ${old.type} to ${next.type}`);
  const oldLength = fieldMaxLength(old);
  const nextLength = fieldMaxLength(next);
  if (oldLength !== undefined && nextLength !== undefined && nextLength < oldLength) {
    throw refuse('maxLength', `maxLength cannot shrink from ${oldLength} to ${nextLength}; stored values may be longer`);
  }
  const removed = (old.options ?? []).filter((o) => !(next.options ?? []).includes(o));
  if (removed.length > 0)
    throw refuse('options', `option values cannot be removed (${removed.map((o) => `"${o}"`).join(', ')}); stored rows may hold them`);
  if (!sameJson(old.relation ?? null, next.relation ?? null)) {
    const show = (r: TargetField['relation']) => (r === undefined ? 'none' : `${r.table}.${r.field}`);
    throw refuse('relation', `its relation cannot change from ${show(old.relation)} to ${show(next.relation)}`);
  }
}
