/**
 * Retention cleanup: Completed, Failed and Cancelled requests are deleted retentionDays after they
 * ended, with their per-record errors and payload chunks; Pending and Processing never are. Idempotency
 * keys past their window go too, and webhook deliveries done (Delivered, Failed) as long ago. It deletes in small batches,
 * each its own transaction, so the write lock is never held long enough to stall submissions.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { deleteOldDeliveries } from '../webhooks/store.js';
import { deleteExpiredIdempotencyKeys } from './idempotency.js';

export interface RetentionArgs {
  readonly now: Date;
  readonly retentionDays: number;
  /** Requests per transaction. */
  readonly batchSize?: number;
}

const DAY_MS = 86_400_000;

/** Returns how many requests were deleted. */
export async function runRetentionCleanup(db: Db, { now, retentionDays, batchSize = 500 }: RetentionArgs): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
  let deleted = 0;
  for (;;) {
    const batch = await db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ request_id: string }>`
        select request_id
          from ifw_bulk_import_request
         where status in ('Completed', 'Failed', 'Cancelled')
           and ended_at < ${cutoff}
         limit ${batchSize}`.execute(trx);
      const ids = rows.map((r) => r.request_id);
      if (ids.length === 0) return 0;
      await trx.deleteFrom('ifw_bulk_import_error').where('request_id', 'in', ids).execute();
      await trx.deleteFrom('ifw_bulk_import_payload_chunk').where('request_id', 'in', ids).execute();
      const result = await trx
        .deleteFrom('ifw_bulk_import_request')
        .where('request_id', 'in', ids)
        .where('status', 'in', ['Completed', 'Failed', 'Cancelled'])
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    });
    deleted += batch;
    if (batch < batchSize) break;
  }
  await deleteAbandonedChunks(db, now);
  await deleteExpiredIdempotencyKeys(db, now);
  await deleteOldDeliveries(db, new Date(cutoff));
  return deleted;
}

/**
 * Chunks of a payload whose request was never stored: the service stopped while the body was arriving
 * (a refused or cut-off body removes its own). Request ids are time-ordered (UUIDv7), so a chunk whose
 * id is older than a day and has no request is from an upload that ended long ago.
 */
async function deleteAbandonedChunks(db: Db, now: Date): Promise<void> {
  const hex = Math.max(0, now.getTime() - DAY_MS)
    .toString(16)
    .padStart(12, '0');
  const bound = `${hex.slice(0, 8)}-${hex.slice(8)}-0000-0000-000000000000`;
  await sql`
    delete from ifw_bulk_import_payload_chunk
     where request_id < ${bound}
       and not exists (select 1 from ifw_bulk_import_request r where r.request_id = ifw_bulk_import_payload_chunk.request_id)`.execute(db);
}
