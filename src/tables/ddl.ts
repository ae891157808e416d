/**
 * SQL for target tables: the statements that create, extend, rebuild and drop the real table behind a
 * declaration. Only text is built here; the service runs it. The dialect seam is `columnType` and the
 * catalogue query in `sqlTableExists`; a PostgreSQL variant adds its branch to each.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../storage/database.js';
import { isFieldRequired, type FieldType, type TargetField, type TargetTable } from './model.js';

export type SqlDialect = Database['dialect'];

/** The column type of a field; lengths, option values and formats are the declaration's rules, not SQL's. */
export function columnType(type: FieldType, dialect: SqlDialect): string {
  switch (dialect) {
    case 'sqlite':
      switch (type) {
        case 'text':
        case 'code':
        case 'option':
        case 'guid':
        case 'date':
        case 'datetime':
          return 'TEXT';
        case 'integer':
        case 'boolean':
          return 'INTEGER';
        case 'decimal':
          return 'NUMERIC';
        default: {
          const never: never = type;
          throw new Error(`unknown field type ${String(never)}`);
        }
      }
    default: {
      const never: never = dialect;
      throw new Error(`unknown dialect ${String(never)}`);
    }
  }
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

/** A new column is never NOT NULL here: existing rows would have no value (see the service for required fields). */
export function addColumnSql(table: TargetTable, field: TargetField, dialect: SqlDialect): string {
  const references = field.relation === undefined ? '' : ` REFERENCES ${quoteIdent(field.relation.table)} (${quoteIdent(field.relation.field)})`;
  return `ALTER TABLE ${quoteIdent(table.name)} ADD COLUMN ${quoteIdent(field.name)} ${columnType(field.type, dialect)}${references}`;
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

/** Any table or view of that name, whatever its case (SQLite names are case-insensitive). */
export function sqlTableExists(name: string, dialect: SqlDialect): RawBuilder<{ name: string }> {
  switch (dialect) {
    case 'sqlite':
      return sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND lower(name) = lower(${name})`;
    default: {
      const never: never = dialect;
      throw new Error(`unknown dialect ${String(never)}`);
    }
  }
}

export const hasRows = (table: string): RawBuilder<{ present: number }> => sql`SELECT 1 AS present FROM ${sql.id(table)} LIMIT 1`;

export const hasNulls = (table: string, column: string): RawBuilder<{ present: number }> =>
  sql`SELECT 1 AS present FROM ${sql.id(table)} WHERE ${sql.id(column)} IS NULL LIMIT 1`;
