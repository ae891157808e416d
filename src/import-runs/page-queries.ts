/** What the console's dashboard reads about import runs. */
import type { Kysely } from 'kysely';
import type { DB } from '../storage/schema.js';

/** Runs queued since `since`, per status. */
export async function countRunsByStatus(db: Kysely<DB>, since: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('ifw_import_run')
    .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('queued_at', '>=', since)
    .groupBy('status')
    .execute();
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}
