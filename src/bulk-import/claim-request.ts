/**
 * Pending → Processing: a worker takes the oldest Pending request under a lease, in one statement.
 * The subquery picks the candidate and the outer `status = 'Pending'` re-checks it, so two workers
 * racing for the same row cannot both win: the loser's UPDATE matches nothing. On PostgreSQL the
 * subquery locks its pick `for update skip locked`, so concurrent claimers pick different rows
 * instead of all losing to the first (see claimLock).
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { addMs, claimLock } from '../job-queue/model.js';
import type { ClaimedRequest } from './model.js';

export interface ClaimRequestArgs {
  /** The lease token: every later write by this worker is fenced by it. */
  readonly owner: string;
  readonly now: Date;
  readonly leaseMs: number;
}

interface ClaimedRow {
  request_id: string;
  integration_sorting_order: number;
  payload: string;
  payload_chunks: number;
  payload_length: number | null;
  attempts: number;
  lease_owner: string;
  lease_expires_at: string;
  submitted_at: string;
  started_at: string;
}

export async function claimNextRequest(db: Db, { owner, now, leaseMs }: ClaimRequestArgs): Promise<ClaimedRequest | undefined> {
  const { rows } = await sql<ClaimedRow>`
    update ifw_bulk_import_request
       set status = 'Processing',
           lease_owner = ${owner},
           lease_expires_at = ${addMs(now, leaseMs)},
           attempts = attempts + 1,
           started_at = ${now.toISOString()}
     where request_id = (select request_id
                           from ifw_bulk_import_request
                          where status = 'Pending'
                          order by submitted_at, request_id
                          limit 1
                          ${claimLock(db)})
       and status = 'Pending'
    returning request_id, integration_sorting_order, payload, payload_chunks, payload_length, attempts, lease_owner, lease_expires_at,
              submitted_at, started_at`.execute(db);
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    requestId: row.request_id,
    integrationSortingOrder: row.integration_sorting_order,
    payload: row.payload,
    payloadChunks: Number(row.payload_chunks),
    payloadLength: row.payload_length === null ? null : Number(row.payload_length),
    attempts: row.attempts,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    submittedAt: row.submitted_at,
    startedAt: row.started_at,
  };
}
