/** What the console's dashboard reads about import runs. */
import type { Db } from '../storage/db.js';

/** Runs queued since `since`, per status. */
export async function countRunsByStatus(db: Db, since: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('ifw_import_run')
    .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('queued_at', '>=', since)
    .groupBy('status')
    .execute();
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}
