/**
 * The embedded SQLite dialect. It differs from Kysely's stock driver in three ways that matter here:
 * write transactions start with BEGIN IMMEDIATE (a writer never upgrades a read lock and deadlocks),
 * SQLITE_BUSY is retried asynchronously (so while an import on the worker thread holds the write lock
 * the HTTP event loop keeps serving instead of blocking in busy_timeout), and prepared statements are
 * cached.
 */
import BetterSqlite3 from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { CompiledQuery, type DatabaseConnection, type Dialect, type Driver, type QueryResult } from 'kysely';
import { AppError } from '../../core/errors.js';
import { dialectParts, prepared } from '../connection.js';

export interface SqliteOptions {
  /** Milliseconds SQLite itself waits for a lock, blocking the thread (0 on the HTTP thread). */
  readonly busyTimeoutMs: number;
  /** How long SQLITE_BUSY is retried asynchronously before the operation fails with 503. */
  readonly busyRetryMs: number;
}

export function openSqliteFile(file: string, busyTimeoutMs: number): BetterSqlite3.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new BetterSqlite3(file, { timeout: busyTimeoutMs });
  db.pragma('journal_mode = WAL');
  // FULL: a commit is on disk before it returns, so a 202 is never answered for a row a crash could lose.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  return db;
}

const isBusy = (err: unknown): boolean =>
  err instanceof BetterSqlite3.SqliteError && (err.code === 'SQLITE_BUSY' || err.code.startsWith('SQLITE_BUSY_'));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn` (synchronous work on the connection) again while SQLite answers SQLITE_BUSY, waiting a
 * little longer each time without blocking the thread; after `retryMs`, 503 "the database is busy".
 */
export async function retryBusy<T>(fn: () => T, retryMs: number): Promise<T> {
  const deadline = Date.now() + retryMs;
  let wait = 1;
  for (;;) {
    try {
      return fn();
    } catch (err) {
      if (!isBusy(err)) throw err;
      if (Date.now() >= deadline) {
        throw new AppError(503, 'serviceUnavailable', 'The database is busy; try again shortly.');
      }
      await sleep(wait);
      wait = Math.min(wait * 2, 25);
    }
  }
}

class SqliteConnection implements DatabaseConnection {
  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly options: SqliteOptions,
  ) {}

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    return retryBusy(() => {
      const stmt = prepared(this.db, compiled.sql);
      const params = compiled.parameters as unknown[];
      if (stmt.reader) return { rows: stmt.all(...params) as R[] };
      const { changes, lastInsertRowid } = stmt.run(...params);
      return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
    }, this.options.busyRetryMs);
  }

  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not used with SQLite');
  }
}

class Mutex {
  #tail: Promise<void> = Promise.resolve();
  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => (release = resolve));
    const ready = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => next);
    return ready;
  }
}

class SqliteDriver implements Driver {
  readonly #mutex = new Mutex();
  readonly #connection: SqliteConnection;
  #release: (() => void) | undefined;

  constructor(
    private readonly db: BetterSqlite3.Database,
    options: SqliteOptions,
  ) {
    this.#connection = new SqliteConnection(db, options);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    this.#release = await this.#mutex.lock();
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    release?.();
    return Promise.resolve();
  }

  destroy(): Promise<void> {
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }
}

/** Kysely's SQLite dialect with this driver. */
export const embeddedSqliteDialect = (db: BetterSqlite3.Database, options: SqliteOptions): Dialect => ({
  ...dialectParts.sqlite,
  createDriver: () => new SqliteDriver(db, options),
});
