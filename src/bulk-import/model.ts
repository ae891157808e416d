/**
 * The Bulk Import Request as the API shows it: exactly the spec's properties (section 2.1), nothing
 * more. Richer detail (counts, per-record errors, attempts) is the `details` sub-resource.
 */
import type { Selectable } from 'kysely';
import type { BulkImportRequestRow } from '../storage/schema.js';

export const REQUEST_STATUSES = ['Pending', 'Processing', 'Completed', 'Failed', 'Cancelled'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

export interface BulkImportRequest {
  requestId: string;
  integrationSortingOrder: number;
  status: RequestStatus;
  submittedAt: string;
  processedAt: string | null;
  recordCount: number;
  errorMessage: string;
}

export type RequestRow = Selectable<BulkImportRequestRow>;

/** The columns the API representation needs (never the payload). */
export const REQUEST_COLUMNS = [
  'request_id',
  'integration_sorting_order',
  'status',
  'submitted_at',
  'processed_at',
  'record_count',
  'error_message',
] as const;

export type RequestSummaryRow = Pick<RequestRow, (typeof REQUEST_COLUMNS)[number]>;

export function toApiRequest(row: RequestSummaryRow): BulkImportRequest {
  return {
    requestId: row.request_id,
    integrationSortingOrder: row.integration_sorting_order,
    status: row.status as RequestStatus,
    submittedAt: row.submitted_at,
    processedAt: row.processed_at,
    recordCount: row.record_count,
    errorMessage: row.error_message,
  };
}

/** A Bulk Import Request as the worker that claimed it sees it. */
export interface ClaimedRequest {
  readonly requestId: string;
  readonly integrationSortingOrder: number;
  /** The payload, or '' when it is stored in chunks. */
  readonly payload: string;
  /** How many chunks hold the payload (0: `payload` is it). */
  readonly payloadChunks: number;
  /** The length of a payload stored in chunks, in characters (null for one stored whole). */
  readonly payloadLength: number | null;
  /** How many times the request has been claimed, this claim included. */
  readonly attempts: number;
  readonly leaseOwner: string;
  readonly leaseExpiresAt: string;
  readonly submittedAt: string;
  /** When this claim took it. */
  readonly startedAt: string;
}
