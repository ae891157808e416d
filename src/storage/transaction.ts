/** The one way a change that spans several statements is made atomic. */
import { asDb, type Db } from './db.js';

/** Runs `fn` in a transaction, or inside the caller's when `db` is already one (as `ifw apply` does). */
export async function withTransaction<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db);
  return db.transaction().execute((trx) => fn(asDb(trx, db.dialect)));
}
