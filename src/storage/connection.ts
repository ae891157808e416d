/**
 * The connection a worker's transaction runs on, and the one way to run hand-written SQL on it. On
 * SQLite it is the raw better-sqlite3 handle and a statement runs synchronously (the importer's
 * transaction is synchronous, and this is the hot path); on PostgreSQL it is a pg client inside the
 * caller's BEGIN (or the pool, for a write on its own) and a statement is awaited.
 *
 * Every statement is a Kysely `sql` template with `${value}` parameters, whether Kysely runs it or a
 * raw connection does: here it is compiled by the dialect's own query compiler (`?` for SQLite, `$n`
 * for PostgreSQL), never rewritten as text. On SQLite the prepared statement is cached per connection
 * by its compiled text, so a statement run once per page is prepared once per run.
 */
import type BetterSqlite3 from 'better-sqlite3';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
  type CompiledQuery,
  type RawBuilder,
} from 'kysely';
import type pg from 'pg';
import type { Dialect } from './db.js';
import type { DB } from './schema.js';

export interface SqliteConnection {
  readonly dialect: 'sqlite';
  readonly sqlite: BetterSqlite3.Database;
}

export interface PostgresConnection {
  readonly dialect: 'postgres';
  /** A client inside the caller's transaction, or the pool (autocommit). */
  readonly pg: pg.ClientBase | pg.Pool;
}

/** A PostgreSQL connection that is one client of the caller's own (a COPY, a transaction), never the pool. */
export interface PostgresClientConnection extends PostgresConnection {
  readonly pg: pg.ClientBase;
}

export type Connection = SqliteConnection | PostgresConnection;

/** The database's own connection (a SqliteDatabase, a PostgresDatabase): on PostgreSQL its pool, each statement committing on its own. */
export function connectionOf(db: SqliteConnection | { readonly dialect: 'postgres'; readonly pool: pg.Pool }): Connection {
  return db.dialect === 'sqlite' ? db : { dialect: 'postgres', pg: db.pool };
}

/** A connection inside the caller's transaction on PostgreSQL. */
export const onClient = (client: pg.ClientBase): PostgresClientConnection => ({ dialect: 'postgres', pg: client });

/** Kysely's own adapter, introspector and query compiler of each dialect: a dialect without its driver. */
export const dialectParts = {
  sqlite: {
    createAdapter: () => new SqliteAdapter(),
    createIntrospector: (db: Kysely<unknown>) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
  postgres: {
    createAdapter: () => new PostgresAdapter(),
    createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
};

// Compilers only: they turn a template into text and parameters, and never connect anywhere.
const compilers = {
  sqlite: new Kysely<DB>({ dialect: { ...dialectParts.sqlite, createDriver: () => new DummyDriver() } }),
  postgres: new Kysely<DB>({ dialect: { ...dialectParts.postgres, createDriver: () => new DummyDriver() } }),
};

/** A query builder of `dialect` that compiles queries and never runs them (it is connected to nothing). */
export const queryCompiler = (dialect: Dialect): Kysely<DB> => compilers[dialect];

const compile = (dialect: Connection['dialect'], query: RawBuilder<unknown>): CompiledQuery => query.compile(compilers[dialect]);

const MAX_CACHED_STATEMENTS = 500;
const statements = new WeakMap<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>();

/** A statement prepared once per connection (by its text), for the raw statements here and Kysely's (sqlite/dialect.ts). */
export function prepared(sqlite: BetterSqlite3.Database, text: string): BetterSqlite3.Statement {
  let cache = statements.get(sqlite);
  if (cache === undefined) statements.set(sqlite, (cache = new Map<string, BetterSqlite3.Statement>()));
  let statement = cache.get(text);
  if (statement === undefined) {
    if (cache.size >= MAX_CACHED_STATEMENTS) cache.clear();
    statement = sqlite.prepare(text);
    cache.set(text, statement);
  }
  return statement;
}

/** Runs a statement that changes rows; answers how many it changed. Synchronous on SQLite. */
export function execute(conn: SqliteConnection, query: RawBuilder<unknown>): number;
export function execute(conn: PostgresConnection, query: RawBuilder<unknown>): Promise<number>;
export function execute(conn: Connection, query: RawBuilder<unknown>): number | Promise<number>;
export function execute(conn: Connection, query: RawBuilder<unknown>): number | Promise<number> {
  const { sql, parameters } = compile(conn.dialect, query);
  if (conn.dialect === 'sqlite') return prepared(conn.sqlite, sql).run(...parameters).changes;
  return conn.pg.query(sql, [...parameters]).then((r) => r.rowCount ?? 0);
}

/** Runs a query and answers its rows. Synchronous on SQLite. */
export function select<R>(conn: SqliteConnection, query: RawBuilder<R>): R[];
export function select<R>(conn: PostgresConnection, query: RawBuilder<R>): Promise<R[]>;
export function select<R>(conn: Connection, query: RawBuilder<R>): R[] | Promise<R[]>;
export function select<R>(conn: Connection, query: RawBuilder<R>): R[] | Promise<R[]> {
  const { sql, parameters } = compile(conn.dialect, query);
  if (conn.dialect === 'sqlite') return prepared(conn.sqlite, sql).all(...parameters) as R[];
  return conn.pg.query<R & pg.QueryResultRow>(sql, [...parameters]).then((r) => r.rows);
}

/**
 * Runs a transition fenced by a lease: true when it changed exactly its one row, false when the row
 * was no longer this worker's (nothing changed). Synchronous on SQLite.
 */
export function runFenced(conn: SqliteConnection, query: RawBuilder<unknown>): boolean;
export function runFenced(conn: PostgresConnection, query: RawBuilder<unknown>): Promise<boolean>;
export function runFenced(conn: Connection, query: RawBuilder<unknown>): boolean | Promise<boolean>;
export function runFenced(conn: Connection, query: RawBuilder<unknown>): boolean | Promise<boolean> {
  if (conn.dialect === 'sqlite') return execute(conn, query) === 1;
  return execute(conn, query).then((changes) => changes === 1);
}

/**
 * Runs `fn` with commits that do not wait for the disk, for scratch data whose loss in a crash is
 * harmless, such as the staged pages of an import run, which starts again from page 1 anyway: SQLite's
 * synchronous=NORMAL (in WAL mode the file stays consistent, a power cut may only lose the latest
 * commits), PostgreSQL's synchronous_commit off for the session. The connection must be the caller's
 * own and `fn` the only work on it meanwhile.
 */
export async function withScratchCommits<T>(conn: SqliteConnection | PostgresConnection, fn: () => Promise<T>): Promise<T> {
  const [scratch, durable] =
    conn.dialect === 'sqlite'
      ? [sql`pragma synchronous = NORMAL`, sql`pragma synchronous = FULL`]
      : [sql`set synchronous_commit = off`, sql`reset synchronous_commit`];
  const run = async (query: RawBuilder<unknown>): Promise<void> => {
    await execute(conn, query);
  };
  await run(scratch);
  let result: T;
  try {
    result = await fn();
  } catch (err) {
    // The error of `fn` is the one to report, even when the connection is the thing that broke.
    await run(durable).catch(() => undefined);
    throw err;
  }
  await run(durable);
  return result;
}
