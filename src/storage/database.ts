/**
 * Opening the database. A `Database` is the Kysely query builder itself (a `Db`, see db.ts, which is
 * what storage functions take), plus the raw handle behind it (the better-sqlite3 connection or the pg
 * pool) for the dialect folders, where a hot path needs prepared statements or a client of its own.
 * The dialect seam is `dialect` (narrowed where a path is one dialect's alone), `capabilities`, and
 * the few statements that switch on them.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import type { DatabaseTarget, PostgresTarget, SqliteTarget } from '../core/config.js';
import { capabilitiesOf, type Capabilities, type Db, type Dialect } from './db.js';
import type { DB } from './schema.js';
import { migrationProvider } from './migrations.js';
import { openPostgresPool } from './postgres/pool.js';
import { embeddedSqliteDialect, openSqliteFile } from './sqlite/dialect.js';
import { refusingNul } from './refuse-nul.js';

interface DatabaseBase {
  /** The same handle, for the callers that still read it as a property. */
  readonly kysely: Db;
  readonly capabilities: Capabilities;
  close(): Promise<void>;
}

/** An opened database: a `Db` (what storage functions take), plus its raw handle for the dialect folders. */
export interface SqliteDatabase extends Db, DatabaseBase {
  readonly dialect: 'sqlite';
  /** The raw connection behind the query builder (same connection, same thread). */
  readonly sqlite: BetterSqlite3.Database;
}

export interface PostgresDatabase extends Db, DatabaseBase {
  readonly dialect: 'postgres';
  /** The pool behind the query builder. */
  readonly pool: pg.Pool;
  /** The schema holding the service's tables (`?schema=` in the URL); undefined: the server's default. */
  readonly schemaName: string | undefined;
}

export type Database = SqliteDatabase | PostgresDatabase;

export type { Capabilities, Db, Dialect } from './db.js';

export interface OpenOptions {
  /** SQLite: the HTTP thread never blocks on a lock (0); a worker thread may (it has nothing else to do). */
  readonly busyTimeoutMs?: number;
  readonly busyRetryMs?: number;
  /** PostgreSQL: a pooled connection failed while idle (it is replaced when needed). */
  readonly onIdleClientError?: (err: Error) => void;
}

export function openDatabase(target: SqliteTarget, options?: OpenOptions): SqliteDatabase;
export function openDatabase(target: PostgresTarget, options?: OpenOptions): PostgresDatabase;
export function openDatabase(target: DatabaseTarget, options?: OpenOptions): Database;
export function openDatabase(target: DatabaseTarget, options: OpenOptions = {}): Database {
  switch (target.kind) {
    case 'sqlite':
      return openSqlite(target, options);
    case 'postgres':
      return openPostgres(target, options);
    default: {
      const never: never = target;
      throw new Error(`unknown database kind ${String(never)}`);
    }
  }
}

function openSqlite(target: SqliteTarget, options: OpenOptions): SqliteDatabase {
  const busyTimeoutMs = options.busyTimeoutMs ?? 0;
  const sqlite = openSqliteFile(target.file, busyTimeoutMs);
  const kysely = new Kysely<DB>({
    dialect: refusingNul(embeddedSqliteDialect(sqlite, { busyTimeoutMs, busyRetryMs: options.busyRetryMs ?? 30_000 })),
  });
  return opened(kysely, { dialect: 'sqlite', sqlite });
}

function openPostgres(target: PostgresTarget, options: OpenOptions): PostgresDatabase {
  const pool = openPostgresPool(target, { onIdleClientError: options.onIdleClientError });
  // Kysely ends the pool on destroy().
  const kysely = new Kysely<DB>({ dialect: refusingNul(new PostgresDialect({ pool })) });
  return opened(kysely, { dialect: 'postgres', pool, schemaName: target.schema });
}

/** The query builder itself becomes the database: storage functions take it as their `Db`. */
function opened<T extends { readonly dialect: Dialect }>(kysely: Kysely<DB>, raw: T): Db & T & DatabaseBase {
  const db = Object.assign(kysely, raw, { capabilities: capabilitiesOf(raw), close: () => kysely.destroy() });
  return Object.assign(db, { kysely: db });
}

/**
 * The schema the service's tables are created in on PostgreSQL, created when `?schema=` names one that
 * does not exist yet. Kysely's migrator must be told it: left unqualified, it takes a migration table
 * in any other schema of the database (another service's, or another test's) for this one's.
 */
async function migrationSchema(db: PostgresDatabase): Promise<string> {
  if (db.schemaName !== undefined) {
    await sql`create schema if not exists ${sql.id(db.schemaName)}`.execute(db);
    return db.schemaName;
  }
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (schema === null || schema === undefined)
    throw new Error('PostgreSQL: no schema of the search_path exists; create one or name it with ?schema= in IFW_DATABASE_URL');
  return schema;
}

/** Runs every pending migration; the same list on both dialects. Returns the names applied. */
export async function migrate(db: Database): Promise<string[]> {
  const migrationTableSchema = db.dialect === 'postgres' ? await migrationSchema(db) : undefined;
  const migrator = new Migrator({
    db,
    provider: migrationProvider(db.dialect),
    migrationTableName: 'ifw_migration',
    migrationLockTableName: 'ifw_migration_lock',
    ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) throw error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
