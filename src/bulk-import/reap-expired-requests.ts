/**
 * Processing with an expired lease → Pending again (the worker died; another may try), or → Failed
 * once the request has been claimed maxAttempts times, so that a payload that kills its worker every
 * time cannot loop forever. One statement: the CASEs decide per row; the webhook events of the Failed
 * ones in the same transaction.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { withTransaction } from '../storage/transaction.js';
import { enqueueEvents } from '../webhooks/outbox.js';

export interface ReapArgs {
  readonly now: Date;
  readonly maxAttempts: number;
}

export interface Reaped {
  /** Back to Pending, attempts kept. */
  readonly requeued: readonly string[];
  /** Failed for good: interrupted maxAttempts times. */
  readonly failed: readonly string[];
}

export async function reapExpiredLeases(db: Db, { now, maxAttempts }: ReapArgs): Promise<Reaped> {
  const at = now.toISOString();
  const rows = await withTransaction(db, async (tx) => {
    const { rows } = await sql<{ request_id: string; status: string }>`
    update ifw_bulk_import_request
       set status = case when attempts < ${maxAttempts} then 'Pending' else 'Failed' end,
           error_message = case when attempts < ${maxAttempts} then error_message
                           else 'processing was interrupted ' || attempts || ' times (the worker stopped before finishing and its lease expired); not retried' end,
           processed_at = case when attempts < ${maxAttempts} then processed_at else ${at} end,
           ended_at = case when attempts < ${maxAttempts} then ended_at else ${at} end,
           lease_owner = null,
           lease_expires_at = null
     where status = 'Processing'
       and lease_expires_at < ${at}
    returning request_id, status`.execute(tx);
    await enqueueEvents(
      tx,
      'request',
      'Failed',
      rows.filter((r) => r.status === 'Failed').map((r) => r.request_id),
      now,
    );
    return rows;
  });
  return {
    requeued: rows.filter((r) => r.status === 'Pending').map((r) => r.request_id),
    failed: rows.filter((r) => r.status === 'Failed').map((r) => r.request_id),
  };
}
