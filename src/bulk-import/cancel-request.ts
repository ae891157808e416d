/**
 * Pending or Processing → Cancelled, by an administrator, in one statement. Cancelling a Processing
 * request clears its lease, so the worker that held it can no longer complete or fail it: its fenced
 * final write finds no row and its import transaction rolls back. A running import is asked to stop
 * at its next batch first (abort-import.ts), so on SQLite the cancel answers at once instead of
 * waiting behind the import's write lock. Its webhook events are written in the same transaction.
 */
import type { Clock } from '../core/clock.js';
import { cancelledByAdministrator } from '../job-queue/model.js';
import { abortingImport } from './abort-import.js';
import { conflict } from '../core/errors.js';
import { REQUEST_COLUMNS, type RequestSummaryRow } from './model.js';
import { currentStatus } from './queries.js';
import type { Db } from '../storage/db.js';
import { withTransaction } from '../storage/transaction.js';
import { enqueueEvents } from '../webhooks/outbox.js';

/** Pending or Processing → Cancelled. */
export async function cancelRequest(db: Db, requestId: string, clock: Clock): Promise<RequestSummaryRow> {
  const row = await abortingImport(
    db,
    requestId,
    () =>
      withTransaction(db, async (tx) => {
        const at = clock();
        const cancelled = await tx
          .updateTable('ifw_bulk_import_request')
          .set(cancelledByAdministrator(at))
          .where('request_id', '=', requestId)
          .where('status', 'in', ['Pending', 'Processing'])
          .returning(REQUEST_COLUMNS)
          .executeTakeFirst();
        if (cancelled !== undefined) await enqueueEvents(tx, 'request', 'Cancelled', [requestId], at);
        return cancelled;
      }),
    true,
  );
  if (row !== undefined) return row;
  const status = await currentStatus(db, requestId);
  throw conflict('invalidStatusTransition', `Request ${requestId} is ${status}; only Pending or Processing requests can be cancelled.`);
}
