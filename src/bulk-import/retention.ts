/**
 * Retention cleanup: Completed, Failed and Cancelled requests are deleted retentionDays after they
 * ended, with their per-record errors; Pending and Processing never are. It deletes in small batches,
 * each its own transaction, so the write lock is never held long enough to stall submissions.
 */
import { sql } from 'kysely';
import type { Database } from '../storage/database.js';

export interface RetentionArgs {
  readonly now: Date;
  readonly retentionDays: number;
  /** Requests per transaction. */
  readonly batchSize?: number;
}

const DAY_MS = 86_400_000;

/** Returns how many requests were deleted. */
export async function runRetentionCleanup(db: Database, { now, retentionDays, batchSize = 500 }: RetentionArgs): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
  let deleted = 0;
  for (;;) {
    const batch = await db.kysely.transaction().execute(async (trx) => {
      const { rows } = await sql<{ request_id: string }>`
        select request_id
          from ifw_bulk_import_request
         where status in ('Completed', 'Failed', 'Cancelled')
           and ended_at < ${cutoff}
         limit ${batchSize}`.execute(trx);
      const ids = rows.map((r) => r.request_id);
      if (ids.length === 0) return 0;
      await trx.deleteFrom('ifw_bulk_import_error').where('request_id', 'in', ids).execute();
      const result = await trx
        .deleteFrom('ifw_bulk_import_request')
        .where('request_id', 'in', ids)
        .where('status', 'in', ['Completed', 'Failed', 'Cancelled'])
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    });
    deleted += batch;
    if (batch < batchSize) return deleted;
  }
}
