/**
 * A dry run of an integration: records mapped and validated exactly as the importers map them, related
 * keys looked up in the database, and nothing written. "Preview first page" of a REST endpoint and the
 * console's "try a payload" use it.
 */
import { sql } from 'kysely';
import { AppError } from '../core/errors.js';
import { getIntegrationPlan } from '../integrations/store.js';
import type { SqlValue } from '../mapping/convert.js';
import { compileMapping, mapRecord, type CompiledMapping, type RelationExists } from '../mapping/engine.js';
import { recordError } from '../mapping/messages.js';
import type { Db } from '../storage/db.js';
import type { FieldRelation } from '../tables/model.js';
import { getTableWithRelations } from '../tables/store.js';

/** One record as the integration would take it: its row (target field → value), or its errors. */
export type DryRunRow =
  | { readonly recordNo: number; readonly row: Readonly<Record<string, SqlValue>> }
  | { readonly recordNo: number; readonly errors: readonly string[] };

/** The integration the preview maps records with. */
export interface DryRunIntegration {
  /** Where the records are in a page ('' blank); page-records.ts. */
  readonly recordsPath: string;
  /** Compiled against its target table, or the message a run would fail with at its start. */
  readonly mapping: CompiledMapping | { readonly error: string };
  /** Whether `value` is a key of the related table: read, never written. */
  readonly relationExists: (relation: FieldRelation, value: string | number) => Promise<boolean>;
}

/** Relations asked of the database as the importers ask them: the related field equal to the value. */
function relationLookup(db: Db): DryRunIntegration['relationExists'] {
  return async (relation, value) => {
    // PostgreSQL text cannot hold NUL, and asking for it fails the query: such a key cannot exist.
    if (typeof value === 'string' && value.includes('\u0000')) return false;
    const found = await sql<{
      present: number;
    }>`select 1 as present from ${sql.id(relation.table)} where ${sql.id(relation.field)} = ${value} limit 1`.execute(db);
    return found.rows.length > 0;
  };
}

/** The integration with that Sorting Order as a dry run uses it; undefined when there is none. */
export async function loadDryRunIntegration(db: Db, sortingOrder: number): Promise<DryRunIntegration | undefined> {
  const plan = await getIntegrationPlan(db, sortingOrder);
  if (plan === undefined) return undefined;
  const tables = await getTableWithRelations(db, plan.integration.targetTable);
  let mapping: DryRunIntegration['mapping'];
  try {
    mapping = compileMapping(plan, tables);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    mapping = { error: err.message };
  }
  return { recordsPath: plan.integration.recordsPath, mapping, relationExists: relationLookup(db) };
}

/**
 * The records mapped as the importers map them. mapRecord asks relations synchronously, so the records
 * are mapped twice: once to learn which related keys they name (answered from the database in
 * between), once for the result.
 */
export async function mapSample(
  mapping: CompiledMapping,
  relationExists: DryRunIntegration['relationExists'],
  records: readonly unknown[],
): Promise<DryRunRow[]> {
  const { columns } = mapping;
  const row = new Array<SqlValue>(columns.length).fill(null);
  const asked = new Map<string, { column: number; value: string | number; exists: boolean }>();
  const keyOf = (column: number, value: string | number): string => `${column}\u0000${typeof value}\u0000${value}`;
  const collect: RelationExists = (column, value) => {
    asked.set(keyOf(column, value), { column, value, exists: true });
    return true;
  };
  for (const record of records) mapRecord(mapping, record, row, collect);
  for (const question of asked.values()) {
    question.exists = await relationExists(columns[question.column]!.relation!, question.value);
  }
  const answer: RelationExists = (column, value) => asked.get(keyOf(column, value))?.exists ?? true;
  return records.map((record, i): DryRunRow => {
    const recordNo = i + 1;
    const violations = mapRecord(mapping, record, row, answer);
    if (violations !== null) return { recordNo, errors: violations.map((v) => recordError(recordNo, v.field, v.value, v.rule).message) };
    return { recordNo, row: Object.fromEntries(columns.map((c, n) => [c.field.name, row[n]!])) };
  });
}
