/**
 * Retention of import runs, as for bulk requests (bulk-import/retention.ts): Completed, Failed and
 * Cancelled runs are deleted runRetentionDays after they ended, with their pages and per-record errors;
 * Queued and Running runs never are. Small batches, each its own transaction, so the write lock is never
 * held long. Run by the retention cleanup entry (main/jobs.ts hands it in).
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';

export interface RunRetentionArgs {
  readonly now: Date;
  readonly retentionDays: number;
  /** Runs per transaction. */
  readonly batchSize?: number;
}

const DAY_MS = 86_400_000;
const ENDED = ['Completed', 'Failed', 'Cancelled'] as const;

/** Returns how many runs were deleted. */
export async function runRunRetention(db: Db, { now, retentionDays, batchSize = 200 }: RunRetentionArgs): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
  let deleted = 0;
  for (;;) {
    const batch = await db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ run_id: string }>`
        select run_id
          from ifw_import_run
         where status in ('Completed', 'Failed', 'Cancelled')
           and ended_at < ${cutoff}
         limit ${batchSize}`.execute(trx);
      const ids = rows.map((r) => r.run_id);
      if (ids.length === 0) return 0;
      await trx.deleteFrom('ifw_import_run_error').where('run_id', 'in', ids).execute();
      await trx.deleteFrom('ifw_import_run_page').where('run_id', 'in', ids).execute();
      const result = await trx.deleteFrom('ifw_import_run').where('run_id', 'in', ids).where('status', 'in', ENDED).executeTakeFirst();
      return Number(result.numDeletedRows);
    });
    deleted += batch;
    if (batch < batchSize) break;
  }
  return deleted;
}
