/**
 * Opening the database. `Database` is what the rest of the service is handed: the Kysely query
 * builder for everything, plus, on SQLite, the raw handle where a hot path (the import writer) needs
 * prepared statements directly. The dialect seam is `dialect` (narrowed where a path is one
 * dialect's alone), `capabilities`, and the few statements that switch on them.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import type { DatabaseTarget, PostgresTarget, SqliteTarget } from '../core/config.js';
import type { DB } from './schema.js';
import { migrationProvider } from './migrations.js';
import { openPostgresPool } from './postgres/pool.js';
import { EmbeddedSqliteDialect, openSqliteFile } from './sqlite/dialect.js';
import { refusingNul } from './refuse-nul.js';

/** What the dialects do differently, named by what the code needs rather than by dialect. */
export interface Capabilities {
  /**
   * ALTER COLUMN … SET/DROP NOT NULL exists (PostgreSQL). Without it (SQLite) a change of a column's
   * NOT NULL rebuilds the table.
   */
  readonly alterColumnNullability: boolean;
  /**
   * `SELECT … FOR UPDATE SKIP LOCKED` (PostgreSQL): concurrent claimers each lock a different candidate
   * instead of queueing behind one row. SQLite has one writer at a time, so its claims never race.
   */
  readonly skipLocked: boolean;
}

interface DatabaseBase {
  readonly kysely: Kysely<DB>;
  readonly capabilities: Capabilities;
  close(): Promise<void>;
}

export interface SqliteDatabase extends DatabaseBase {
  readonly dialect: 'sqlite';
  /** The raw connection behind `kysely` (same connection, same thread). */
  readonly sqlite: BetterSqlite3.Database;
}

export interface PostgresDatabase extends DatabaseBase {
  readonly dialect: 'postgres';
  /** The pool behind `kysely`. */
  readonly pool: pg.Pool;
  /** The schema holding the service's tables (`?schema=` in the URL); undefined: the server's default. */
  readonly schema: string | undefined;
}

export type Database = SqliteDatabase | PostgresDatabase;

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
    dialect: refusingNul(new EmbeddedSqliteDialect(sqlite, { busyTimeoutMs, busyRetryMs: options.busyRetryMs ?? 30_000 })),
  });
  return {
    kysely,
    dialect: 'sqlite',
    capabilities: { alterColumnNullability: false, skipLocked: false },
    sqlite,
    close: () => kysely.destroy(),
  };
}

function openPostgres(target: PostgresTarget, options: OpenOptions): PostgresDatabase {
  const pool = openPostgresPool(target, { onIdleClientError: options.onIdleClientError });
  // Kysely ends the pool on destroy().
  const kysely = new Kysely<DB>({ dialect: refusingNul(new PostgresDialect({ pool })) });
  return {
    kysely,
    dialect: 'postgres',
    capabilities: { alterColumnNullability: true, skipLocked: true },
    pool,
    schema: target.schema,
    close: () => kysely.destroy(),
  };
}

/**
 * The schema the service's tables are created in on PostgreSQL, created when `?schema=` names one that
 * does not exist yet. Kysely's migrator must be told it: left unqualified, it takes a migration table
 * in any other schema of the database (another service's, or another test's) for this one's.
 */
async function migrationSchema(db: PostgresDatabase): Promise<string> {
  if (db.schema !== undefined) {
    await sql`create schema if not exists ${sql.id(db.schema)}`.execute(db.kysely);
    return db.schema;
  }
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db.kysely);
  const schema = rows[0]?.schema;
  if (schema === null || schema === undefined)
    throw new Error('PostgreSQL: no schema of the search_path exists; create one or name it with ?schema= in IFW_DATABASE_URL');
  return schema;
}

/** Runs every pending migration; the same list on both dialects. Returns the names applied. */
export async function migrate(db: Database): Promise<string[]> {
  const migrationTableSchema = db.dialect === 'postgres' ? await migrationSchema(db) : undefined;
  const migrator = new Migrator({
    db: db.kysely,
    provider: migrationProvider,
    migrationTableName: 'ifw_migration',
    migrationLockTableName: 'ifw_migration_lock',
    ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) throw error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
