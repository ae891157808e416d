/**
 * The rules of integrations, their fields and mappings, as pure functions over what a caller sent
 * (typebox schemas shared by the HTTP API and `ifw apply`). Each returns the normalized model, with
 * defaults filled in, or throws a 400 whose message starts with the offending property's path.
 */
import { Type, type Static } from 'typebox';
import { AppError } from '../core/errors.js';
import { parsePath } from '../json-path/paths.js';
import type { TargetTable } from '../tables/model.js';
import { invalidAt, pathOf } from '../core/validation.js';
import {
  COLUMN_TYPES,
  INTEGRATION_TYPES,
  ON_RECORD_ERROR,
  WRITE_MODES,
  DEFAULT_INTEGRATION_TYPE,
  type ColumnType,
  type Integration,
  type IntegrationField,
  type IntegrationMapping,
  type IntegrationType,
  type OnRecordError,
  type WriteMode,
} from './model.js';
import { Integer } from '../http/schemas.js';

// No JSON-schema `default`s here: the HTTP validator would fill them into PATCH bodies and reset
// settings the caller did not send. Defaults are applied by the validate functions below.
export const IntegrationProperties = {
  sortingOrder: Integer({ description: 'Identifies the integration; bulk import callers send it as integrationSortingOrder' }),
  name: Type.String(),
  type: Type.Optional(
    Type.String({
      description: `One of ${INTEGRATION_TYPES.join(', ')}; default ${DEFAULT_INTEGRATION_TYPE}. A label saying where the records come from (a REST API or a file-based payload); it changes nothing at run time: any integration can receive bulk import requests and be fed by a REST API endpoint`,
    }),
  ),
  targetTable: Type.String(),
  recordsPath: Type.Optional(Type.String({ description: 'Where the record array sits in a payload; blank: the root is the array' })),
  acceptBulkImportRequests: Type.Optional(
    Type.Boolean({ description: 'Default false. Refused while the integration has no mappings (every request would fail)' }),
  ),
  maxPayloadSizeKb: Type.Optional(Type.Union([Integer(), Type.Null()])),
  writeMode: Type.Optional(Type.String({ description: `One of ${WRITE_MODES.join(', ')}; default insert` })),
  onRecordError: Type.Optional(Type.String({ description: `One of ${ON_RECORD_ERROR.join(', ')}; default fail` })),
};

export const FieldProperties = {
  fieldNo: Integer({ description: 'Processing order; the key within the integration' }),
  title: Type.String(),
  sourcePath: Type.Optional(Type.String({ description: 'Dot path (address.city) or JSONPath ($.address.city); standard columns' })),
  columnType: Type.Optional(Type.String({ description: `One of ${COLUMN_TYPES.join(', ')}; default standard` })),
  constantValue: Type.Optional(Type.Union([Type.String(), Type.Null()])),
};

export const MappingProperties = {
  fieldNo: Integer({ description: 'The integration field whose value is mapped' }),
  targetField: Type.String({ description: "A field of the integration's target table" }),
  required: Type.Optional(Type.Boolean({ description: 'Default false' })),
};

const closed = { additionalProperties: false } as const;
const IntegrationSchema = Type.Object(IntegrationProperties, closed);
export const IntegrationPatchSchema = Type.Object(Type.Partial(IntegrationSchema).properties, closed);
export const FieldSchema = Type.Object(FieldProperties, closed);
export const FieldPatchSchema = Type.Object(Type.Partial(FieldSchema).properties, closed);
export const MappingSchema = Type.Object(MappingProperties, closed);
export const MappingPatchSchema = Type.Object(Type.Partial(MappingSchema).properties, closed);

/**
 * An integration with its fields and mappings in one body, as `ifw apply` declares it and as POST and
 * PATCH `integrations` take it. A list, even an empty one, is the whole set; an absent one is left alone.
 */
export const IntegrationSetsProperties = {
  fields: Type.Optional(
    Type.Array(FieldSchema, {
      description: "The integration's fields: the list replaces the ones it had; the mappings of fields left out go with them",
    }),
  ),
  mappings: Type.Optional(
    Type.Array(MappingSchema, {
      description:
        "The integration's mappings: the list replaces the ones it had; each names a field of the integration (as sent in fields, or as stored)",
    }),
  ),
};

