/**
 * Administrator actions on a request, one statement each. Cancelling or resetting a Processing
 * request clears its lease, so the worker that held it can no longer complete or fail it: its
 * fenced final write finds no row and its import transaction rolls back.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.js';
import { conflict, notFound } from '../core/errors.js';
import type { DB } from '../storage/schema.js';
import { REQUEST_COLUMNS, type RequestSummaryRow } from './model.js';

async function currentStatus(db: Kysely<DB>, requestId: string): Promise<string> {
  const row = await db.selectFrom('ifw_bulk_import_request').select('status').where('request_id', '=', requestId).executeTakeFirst();
  if (row === undefined) throw notFound(`No bulk import request ${requestId}.`);
  return row.status;
}

/** Pending or Processing → Cancelled. */
export async function cancelRequest(db: Kysely<DB>, requestId: string, clock: Clock): Promise<RequestSummaryRow> {
  const now = clock().toISOString();
  const row = await db
    .updateTable('ifw_bulk_import_request')
    .set({ status: 'Cancelled', ended_at: now, lease_owner: null, lease_expires_at: null, error_message: 'Cancelled by an administrator.' })
    .where('request_id', '=', requestId)
    .where('status', 'in', ['Pending', 'Processing'])
    .returning(REQUEST_COLUMNS)
    .executeTakeFirst();
  if (row !== undefined) return row;
  const status = await currentStatus(db, requestId);
  throw conflict('invalidStatusTransition', `Request ${requestId} is ${status}; only Pending or Processing requests can be cancelled.`);
}

/** Processing (stuck) → Pending, with a fresh set of attempts. */
export async function resetRequest(db: Kysely<DB>, requestId: string): Promise<RequestSummaryRow> {
  const row = await db
    .updateTable('ifw_bulk_import_request')
    .set({ status: 'Pending', lease_owner: null, lease_expires_at: null, started_at: null, attempts: 0, error_message: '' })
    .where('request_id', '=', requestId)
    .where('status', '=', 'Processing')
    .returning(REQUEST_COLUMNS)
    .executeTakeFirst();
  if (row !== undefined) return row;
  const status = await currentStatus(db, requestId);
  throw conflict('invalidStatusTransition', `Request ${requestId} is ${status}; only a Processing request can be reset to Pending.`);
}
