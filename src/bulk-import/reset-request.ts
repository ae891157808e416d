/**
 * Processing (stuck) → Pending, by an administrator, in one statement, with a fresh set of attempts.
 * Clearing the lease means the worker that held the request can no longer complete or fail it: its
 * fenced final write finds no row and its import transaction rolls back. A running import is asked to
 * stop at its next batch first (abort-import.ts).
 */
import { conflict } from '../core/errors.js';
import { abortingImport } from './abort-import.js';
import { currentStatus } from './queries.js';
import { REQUEST_COLUMNS, type RequestSummaryRow } from './model.js';
import type { Db } from '../storage/db.js';

/** Processing (stuck) → Pending, with a fresh set of attempts. */
export async function resetRequest(db: Db, requestId: string): Promise<RequestSummaryRow> {
  const row = await abortingImport(db, requestId, () =>
    db
      .updateTable('ifw_bulk_import_request')
      .set({ status: 'Pending', lease_owner: null, lease_expires_at: null, started_at: null, attempts: 0, error_message: '' })
      .where('request_id', '=', requestId)
      .where('status', '=', 'Processing')
      .returning(REQUEST_COLUMNS)
      .executeTakeFirst(),
  );
  if (row !== undefined) return row;
  const status = await currentStatus(db, requestId);
  throw conflict('invalidStatusTransition', `Request ${requestId} is ${status}; only a Processing request can be reset to Pending.`);
}