export type IntegrationInput = Static<typeof IntegrationSchema>;
export type IntegrationPatch = Static<typeof IntegrationPatchSchema>;
export type FieldInput = Static<typeof FieldSchema>;
export type FieldPatch = Static<typeof FieldPatchSchema>;
export type MappingInput = Static<typeof MappingSchema>;
export type MappingPatch = Static<typeof MappingPatchSchema>;

/** Storage columns are 32-bit integers on PostgreSQL. */
const MAX_KEY = 2_147_483_647;
const MAX_PAYLOAD_KB = 1_048_576;
const PATH_LIMIT = 250;

function oneOf<T extends string>(values: readonly T[], value: string | undefined, fallback: T, at: string): T {
  if (value === undefined) return fallback;
  if (!(values as readonly string[]).includes(value)) throw invalidAt(at, `"${value}" is not allowed; use one of ${values.join(', ')}`);
  return value as T;
}

function positiveKey(value: number, at: string): number {
  if (!Number.isInteger(value) || value < 1 || value > MAX_KEY)
    throw invalidAt(at, `must be a whole number from 1 to ${MAX_KEY}, got ${value}`);
  return value;
}

function text(value: string, limit: number, at: string): string {
  if (value.trim() === '') throw invalidAt(at, 'must not be empty');
  if (value.length > limit) throw invalidAt(at, `must be at most ${limit} characters, got ${value.length}`);
  return value;
}

/** A records or source path, checked by the same parser the importer uses. */
function recordPath(value: string, at: string): string {
  if (value.length > PATH_LIMIT) throw invalidAt(at, `must be at most ${PATH_LIMIT} characters, got ${value.length}`);
  try {
    parsePath(value);
  } catch (err) {
    if (err instanceof AppError) throw invalidAt(at, err.message);
    throw err;
  }
  return value;
}

/** `table` is the declared target table named by the input, or undefined when there is none. */
export function validateIntegration(input: IntegrationInput, table: TargetTable | undefined, at = ''): Integration {
  const sortingOrder = positiveKey(input.sortingOrder, pathOf(at, 'sortingOrder'));
  const name = text(input.name, 100, pathOf(at, 'name'));
  const type: IntegrationType = oneOf(INTEGRATION_TYPES, input.type, DEFAULT_INTEGRATION_TYPE, pathOf(at, 'type'));
  if (table === undefined)
    throw invalidAt(pathOf(at, 'targetTable'), `no target table "${input.targetTable}" is declared; declare it first`);
  const maxPayloadSizeKb = input.maxPayloadSizeKb ?? null;
  if (maxPayloadSizeKb !== null && (maxPayloadSizeKb < 1 || maxPayloadSizeKb > MAX_PAYLOAD_KB)) {
    throw invalidAt(
      pathOf(at, 'maxPayloadSizeKb'),
      `must be between 1 and ${MAX_PAYLOAD_KB} (or null for no limit), got ${maxPayloadSizeKb}`,
    );
  }
  return {
    sortingOrder,
    name,
    type,
    targetTable: table.name,
    recordsPath: recordPath(input.recordsPath ?? '', pathOf(at, 'recordsPath')),
    acceptBulkImportRequests: input.acceptBulkImportRequests ?? false,
    maxPayloadSizeKb,
    writeMode: oneOf<WriteMode>(WRITE_MODES, input.writeMode, 'insert', pathOf(at, 'writeMode')),
    onRecordError: oneOf<OnRecordError>(ON_RECORD_ERROR, input.onRecordError, 'fail', pathOf(at, 'onRecordError')),
  };
}

