/** A list filter (an OData `$filter`, parsed by http/odata.ts) applied to a Kysely select, the same way for every list. */
import type { SelectQueryBuilder } from 'kysely';

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
    const column = columnOf[clause.property];
    if (column === undefined) throw new Error(`no column for filter property "${clause.property}"`);
    const ref = column as never;
    if (clause.value === null) filtered = clause.op === 'ne' ? filtered.where(ref, 'is not', null) : filtered.where(ref, 'is', null);
    else filtered = filtered.where(ref, SQL_OP[clause.op], clause.value as never);
  }
  return filtered;
}
