/**
 * A cancel or reset of a Processing request stops its running import first (storage/abort-board.ts):
 * on SQLite the import holds the write lock, so the flag is raised, the import rolls back at its next
 * batch and lets go of the lock, and the status write (which waits for the lock without blocking the
 * thread) goes through at once. On PostgreSQL the write needs no lock the import holds; the import's
 * lease watch stops it.
 */
import { abortBoard, ANY_CLAIM, claimOf, whileRaised } from '../storage/abort-board.js';
import type { Db } from '../storage/db.js';

export const requestAbortKey = (requestId: string): string => `request-${requestId}`;

/**
 * Runs `write` (the status change) with the request's running import asked to stop meanwhile. A
 * Pending request may be claimed while the write waits for the lock (the claim commits, and the import
 * takes the lock before the write's next try): `anyClaim` (a cancel) flags whichever claim that is.
 */
export async function abortingImport<T>(db: Db, requestId: string, write: () => Promise<T>, anyClaim = false): Promise<T> {
  if (abortBoard(db) === undefined) return write();
  const row = await db
    .selectFrom('ifw_bulk_import_request')
    .select(['status', 'lease_owner', 'started_at'])
    .where('request_id', '=', requestId)
    .executeTakeFirst();
  const pending = anyClaim && row?.status === 'Pending';
  if (row?.status !== 'Processing' && !pending) return write();
  return whileRaised(db, requestAbortKey(requestId), pending ? ANY_CLAIM : claimOf(row.lease_owner, row.started_at), write);
}
