/** Reading requests: one by id, the filtered and paged list, and the details sub-resource. */
import { notFound } from '../core/errors.js';
import type { FilterClause } from '../storage/filter.js';
import { REQUEST_COLUMNS, REQUEST_STATUSES, type RequestSummaryRow } from './model.js';
import { applyFilter } from '../storage/filter.js';
import type { Db } from '../storage/db.js';

export async function findRequest(db: Db, requestId: string): Promise<RequestSummaryRow | undefined> {
  return db.selectFrom('ifw_bulk_import_request').select(REQUEST_COLUMNS).where('request_id', '=', requestId).executeTakeFirst();
}

/** The column of each property $filter may use. */
export const REQUEST_COLUMN_OF = {
  status: 'status',
  integrationSortingOrder: 'integration_sorting_order',
  submittedAt: 'submitted_at',
  submittedBy: 'submitted_by',
  processedAt: 'processed_at',
} as const;

export const REQUEST_FILTERS = {
  status: { oneOf: REQUEST_STATUSES },
  integrationSortingOrder: 'integer',
  submittedAt: 'datetime',
  submittedBy: 'string',
  processedAt: 'datetime',
} as const;

export async function listRequests(
  db: Db,
  options: { filter: readonly FilterClause[]; skip: number; limit: number; descending: boolean },
): Promise<RequestSummaryRow[]> {
  const query = applyFilter(db.selectFrom('ifw_bulk_import_request').select(REQUEST_COLUMNS), options.filter, REQUEST_COLUMN_OF);
  const direction = options.descending ? 'desc' : 'asc';
  return query.orderBy('submitted_at', direction).orderBy('request_id', direction).limit(options.limit).offset(options.skip).execute();
}

export interface RequestDetails {
  requestId: string;
  integrationSortingOrder: number;
  status: string;
  submittedAt: string;
  submittedBy: string | null;
  startedAt: string | null;
  processedAt: string | null;
  attempts: number;
  payloadLength: number;
  recordCount: number;
  insertedCount: number;
  updatedCount: number;
  skippedCount: number;
  errorMessage: string;
  resubmittedFrom: string | null;
  resubmittedAs: string | null;
  errors: { recordNo: number | null; field: string | null; value: string | null; rule: string; message: string }[];
}

export async function findRequestDetails(db: Db, requestId: string): Promise<RequestDetails | undefined> {
  const row = await db
    .selectFrom('ifw_bulk_import_request')
    .select([
      'request_id',
      'integration_sorting_order',
      'status',
      'submitted_at',
      'submitted_by',
      'started_at',
      'processed_at',
      'attempts',
      'record_count',
      'inserted_count',
      'updated_count',
      'skipped_count',
      'error_message',
      'resubmitted_from',
      'resubmitted_as',
      // A payload stored in chunks has its length recorded; one stored whole is measured.
      (eb) => eb.fn.coalesce('payload_length', eb.fn<number>('length', ['payload'])).as('payload_length'),
    ])
    .where('request_id', '=', requestId)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const errors = await db
    .selectFrom('ifw_bulk_import_error')
    .select(['record_no', 'field', 'value', 'rule', 'message'])
    .where('request_id', '=', requestId)
    .orderBy('seq')
    .execute();
  return {
    requestId: row.request_id,
    integrationSortingOrder: row.integration_sorting_order,
    status: row.status,
    submittedAt: row.submitted_at,
    submittedBy: row.submitted_by,
    startedAt: row.started_at,
    processedAt: row.processed_at,
    attempts: row.attempts,
    payloadLength: row.payload_length,
    recordCount: row.record_count,
    insertedCount: row.inserted_count,
    updatedCount: row.updated_count,
    skippedCount: row.skipped_count,
    errorMessage: row.error_message,
    resubmittedFrom: row.resubmitted_from,
    resubmittedAs: row.resubmitted_as,
    errors: errors.map((e) => ({ recordNo: e.record_no, field: e.field, value: e.value, rule: e.rule, message: e.message })),
  };
}

/** The status of a request an action could not change, for the 409 that says why; 404 when there is none. */
export async function currentStatus(db: Db, requestId: string): Promise<string> {
  const row = await db.selectFrom('ifw_bulk_import_request').select('status').where('request_id', '=', requestId).executeTakeFirst();
  if (row === undefined) throw notFound(`No bulk import request ${requestId}.`);
  return row.status;
}
