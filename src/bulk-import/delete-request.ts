/**
 * Deleting an ended request (Completed, Failed or Cancelled), by an administrator: the request, its
 * payload chunks, its per-record errors and the Idempotency-Keys that answer with it, in one
 * transaction. A Pending or Processing request is refused (409 requestNotEnded): it is still the
 * processor's; cancel it first. The row is deleted by a statement that names the ended statuses, so a
 * request that starts meanwhile is never deleted.
 */
import { AppError } from '../core/errors.js';
import type { Db } from '../storage/db.js';
import { withTransaction } from '../storage/transaction.js';
import { currentStatus } from './queries.js';

export const ENDED_STATUSES = ['Completed', 'Failed', 'Cancelled'] as const;

export const notEnded = (requestId: string, status: string): AppError =>
  new AppError(
    409,
    'requestNotEnded',
    `Request ${requestId} is ${status}; only a Completed, Failed or Cancelled request can be deleted. Cancel it first if it must not be imported.`,
  );

/** Deletes an ended request and everything stored with it; answers the status it had. */
export async function deleteRequest(db: Db, requestId: string): Promise<{ status: string }> {
  return withTransaction(db, async (tx) => {
    const deleted = await tx
      .deleteFrom('ifw_bulk_import_request')
      .where('request_id', '=', requestId)
      .where('status', 'in', ENDED_STATUSES)
      .returning('status')
      .executeTakeFirst();
    if (deleted === undefined) throw notEnded(requestId, await currentStatus(tx, requestId));
    await tx.deleteFrom('ifw_bulk_import_error').where('request_id', '=', requestId).execute();
    await tx.deleteFrom('ifw_bulk_import_payload_chunk').where('request_id', '=', requestId).execute();
    await tx.deleteFrom('ifw_idempotency_key').where('request_id', '=', requestId).execute();
    return { status: deleted.status };
  });
}
