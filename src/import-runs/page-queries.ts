/** What the console's dashboard reads about import runs. */
import type { MinuteCount } from '../bulk-import/page-queries.js';
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

/** Records imported (inserted or updated) per minute by runs that completed since `since` (`YYYY-MM-DDTHH:MM` keys). */
export async function runRecordsPerMinute(db: Db, since: string): Promise<MinuteCount[]> {
  const rows = await db
    .selectFrom('ifw_import_run')
    .select([
      (eb) => eb.fn<string>('substr', ['ended_at', eb.val(1), eb.val(16)]).as('minute'),
      (eb) => eb.fn.sum<number | string>(eb('inserted_count', '+', eb.ref('updated_count'))).as('n'),
    ])
    .where('ended_at', '>=', since)
    .where('status', '=', 'Completed')
    .groupBy('minute')
    .execute();
  return rows.map((r) => ({ minute: r.minute, count: Number(r.n ?? 0) }));
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
