/**
 * The prepared statements of one import: how a mapped row is written (by write mode) and how a
 * relation is checked. One statement per operation with positional parameters, prepared once.
 */
import BetterSqlite3 from 'better-sqlite3';
import type { SqlValue } from '../../mapping/convert.js';
import type { CompiledMapping, RelationExists } from '../../mapping/engine.js';
import type { WriteMode } from '../../integrations/model.js';
import { quoteIdent } from '../../tables/ddl.js';
import { perRelation, targetSql } from '../target-sql.js';
import { refusalOf, type MissingObject, type Refusal, type RefusalCodes } from '../refusals.js';

/** Failures of one statement that say something about the record, not about the database's health. */
export const isRecordLevelSqliteError = (err: unknown): err is InstanceType<typeof BetterSqlite3.SqliteError> =>
  err instanceof BetterSqlite3.SqliteError &&
  (err.code.startsWith('SQLITE_CONSTRAINT') ||
    err.code === 'SQLITE_MISMATCH' ||
    err.code === 'SQLITE_TOOBIG' ||
    err.code === 'SQLITE_RANGE');

const SQLITE_REFUSALS: RefusalCodes = {
  SQLITE_CONSTRAINT_UNIQUE: 'unique',
  SQLITE_CONSTRAINT_PRIMARYKEY: 'unique',
  SQLITE_CONSTRAINT_FOREIGNKEY: 'foreignKey',
  SQLITE_CONSTRAINT_NOTNULL: 'notNull',
  SQLITE_CONSTRAINT_CHECK: 'check',
  SQLITE_MISMATCH: 'value',
  SQLITE_TOOBIG: 'value',
  SQLITE_RANGE: 'value',
};

/** What kind of refusal a record-level SQLite error is (refusals.ts words it). */
export const sqliteRefusal = (err: InstanceType<typeof BetterSqlite3.SqliteError>): Refusal =>
  // "NOT NULL constraint failed: customer.email"
  refusalOf(SQLITE_REFUSALS, err.code, () => /\.([^.\s]+)$/.exec(err.message)?.[1]);

/** Which table or column an SQLite error says is missing ("no such table: x", "no such column: y", "table x has no column named y"). */
export function sqliteMissingObject(err: InstanceType<typeof BetterSqlite3.SqliteError>): MissingObject {
  const table = /no such table: (?:\w+\.)?(\S+)/.exec(err.message)?.[1];
  if (table !== undefined) return { table };
  const column = /no such column: (?:\S+\.)?(\S+)|has no column named (\S+)/.exec(err.message);
  if (column !== null) return { column: (column[1] ?? column[2])! };
  return 'unknown';
}

/**
 * `keyExists`: an insert found a row with the same key (already in the table, or written earlier in
 * this payload). `keyMissing`: an update found no row with the key.
 */
export type WriteResult = 'inserted' | 'updated' | 'keyExists' | 'keyMissing';

export type RowWriter = (row: readonly SqlValue[]) => WriteResult;

export function prepareWriter(sqlite: BetterSqlite3.Database, mapping: CompiledMapping, mode: WriteMode): RowWriter {
  const { table, names, keyNames, nonKeys, insertInto } = targetSql(mapping);
  const keys = mapping.keyColumns;
  // No key → plain insert. With a key, ON CONFLICT DO NOTHING turns "duplicate" into changes === 0,
  // one statement instead of a SELECT before every INSERT.
  const insertSql = `${insertInto}VALUES (${names.map(() => '?').join(', ')})${
    keys.length === 0 ? '' : ` ON CONFLICT (${keyNames.join(', ')}) DO NOTHING`
  }`;
  // With only key columns mapped, "update" means "the row exists": a no-op assignment still reports a change.
  const assignments = nonKeys.length > 0 ? nonKeys.map((i) => `${names[i]} = ?`) : [`${keyNames[0]} = ${keyNames[0]}`];
  const updateSql = `UPDATE ${table} SET ${assignments.join(', ')} WHERE ${keyNames.map((k) => `${k} = ?`).join(' AND ')}`;

  const insertRow = (): RowWriter => {
    const insert = sqlite.prepare(insertSql);
    return (row) => (insert.run(row).changes === 1 ? 'inserted' : 'keyExists');
  };
  const updateRow = (): RowWriter => {
    const update = sqlite.prepare(updateSql);
    const params: SqlValue[] = new Array<SqlValue>(nonKeys.length + keys.length).fill(null);
    const order = [...nonKeys, ...keys];
    return (row) => {
      for (let i = 0; i < order.length; i++) params[i] = row[order[i]!]!;
      return update.run(params).changes > 0 ? 'updated' : 'keyMissing';
    };
  };

  switch (mode) {
    case 'insert':
      return insertRow();
    case 'update':
      return updateRow();
    case 'upsert': {
      const insert = insertRow();
      const update = updateRow();
      return (row) => {
        const inserted = insert(row);
        return inserted === 'inserted' ? inserted : update(row);
      };
    }
    default: {
      const unknown: never = mode;
      throw new Error(`unknown write mode ${String(unknown)}`);
    }
  }
}

/** Rows per multi-row INSERT: far below SQLite's smallest bound-parameter limit (999) and its compound-VALUES limit (500). */
const MAX_BATCH_ROWS = 50;

export interface BatchInsert {
  /** Rows per statement; `run` takes exactly size × columns values, row after row. */
  readonly size: number;
  run(values: readonly SqlValue[]): void;
}

/**
 * A multi-row INSERT for insert mode: one statement per 50 rows instead of per row is the largest
 * single saving in a bulk load. It has no ON CONFLICT clause on purpose: a duplicate (or any other
 * constraint) aborts the whole statement, and SQLite undoes that statement's rows, so the caller can
 * replay those rows one at a time to learn exactly which record broke which rule.
 * Update and upsert need a per-row answer (inserted or updated?) and are not batched.
 */
export function prepareBatchInsert(sqlite: BetterSqlite3.Database, mapping: CompiledMapping, mode: WriteMode): BatchInsert | null {
  const size = Math.min(MAX_BATCH_ROWS, Math.floor(999 / mapping.columns.length));
  if (mode !== 'insert' || size < 2) return null;
  const { names, insertInto } = targetSql(mapping);
  const stmt = sqlite.prepare(`${insertInto}VALUES ${new Array<string>(size).fill(`(${names.map(() => '?').join(', ')})`).join(', ')}`);
  return {
    size,
    run: (values) => {
      stmt.run(values);
    },
  };
}

/**
 * Relation checks against the database, inside the import's transaction (so rows written earlier in
 * the same payload count). Only hits are remembered: a miss may turn into a hit once a later record
 * of the payload inserts that key (a self-relation).
 */
export function prepareRelationCheck(sqlite: BetterSqlite3.Database, mapping: CompiledMapping): RelationExists {
  const perColumn = perRelation(mapping, ({ table, field }) => ({
    stmt: sqlite.prepare(`SELECT 1 FROM ${quoteIdent(table)} WHERE ${quoteIdent(field)} = ? LIMIT 1`).pluck(),
    seen: new Set<string | number>(),
  }));
  return (column, value) => {
    const check = perColumn[column];
    if (check === undefined) return true;
    if (check.seen.has(value)) return true;
    if (check.stmt.get(value) === undefined) return false;
    check.seen.add(value);
    return true;
  };
}
