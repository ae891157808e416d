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

/** Completed runs queued since `since` whose fetch stopped short (they have warnings): "Completed with warnings". */
export async function countRunsWithWarnings(db: Db, since: string): Promise<number> {
  const row = await db
    .selectFrom('ifw_import_run')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('queued_at', '>=', since)
    .where('status', '=', 'Completed')
    .where('warnings', '<>', '[]')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
