/**
 * Reading a target table's rows through the API, so an administrator can see what imports wrote
 * without a database client: filtered on the declared fields, ordered, paged and counted. Values come
 * back typed as declared (booleans as true/false).
 *
 * Order: the requested fields, then the primary key (so pages never overlap or skip rows). Nulls sort
 * first ascending and last descending on both databases, as OData says; the clause is written only
 * for nullable columns, so that ordering by the primary key keeps using its index on PostgreSQL.
 */
import { sql, type RawBuilder } from 'kysely';
import { filterCondition, type FilterClause } from '../storage/filter.js';
import { missingRelation } from '../storage/relation-errors.js';
import { AppError } from '../core/errors.js';
import { isFieldRequired, type TargetTable } from './model.js';
import type { Db } from '../storage/db.js';

export interface RowOrder {
  readonly field: string;
  readonly descending: boolean;
}

/**
 * A text comparison `$filter` does not have (the console's plain filter): the field's value contains,
 * or starts with, the text, letter case as typed. Only for fields stored as text.
 */
export interface TextMatch {
  readonly property: string;
  readonly op: 'contains' | 'startswith';
  readonly value: string;
}

export interface RowQuery {
  /** Clauses on declared fields only (the caller parsed them against the declaration). */
  readonly filter: readonly FilterClause[];
  readonly text?: readonly TextMatch[];
  readonly orderBy: readonly RowOrder[];
  readonly skip: number;
  readonly limit: number;
}

/** Each declared field is its own column; a Map, so that only declared names are ever found. */
function columnsOf(table: TargetTable): ReadonlyMap<string, string> {
  return new Map(table.fields.map((f) => [f.name, f.name]));
}

/** Booleans are stored as 0/1 on both databases. */
function storedFilter(table: TargetTable, filter: readonly FilterClause[]): FilterClause[] {
  const booleans = new Set(table.fields.filter((f) => f.type === 'boolean').map((f) => f.name));
  return filter.map((c) => (booleans.has(c.property) && typeof c.value === 'boolean' ? { ...c, value: c.value ? 1 : 0 } : c));
}

/**
 * Text matches in a form both databases evaluate alike, case-sensitively (SQLite's LIKE ignores the case
 * of ASCII letters only; PostgreSQL's does not): a position search for contains, a prefix for starts with.
 */
function textCondition(db: Db, table: TargetTable, match: TextMatch): RawBuilder<unknown> {
  if (!table.fields.some((f) => f.name === match.property)) throw new Error(`no field "${match.property}" in table "${table.name}"`);
  const column = sql.id(match.property);
  if (match.op === 'startswith') return sql`substr(${column}, 1, ${sql.lit([...match.value].length)}) = ${match.value}`;
  switch (db.dialect) {
    case 'sqlite':
      return sql`instr(${column}, ${match.value}) > 0`;
    case 'postgres':
      return sql`strpos(${column}, ${match.value}) > 0`;
    default: {
      const never: never = db.dialect;
      throw new Error(`unknown dialect ${String(never)}`);
    }
  }
}

/** The filter's clauses and text matches, joined by "and". */
function whereClause(db: Db, table: TargetTable, filter: readonly FilterClause[], text: readonly TextMatch[]): RawBuilder<unknown> {
  const where = filterCondition(storedFilter(table, filter), columnsOf(table));
  if (text.length === 0) return where;
  return sql.join([where, ...text.map((m) => textCondition(db, table, m))], sql` and `);
}

function orderClause(table: TargetTable, orderBy: readonly RowOrder[]): RawBuilder<unknown> {
  const items = [...orderBy];
  for (const key of table.primaryKey) if (!items.some((o) => o.field === key)) items.push({ field: key, descending: false });
  const fields = new Map(table.fields.map((f) => [f.name, f]));
  return sql.join(
    items.map(({ field, descending }) => {
      const declared = fields.get(field);
      if (declared === undefined) throw new Error(`no field "${field}" in table "${table.name}"`);
      const nulls = isFieldRequired(table, declared) ? '' : descending ? ' nulls last' : ' nulls first';
      return sql`${sql.id(field)} ${sql.raw(descending ? 'desc' : 'asc')}${sql.raw(nulls)}`;
    }),
  );
}

/** A read of a table that was dropped or changed after its declaration was looked up: 404 or 409, not 500. */
async function reading<T>(table: TargetTable, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    const missing = missingRelation(err);
    if (missing === 'table') throw new AppError(404, 'notFound', `Target table "${table.name}" was deleted while it was being read.`);
    if (missing === 'column')
      throw new AppError(409, 'conflict', `Target table "${table.name}" was changed while it was being read; read it again.`);
    throw err;
  }
}

export async function readTableRows(db: Db, table: TargetTable, query: RowQuery): Promise<Record<string, unknown>[]> {
  const columns = sql.join(table.fields.map((f) => sql.id(f.name)));
  const where = whereClause(db, table, query.filter, query.text ?? []);
  const { rows } = await reading(table, () =>
    sql<Record<string, unknown>>`select ${columns} from ${sql.id(table.name)} where ${where} order by ${orderClause(
      table,
      query.orderBy,
    )} limit ${query.limit} offset ${query.skip}`.execute(db),
  );
  const booleans = table.fields.filter((f) => f.type === 'boolean').map((f) => f.name);
  if (booleans.length > 0) {
    for (const row of rows) for (const name of booleans) if (row[name] !== null) row[name] = row[name] === 1;
  }
  return rows;
}

/** The number of rows matching the filter, on all pages (`@odata.count`). */
export async function countTableRows(
  db: Db,
  table: TargetTable,
  filter: readonly FilterClause[],
  text: readonly TextMatch[] = [],
): Promise<number> {
  const where = whereClause(db, table, filter, text);
  const { rows } = await reading(table, () =>
    sql<{ n: number | string }>`select count(*) as n from ${sql.id(table.name)} where ${where}`.execute(db),
  );
  return Number(rows[0]?.n ?? 0);
}
