/** What the console's dashboard reads about import runs. */
import type { MinuteCount } from '../bulk-import/page-queries.js';
import { sql } from 'kysely';
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

/**
 * The endpoints whose last `n` ended runs all Failed, with the last failure's time and message:
 * something keeps failing there, not once.
 */
export async function endpointsFailingRepeatedly(
  db: Db,
  n: number,
): Promise<{ endpointCode: string; lastEndedAt: string; lastError: string }[]> {
  const { rows } = await sql<{ endpoint_code: string; status: string; ended_at: string; error_message: string; rn: number | string }>`
    select endpoint_code, status, ended_at, error_message, rn
      from (select endpoint_code, status, ended_at, error_message,
                   row_number() over (partition by endpoint_code order by ended_at desc, run_id desc) as rn
              from ifw_import_run
             where status in ('Completed', 'Failed') and ended_at is not null) ranked
     where rn <= ${n}
     order by endpoint_code, rn`.execute(db);
  const byEndpoint = new Map<string, typeof rows>();
  for (const row of rows) byEndpoint.set(row.endpoint_code, [...(byEndpoint.get(row.endpoint_code) ?? []), row]);
  return [...byEndpoint.values()]
    .filter((runs) => runs.length === n && runs.every((r) => r.status === 'Failed'))
    .map((runs) => ({ endpointCode: runs[0]!.endpoint_code, lastEndedAt: runs[0]!.ended_at, lastError: runs[0]!.error_message }));
}
