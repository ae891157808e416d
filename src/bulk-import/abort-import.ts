/**
 * A cancel or reset of a Processing request stops its running import first (storage/abort-board.ts):
 * on SQLite the import holds the write lock, so the flag is raised, the import rolls back at its next
 * batch and lets go of the lock, and the status write (which waits for the lock without blocking the
 * thread) goes through at once. On PostgreSQL the write needs no lock the import holds; the import's
 * lease watch stops it.
 */
import { abortBoard, claimOf } from '../storage/abort-board.js';
import type { Db } from '../storage/db.js';

export const requestAbortKey = (requestId: string): string => `request-${requestId}`;

/** Runs `write` (the status change) with the request's running import asked to stop meanwhile. */
export async function abortingImport<T>(db: Db, requestId: string, write: () => Promise<T>): Promise<T> {
  const board = abortBoard(db);
  if (board === undefined) return write();
  const row = await db
    .selectFrom('ifw_bulk_import_request')
    .select(['status', 'lease_owner', 'started_at'])
    .where('request_id', '=', requestId)
    .executeTakeFirst();
  if (row?.status !== 'Processing') return write();
  const key = requestAbortKey(requestId);
  board.raise(key, claimOf(row.lease_owner, row.started_at));
  try {
    return await write();
  } finally {
    board.lower(key);
  }
}
