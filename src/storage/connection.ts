/**
 * The connection a worker's import transaction runs on, and the one way to run a queue statement on
 * it. On SQLite it is the raw better-sqlite3 handle and the statement runs synchronously (the importer's
 * transaction is synchronous, and this is the hot path); on PostgreSQL it is a pg client inside the
 * caller's BEGIN (or the pool, for a write on its own) and the statement is awaited. The statement text
 * is written once, with `@name` parameters; for pg they become `$1…$n`.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type pg from 'pg';
import type { Database } from './database.js';
import { pgStatement } from './postgres/statement.js';

export interface SqliteConnection {
  readonly dialect: 'sqlite';
  readonly sqlite: BetterSqlite3.Database;
}

export interface PostgresConnection {
  readonly dialect: 'postgres';
  /** A client inside the caller's transaction, or the pool (autocommit). */
  readonly pg: pg.ClientBase | pg.Pool;
}

export type Connection = SqliteConnection | PostgresConnection;

/** The database's own connection: on PostgreSQL its pool, each statement committing on its own. */
export function connectionOf(db: Database): Connection {
  return db.dialect === 'sqlite' ? db : { dialect: 'postgres', pg: db.pool };
}

export type NamedParams = Readonly<Record<string, string | number | null>>;

/** Runs a statement that changes rows; answers how many it changed. Synchronous on SQLite. */
export function runNamed(conn: SqliteConnection, text: string, params: NamedParams): number;
export function runNamed(conn: PostgresConnection, text: string, params: NamedParams): Promise<number>;
export function runNamed(conn: Connection, text: string, params: NamedParams): number | Promise<number>;
export function runNamed(conn: Connection, text: string, params: NamedParams): number | Promise<number> {
  if (conn.dialect === 'sqlite') return conn.sqlite.prepare(text).run(params).changes;
  const { text: pgText, values } = pgStatement(text, params);
  return conn.pg.query(pgText, values).then((r) => r.rowCount ?? 0);
}

/**
 * Runs a transition fenced by a lease: true when it changed exactly its one row, false when the row
 * was no longer this worker's (nothing changed). Synchronous on SQLite.
 */
export function runFenced(conn: SqliteConnection, text: string, params: NamedParams): boolean;
export function runFenced(conn: PostgresConnection, text: string, params: NamedParams): Promise<boolean>;
export function runFenced(conn: Connection, text: string, params: NamedParams): boolean | Promise<boolean>;
export function runFenced(conn: Connection, text: string, params: NamedParams): boolean | Promise<boolean> {
  if (conn.dialect === 'sqlite') return runNamed(conn, text, params) === 1;
  return runNamed(conn, text, params).then((changes) => changes === 1);
}