/** A constant column ignores sourcePath (stored empty); a standard one ignores constantValue (stored null). */
export function validateField(input: FieldInput, integrationSortingOrder: number, at = ''): IntegrationField {
  const fieldNo = positiveKey(input.fieldNo, pathOf(at, 'fieldNo'));
  const title = text(input.title, 250, pathOf(at, 'title'));
  const columnType: ColumnType = oneOf(COLUMN_TYPES, input.columnType, 'standard', pathOf(at, 'columnType'));
  switch (columnType) {
    case 'standard': {
      const sourcePath = input.sourcePath ?? '';
      if (sourcePath === '')
        throw invalidAt(
          pathOf(at, 'sourcePath'),
          'a standard column says where its value sits in a record (e.g. "name" or "address.city")',
        );
      return {
        integrationSortingOrder,
        fieldNo,
        title,
        sourcePath: recordPath(sourcePath, pathOf(at, 'sourcePath')),
        columnType,
        constantValue: null,
      };
    }
    case 'constant': {
      const constantValue = input.constantValue ?? null;
      if (constantValue === null) throw invalidAt(pathOf(at, 'constantValue'), 'a constant column needs the value every record gets');
      if (constantValue.length > 2048)
        throw invalidAt(pathOf(at, 'constantValue'), `must be at most 2048 characters, got ${constantValue.length}`);
      return { integrationSortingOrder, fieldNo, title, sourcePath: '', columnType, constantValue };
    }
    default: {
      const never: never = columnType;
      throw new Error(`unknown column type ${String(never)}`);
    }
  }
}

export interface MappingContext {
  readonly integrationSortingOrder: number;
  /** Field numbers the integration has. */
  readonly fieldNos: ReadonlySet<number>;
  readonly table: TargetTable;
}

export function validateMapping(input: MappingInput, context: MappingContext, at = ''): IntegrationMapping {
  const fieldNo = positiveKey(input.fieldNo, pathOf(at, 'fieldNo'));
  if (!context.fieldNos.has(fieldNo)) {
    throw invalidAt(
      pathOf(at, 'fieldNo'),
      `integration ${context.integrationSortingOrder} has no field ${fieldNo}; create the field first`,
    );
  }
  checkTargetField(input.targetField, context.table, pathOf(at, 'targetField'));
  return {
    integrationSortingOrder: context.integrationSortingOrder,
    fieldNo,
    targetField: input.targetField,
    required: input.required ?? false,
  };
}

function checkTargetField(targetField: string, table: TargetTable, at: string): void {
  if (table.fields.some((f) => f.name === targetField)) return;
  const sameButCase = table.fields.find((f) => f.name.toLowerCase() === targetField.toLowerCase());
  const hint =
    sameButCase !== undefined ? `did you mean "${sameButCase.name}"?` : `its fields are ${table.fields.map((f) => f.name).join(', ')}`;
  throw invalidAt(at, `table "${table.name}" has no field "${targetField}"; ${hint}`);
}

/** A whole list of fields (as `ifw apply` declares them): each valid, numbers unique. */
export function validateFieldList(inputs: readonly FieldInput[], integrationSortingOrder: number, at = ''): IntegrationField[] {
  const fields = inputs.map((f, i) => validateField(f, integrationSortingOrder, pathOf(at, i)));
  fields.forEach((f, i) => {
    const first = fields.findIndex((g) => g.fieldNo === f.fieldNo);
    if (first !== i) throw invalidAt(pathOf(pathOf(at, i), 'fieldNo'), `field ${f.fieldNo} is listed twice (also [${first}])`);
  });
  return fields;
}

/** A whole list of mappings: each valid, one per field, each target field used once. */
export function validateMappingList(inputs: readonly MappingInput[], context: MappingContext, at = ''): IntegrationMapping[] {
  const mappings = inputs.map((m, i) => validateMapping(m, context, pathOf(at, i)));
  mappings.forEach((m, i) => {
    const sameField = mappings.findIndex((n) => n.fieldNo === m.fieldNo);
    if (sameField !== i) throw invalidAt(pathOf(pathOf(at, i), 'fieldNo'), `field ${m.fieldNo} is mapped twice (also [${sameField}])`);
    const sameTarget = mappings.findIndex((n) => n.targetField === m.targetField);
    if (sameTarget !== i)
      throw invalidAt(
        pathOf(pathOf(at, i), 'targetField'),
        `"${m.targetField}" already receives field ${mappings[sameTarget]!.fieldNo} (also [${sameTarget}])`,
      );
  });
  return mappings;
}
