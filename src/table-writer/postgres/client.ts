/**
 * How the PostgreSQL importer talks to the caller's connection. It never begins, commits or rolls back
 * the caller's transaction: everything it may have to undo sits under a savepoint, because on
 * PostgreSQL a failed statement aborts the whole transaction until a savepoint is rolled back to.
 */
import pg from 'pg';
import { refusalOf, type MissingObject, type Refusal, type RefusalCodes } from '../refusals.js';

/** A pg.Client or pg.PoolClient, already inside a transaction the caller controls. */
export type PgClient = pg.ClientBase;

/**
 * Failures of one statement that say something about a record, not about the database's health:
 * class 22 (data exception: out of range, invalid text, a NUL character) and class 23 (integrity
 * constraint: unique, foreign key, not null, check).
 */
export const isRecordLevelPgError = (err: unknown): err is pg.DatabaseError =>
  err instanceof pg.DatabaseError && err.code !== undefined && (err.code.startsWith('22') || err.code.startsWith('23'));

/** By SQLSTATE; '22' stands for the whole of class 22 (data exception). */
const PG_REFUSALS: RefusalCodes = { '22': 'value', '23505': 'unique', '23503': 'foreignKey', '23502': 'notNull', '23514': 'check' };

/** What kind of refusal a record-level PostgreSQL error is (refusals.ts words it). */
export const pgRefusal = (err: pg.DatabaseError): Refusal =>
  refusalOf(PG_REFUSALS, err.code?.startsWith('22') === true ? '22' : err.code, () => err.column);

/** Which table or column a PostgreSQL error says is missing (`relation "x" does not exist`, `column "y" … does not exist`). */
export function pgMissingObject(err: pg.DatabaseError): MissingObject {
  const table = err.code === '42P01' ? /relation "([^"]+)"/.exec(err.message)?.[1] : undefined;
  if (table !== undefined) return { table };
  const column = err.code === '42703' ? /column "(?:[^"]+\.)?([^"]+)"/.exec(err.message)?.[1] : undefined;
  if (column !== undefined) return { column };
  return 'unknown';
}

/** A missing table or column (class 42: undefined_table 42P01, undefined_column 42703). */
export const isMissingObjectPgError = (err: unknown): err is pg.DatabaseError =>
  err instanceof pg.DatabaseError && (err.code === '42P01' || err.code === '42703');

export type Savepoint = 'ifw_import' | 'ifw_import_chunk' | 'ifw_import_row';

export async function savepoint(client: PgClient, name: Savepoint): Promise<void> {
  await client.query(`SAVEPOINT ${name}`);
}

export async function release(client: PgClient, name: Savepoint): Promise<void> {
  await client.query(`RELEASE SAVEPOINT ${name}`);
}

/** Undoes everything since the savepoint, ends the transaction's aborted state, and drops the savepoint. */
export async function rollbackAndRelease(client: PgClient, name: Savepoint): Promise<void> {
  await client.query(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
}

/** Undoes everything since the savepoint and keeps it, so more work can follow under it. */
export async function rollbackTo(client: PgClient, name: Savepoint): Promise<void> {
  await client.query(`ROLLBACK TO SAVEPOINT ${name}`);
}
