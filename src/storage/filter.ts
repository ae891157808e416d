/** A list filter (an OData `$filter`, parsed by http/odata.ts) applied to a Kysely select, the same way for every list. */
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';

export type FilterOp = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';
export type FilterValue = string | number | boolean | null;
/** One comparison of an API property with a value; clauses are joined by "and". */
export interface FilterClause {
  readonly property: string;
  readonly op: FilterOp;
  readonly value: FilterValue;
}

const SQL_OP = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' } as const;

/** `columnOf` maps each filterable API property to its column; parseFilter has refused any other property. */
export function applyFilter<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  filter: readonly FilterClause[],
  columnOf: Readonly<Record<string, string>>,
): SelectQueryBuilder<DB, TB, O> {
  let filtered = query;
  for (const clause of filter) {
    const column = Object.hasOwn(columnOf, clause.property) ? columnOf[clause.property] : undefined;
    if (column === undefined) throw new Error(`no column for filter property "${clause.property}"`);
    const ref = column as never;
    if (clause.value === null) filtered = clause.op === 'ne' ? filtered.where(ref, 'is not', null) : filtered.where(ref, 'is', null);
    else filtered = filtered.where(ref, SQL_OP[clause.op], clause.value as never);
  }
  return filtered;
}

/**
 * The same filter as a SQL condition over columns named at run time (a target table's fields):
 * `true` when there is no clause. `columnOf` maps each filterable property to its column.
 */
export function filterCondition(filter: readonly FilterClause[], columnOf: ReadonlyMap<string, string>): RawBuilder<unknown> {
  if (filter.length === 0) return sql`1 = 1`;
  const conditions = filter.map((clause) => {
    const column = columnOf.get(clause.property);
    if (column === undefined) throw new Error(`no column for filter property "${clause.property}"`);
    if (clause.value === null) return clause.op === 'ne' ? sql`${sql.id(column)} is not null` : sql`${sql.id(column)} is null`;
    return sql`${sql.id(column)} ${sql.raw(SQL_OP[clause.op])} ${clause.value}`;
  });
  return sql.join(conditions, sql` and `);
}
