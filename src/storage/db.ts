/**
 * The one handle storage functions take first, in Kysely's own style (`function findX(db: Db, id)`):
 * the Kysely query builder over the service's tables, a transaction's as well as the database's, with
 * the dialect it speaks. `db.dialect === 'postgres'` is the one way to ask which dialect runs; raw
 * driver handles exist only in `sqlite/` and `postgres/` folders (and the composition root).
 */
import type { Kysely } from 'kysely';
import type { DB } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export type Db = Kysely<DB> & { readonly dialect: Dialect };

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

const capabilities: Record<Dialect, Capabilities> = {
  sqlite: { alterColumnNullability: false, skipLocked: false },
  postgres: { alterColumnNullability: true, skipLocked: true },
};

export const capabilitiesOf = (db: { readonly dialect: Dialect }): Capabilities => capabilities[db.dialect];

/** `kysely` (a transaction of the database, say) as a `Db` of the given dialect. */
export const asDb = (kysely: Kysely<DB>, dialect: Dialect): Db => Object.assign(kysely, { dialect });
