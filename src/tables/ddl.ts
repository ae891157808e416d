/**
 * SQL for target tables: the statements that create, extend, alter, rebuild and drop the real table
 * behind a declaration. Only text is built here; the service runs it. The dialect seam is
 * `columnType`, the catalogue query in `sqlTableExists`, and which of `alterNullabilitySql` (PostgreSQL)
 * or `rebuildTableSql` (SQLite) a change of NOT NULL takes (`Capabilities.alterColumnNullability`).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../storage/database.js';
import { isFieldRequired, type FieldType, type TargetField, type TargetTable } from './model.js';

export type SqlDialect = Database['dialect'];

/**
 * The column type of each field type per dialect; lengths, option values and formats are the
 * declaration's rules, not SQL's. PostgreSQL stores the same values as SQLite, so imports and reads
 * convert them the same way: booleans as 0/1 integers, dates and date-times as ISO 8601 text, integers
 * as 64-bit (SQLite's INTEGER).
 */
const COLUMN_TYPES = {
  sqlite: {
    text: 'TEXT',
    code: 'TEXT',
    option: 'TEXT',
    guid: 'TEXT',
    date: 'TEXT',
    datetime: 'TEXT',
    integer: 'INTEGER',
    boolean: 'INTEGER',
    decimal: 'NUMERIC',
  },
  postgres: {
    text: 'TEXT',
    code: 'TEXT',
    option: 'TEXT',
    guid: 'TEXT',
    date: 'TEXT',
    datetime: 'TEXT',
    integer: 'BIGINT',
    boolean: 'INTEGER',
    decimal: 'NUMERIC',
  },
} as const satisfies Record<SqlDialect, Record<FieldType, string>>;

export function columnType(type: FieldType, dialect: SqlDialect): string {
  return COLUMN_TYPES[dialect][type];
}

/** Names are validated before they get here; doubling quotes keeps the quoting correct regardless. */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

const columnList = (names: readonly string[]): string => names.map(quoteIdent).join(', ');

function columnDefinition(table: TargetTable, field: TargetField, dialect: SqlDialect): string {
  const notNull = isFieldRequired(table, field) ? ' NOT NULL' : '';
  return `${quoteIdent(field.name)} ${columnType(field.type, dialect)}${notNull}`;
}

/** `as` names the SQL table differently from the declaration (used while rebuilding a table). */
export function createTableSql(table: TargetTable, dialect: SqlDialect, as: string = table.name): string {
  const parts = table.fields.map((f) => columnDefinition(table, f, dialect));
  parts.push(`PRIMARY KEY (${columnList(table.primaryKey)})`);
  for (const f of table.fields) {
    if (f.relation === undefined) continue;
    parts.push(`FOREIGN KEY (${quoteIdent(f.name)}) REFERENCES ${quoteIdent(f.relation.table)} (${quoteIdent(f.relation.field)})`);
  }
  return `CREATE TABLE ${quoteIdent(as)} (\n  ${parts.join(',\n  ')}\n)`;
}

/**
 * A new column. Nullable unless `notNull`, which the service asks for only while the table is empty
 * (existing rows would have no value) and only where ALTER can add the constraint (PostgreSQL).
 */
export function addColumnSql(table: TargetTable, field: TargetField, dialect: SqlDialect, notNull = false): string {
  const references =
    field.relation === undefined ? '' : ` REFERENCES ${quoteIdent(field.relation.table)} (${quoteIdent(field.relation.field)})`;
  return `ALTER TABLE ${quoteIdent(table.name)} ADD COLUMN ${quoteIdent(field.name)} ${columnType(field.type, dialect)}${notNull ? ' NOT NULL' : ''}${references}`;
}

/**
 * PostgreSQL only (`alterColumnNullability`): NOT NULL set or dropped in place for the existing
 * columns whose required-ness changed. Primary key columns are NOT NULL whatever `required` says,
 * so they never appear here.
 */
export function alterNullabilitySql(current: TargetTable, next: TargetTable): string[] {
  return current.fields.flatMap((old) => {
    const now = next.fields.find((f) => f.name === old.name);
    if (now === undefined) return [];
    const was = isFieldRequired(current, old);
    const is = isFieldRequired(next, now);
    if (was === is) return [];
    return [`ALTER TABLE ${quoteIdent(next.name)} ALTER COLUMN ${quoteIdent(old.name)} ${is ? 'SET' : 'DROP'} NOT NULL`];
  });
}

export const dropTableSql = (name: string): string => `DROP TABLE ${quoteIdent(name)}`;

/**
 * Rebuilds a table that has rows under a new declaration with the same columns plus new nullable ones:
 * create under a temporary name, copy, drop, rename. Only valid when no table references this one
 * (dropping a referenced parent that has rows would violate the foreign keys pointing at it).
 */
export function rebuildTableSql(current: TargetTable, next: TargetTable, dialect: SqlDialect): string[] {
  const temporary = `ifw_rebuild_${next.name}`;
  const copied = columnList(current.fields.map((f) => f.name));
  return [
    createTableSql(next, dialect, temporary),
    `INSERT INTO ${quoteIdent(temporary)} (${copied}) SELECT ${copied} FROM ${quoteIdent(current.name)}`,
    dropTableSql(current.name),
    `ALTER TABLE ${quoteIdent(temporary)} RENAME TO ${quoteIdent(next.name)}`,
  ];
}

/**
 * Any table or view of that name, whatever its case (SQLite names are case-insensitive; on PostgreSQL
 * a differently cased quoted name is a different table, but one that close is refused all the same).
 * On PostgreSQL only the schema the service works in counts (the first of its search_path).
 */
export function sqlTableExists(name: string, dialect: SqlDialect): RawBuilder<{ name: string }> {
  switch (dialect) {
    case 'sqlite':
      return sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND lower(name) = lower(${name})`;
    case 'postgres':
      return sql<{ name: string }>`SELECT c.relname AS name
        FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND lower(c.relname) = lower(${name})`;
    default: {
      const never: never = dialect;
      throw new Error(`unknown dialect ${String(never)}`);
    }
  }
}

export const hasRows = (table: string): RawBuilder<{ present: number }> => sql`SELECT 1 AS present FROM ${sql.id(table)} LIMIT 1`;

export const hasNulls = (table: string, column: string): RawBuilder<{ present: number }> =>
  sql`SELECT 1 AS present FROM ${sql.id(table)} WHERE ${sql.id(column)} IS NULL LIMIT 1`;
