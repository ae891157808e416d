/**
 * What every command that works on the database shares, built in one place: the configuration, the
 * clock, the logger, the database (opened and migrated) and the key of stored secrets. `ifw serve`
 * builds the service on it (service.ts); `ifw worker`, `apply`, `run-endpoint`, `migrate` and the
 * user and application commands use it directly.
 */
import { systemClock, type Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { createLogger, type Logger } from '../core/logger.js';
import { createSecretBox, type SecretBox } from '../rest-source/secrets.js';
import { migrate, openDatabase, type Database } from '../storage/database.js';

export interface World {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly db: Database;
  /** The migrations this opening applied. */
  readonly migrated: readonly string[];
  /** Seals and opens stored secrets (REST API connection credentials); the key is read on first use. */
  readonly secrets: SecretBox;
  close(): Promise<void>;
}

export interface WorldOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /**
   * SQLite: how long a statement waits for a lock held by another process (a running service), blocking
   * this thread. 0 (the default) for a process that serves HTTP, whose event loop must never block: it
   * retries asynchronously instead.
   */
  readonly busyTimeoutMs?: number;
}

/** Opens and migrates the database. Migrating at every start is safe with many processes: the migrator takes a lock. */
export async function openWorld(config: Config, options: WorldOptions = {}): Promise<World> {
  // Created when first used: a command that logs nothing opens no log stream.
  let logger = options.logger;
  const log = (): Logger => (logger ??= createLogger(config));
  const db = openDatabase(config.database, {
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
    onIdleClientError: (err) => log().warn({ err }, 'a pooled PostgreSQL connection failed while idle; it is replaced when needed'),
  });
  let migrated: string[];
  try {
    migrated = await migrate(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  let secrets: SecretBox | undefined;
  return {
    config,
    clock: options.clock ?? systemClock,
    get logger() {
      return log();
    },
    db,
    migrated,
    get secrets() {
      return (secrets ??= createSecretBox(config));
    },
    close: () => db.close(),
  };
}

/** Opens the world for one piece of work and closes it afterwards, whatever happens. */
export async function withWorld<T>(config: Config, options: WorldOptions, work: (world: World) => Promise<T>): Promise<T> {
  const world = await openWorld(config, options);
  try {
    return await work(world);
  } finally {
    await world.close();
  }
}
