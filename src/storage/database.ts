/**
 * Opening the database. `Database` is what the rest of the service is handed: the Kysely query
 * builder for everything, plus the raw SQLite handle where a hot path (the import writer) needs
 * prepared statements directly. The dialect seam is here and in `capabilities`.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator } from 'kysely';
import type { DatabaseTarget } from '../config.js';
import type { DB } from './schema.js';
import { migrationProvider } from './migrations.js';
import { EmbeddedSqliteDialect, openSqliteFile } from './sqlite.js';

export interface Database {
  readonly kysely: Kysely<DB>;
  readonly dialect: 'sqlite';
  /** The raw connection behind `kysely` (same connection, same thread). */
  readonly sqlite: BetterSqlite3.Database;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** The HTTP thread never blocks on a lock (0); a worker thread may (it has nothing else to do). */
  readonly busyTimeoutMs?: number;
  readonly busyRetryMs?: number;
}

export function openDatabase(target: DatabaseTarget, options: OpenOptions = {}): Database {
  if (target.kind !== 'sqlite') {
    throw new Error('PostgreSQL is not supported yet: set IFW_DATABASE_URL to a SQLite file or leave it unset');
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 0;
  const sqlite = openSqliteFile(target.file, busyTimeoutMs);
  const kysely = new Kysely<DB>({
    dialect: new EmbeddedSqliteDialect(sqlite, { busyTimeoutMs, busyRetryMs: options.busyRetryMs ?? 30_000 }),
  });
  return {
    kysely,
    dialect: 'sqlite',
    sqlite,
    close: () => kysely.destroy(),
  };
}

export async function migrate(db: Database): Promise<string[]> {
  const migrator = new Migrator({ db: db.kysely, provider: migrationProvider, migrationTableName: 'ifw_migration', migrationLockTableName: 'ifw_migration_lock' });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) throw error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
