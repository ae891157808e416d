/** The one way a change that spans several statements is made atomic. */
import type { Database } from './database.js';

/** Runs `fn` in a transaction, or inside the caller's when `db` is already one (as `ifw apply` does). */
export async function withTransaction<T>(db: Database, fn: (tx: Database) => Promise<T>): Promise<T> {
  if (db.kysely.isTransaction) return fn(db);
  return db.kysely.transaction().execute((trx) => fn({ ...db, kysely: trx }));
}
