/**
 * The mapping engine: an integration plan compiled once per import into one column per mapping
 * (getter → converter → required rule → relation rule), and a record mapper that fills a reusable row
 * array. Pure: relation existence is asked through a callback, so the database stays in the importer.
 *
 * Absent values (see convert.ts) are written as NULL in every write mode, including updates: the
 * row's mapped columns always reflect the record. "Leave the old value when the record omits it" would
 * make the same payload mean different things depending on what is already stored.
 */
import { invalidRequest } from '../core/errors.js';
import type { IntegrationPlan } from '../integrations/model.js';
import { isFieldRequired, type FieldRelation, type TargetField, type TargetTable } from '../tables/model.js';
import { compileConverter, Violation, type SqlValue } from './convert.js';
import { describeValue } from './messages.js';
import { compilePath, parsePath, type PathGetter, type PathSegment } from '../json-path/paths.js';

export interface CompiledColumn {
  readonly field: TargetField;
  /** Reads the raw value from a record (a constant column returns its constant). */
  readonly get: PathGetter;
  /** `get` then convert, fused so that the per-record loop makes one call per column. */
  readonly read: (record: unknown) => SqlValue | Violation;
  readonly required: boolean;
  readonly relation: FieldRelation | null;
  /** The source path's segments (a constant column: null). */
  readonly path: readonly PathSegment[] | null;
}

export interface CompiledMapping {
  readonly table: TargetTable;
  /** One per mapping, in field-number order: the order of the row array and of the SQL column list. */
  readonly columns: readonly CompiledColumn[];
  /** Positions in `columns` of the primary key fields, in key order. */
  readonly keyColumns: readonly number[];
  readonly records: PathGetter;
}

/** One broken rule in a record, before it is numbered (see messages.ts `recordError`). */
export interface FieldViolation {
  readonly field: string | null;
  readonly value: string | null;
  readonly rule: string;
}

/** Does `value` exist as the key of the related table of `columns[column]`? */
export type RelationExists = (column: number, value: string | number) => boolean;

const REQUIRED = 'is required';
export const NOT_AN_OBJECT = 'is not a JSON object';

export const relationRule = (relation: FieldRelation): string => `does not exist in table "${relation.table}" (field "${relation.field}")`;

/** A related key that is not there: the violation of `column` (a column with a relation) for `value`. */
export const relationViolation = (column: CompiledColumn, value: string | number): FieldViolation => ({
  field: column.field.name,
  value: describeValue(value),
  rule: relationRule(column.relation!),
});

function compilePathFor(what: string, path: string): PathGetter {
  try {
    return compilePath(path);
  } catch (err) {
    throw invalidRequest(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Checks the plan against the declared tables and compiles it; throws AppError (invalidRequest) naming the first problem. */
export function compileMapping(plan: IntegrationPlan, tables: ReadonlyMap<string, TargetTable>): CompiledMapping {
  const { integration } = plan;
  const table = tables.get(integration.targetTable);
  if (table === undefined) throw invalidRequest(`target table "${integration.targetTable}" is not declared`);
  if (plan.mappings.length === 0) throw invalidRequest(`integration ${integration.sortingOrder} has no mappings`);
  if (integration.writeMode !== 'insert' && table.primaryKey.length === 0) {
    throw invalidRequest(`write mode "${integration.writeMode}" needs a primary key, and table "${table.name}" has none`);
  }

  const fieldsByNo = new Map(plan.fields.map((f) => [f.fieldNo, f]));
  const targetFields = new Map(table.fields.map((f) => [f.name, f]));
  const mappedBy = new Map<string, number>();
  const columns: CompiledColumn[] = [];

  for (const mapping of [...plan.mappings].sort((a, b) => a.fieldNo - b.fieldNo)) {
    const source = fieldsByNo.get(mapping.fieldNo);
    if (source === undefined) throw invalidRequest(`mapping of field ${mapping.fieldNo}: there is no integration field ${mapping.fieldNo}`);
    const what = `integration field ${source.fieldNo} "${source.title}"`;
    const field = targetFields.get(mapping.targetField);
    if (field === undefined) throw invalidRequest(`${what}: target field "${mapping.targetField}" does not exist in table "${table.name}"`);
    const earlier = mappedBy.get(field.name);
    if (earlier !== undefined) throw invalidRequest(`${what}: target field "${field.name}" is already mapped by field ${earlier}`);
    mappedBy.set(field.name, source.fieldNo);

    const relation = field.relation ?? null;
    if (relation !== null) {
      const related = tables.get(relation.table);
      if (related === undefined || !related.fields.some((f) => f.name === relation.field)) {
        throw invalidRequest(
          `field "${field.name}" relates to field "${relation.field}" of table "${relation.table}", which is not declared`,
        );
      }
    }

    const required = mapping.required || isFieldRequired(table, field);
    const convert = compileConverter(field);
    if (source.columnType === 'constant') {
      const constant = convert(source.constantValue);
      if (constant instanceof Violation) {
        throw invalidRequest(`${what}: constant value ${describeValue(source.constantValue)} for field "${field.name}" ${constant.rule}`);
      }
      if (constant === null && required)
        throw invalidRequest(`${what}: field "${field.name}" is required, but the constant value is empty`);
      const get = (): unknown => source.constantValue;
      columns.push({ field, get, read: () => constant, required, relation, path: null });
    } else {
      const get = compilePathFor(`${what}: source path`, source.sourcePath);
      columns.push({ field, get, read: (record) => convert(get(record)), required, relation, path: parsePath(source.sourcePath) });
    }
  }

  const keyColumns = table.primaryKey.map((name) => {
    const index = columns.findIndex((c) => c.field.name === name);
    if (index < 0) throw invalidRequest(`primary key field "${name}" of table "${table.name}" is not mapped`);
    return index;
  });
  if (integration.writeMode !== 'update') {
    // An update leaves unmapped columns as they are; a new row would have nothing for a required one.
    for (const f of table.fields) {
      if (f.required === true && !mappedBy.has(f.name))
        throw invalidRequest(`required field "${f.name}" of table "${table.name}" is not mapped`);
    }
  }

  return { table, columns, keyColumns, records: compilePathFor('records path', integration.recordsPath) };
}

/**
 * Maps one record into `row` (same order as `mapping.columns`). Returns null when every rule holds,
 * otherwise every violation of the record (the row is then partly filled and must not be written).
 */
export function mapRecord(
  mapping: CompiledMapping,
  record: unknown,
  row: SqlValue[],
  relationExists: RelationExists,
): FieldViolation[] | null {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    return [{ field: null, value: describeValue(record), rule: NOT_AN_OBJECT }];
  }
  const { columns } = mapping;
  let violations: FieldViolation[] | null = null;
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!;
    const value = column.read(record);
    if (value === null) {
      if (column.required) (violations ??= []).push({ field: column.field.name, value: null, rule: REQUIRED });
    } else if (typeof value === 'object') {
      // The raw value is read again only on this error path.
      (violations ??= []).push({ field: column.field.name, value: describeValue(column.get(record)), rule: value.rule });
      row[i] = null;
      continue;
    } else if (column.relation !== null && !relationExists(i, value)) {
      (violations ??= []).push(relationViolation(column, value));
    }
    row[i] = value;
  }
  return violations;
}
