/**
 * Bulk actions: cancel, reset, resubmit or delete every request a filter selects, as Sidekiq and
 * Hangfire retry or delete everything a filter shows. Each request is acted on by the same function as
 * a single action (cancel-request.ts, reset-request.ts, resubmit-request.ts, delete-request.ts), so
 * each state rule holds per request exactly as for one: a request its rule refuses is reported with
 * the reason and left as it is, and the others go ahead.
 *
 * Bounded: one call takes at most MAX_BULK requests (fewer with `top`), in order of request id, after
 * the id `after` when given. The answer says how many the filter matched, what happened to each
 * request it took, and whether more remain: `next` is the `after` of the following call. Continuing
 * from `next` never takes a request twice, also when a refused request still matches the filter.
 * The requests are acted on in transactions of BATCH each, so a call never holds a write lock long.
 */
import type { SelectQueryBuilder } from 'kysely';
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import type { Db } from '../storage/db.js';
import type { DB } from '../storage/schema.js';
import { withTransaction } from '../storage/transaction.js';
import type { Integration } from '../integrations/model.js';
import { cancelRequest } from './cancel-request.js';
import { deleteRequest } from './delete-request.js';
import { resetRequest } from './reset-request.js';
import { resubmitRequest } from './resubmit-request.js';

export const BULK_ACTIONS = ['cancel', 'reset', 'resubmit', 'delete'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

/** The most requests one call acts on. */
export const MAX_BULK = 1000;
/** Requests per transaction. */
const BATCH = 100;

/** What a bulk action does to one request, in the words of the answer. */
export const OUTCOME_OF = { cancel: 'Cancelled', reset: 'Reset', resubmit: 'Resubmitted', delete: 'Deleted' } as const;
export const BULK_OUTCOMES = ['Cancelled', 'Reset', 'Resubmitted', 'Deleted', 'Refused'] as const;
export type BulkOutcome = (typeof BULK_OUTCOMES)[number];

export interface BulkItem {
  readonly requestId: string;
  readonly outcome: BulkOutcome;
  /** The status after the action (null once deleted); for a refused request, its status. */
  readonly status: string | null;
  /** Resubmit: the new request. */
  readonly newRequestId: string | null;
  /** Why the request was refused (the single action's error), or null. */
  readonly error: { readonly code: string; readonly message: string } | null;
}

export interface BulkResult {
  readonly action: BulkAction;
  /** Requests the filter matched when the call began, on all pages (those before `after` included). */
  readonly matched: number;
  /** How many this call acted on or refused: the length of `results`. */
  readonly processed: number;
  readonly succeeded: number;
  readonly refused: number;
  readonly results: BulkItem[];
  /** Whether requests after the last one taken match too. */
  readonly more: boolean;
  /** The `after` of the next call when `more`, else null. */
  readonly next: string | null;
}

/** Narrows a select of requests to those a filter selects (the API's $filter, the console's filter form). */
export type RequestSelection = <O>(
  query: SelectQueryBuilder<DB, 'ifw_bulk_import_request', O>,
) => SelectQueryBuilder<DB, 'ifw_bulk_import_request', O>;

export interface BulkOptions {
  readonly select: RequestSelection;
  /** At most this many (1 to MAX_BULK; MAX_BULK when not given). */
  readonly top?: number;
  /** Start after this request id (the `next` of the previous call). */
  readonly after?: string;
  readonly clock: Clock;
  /** Who acts: the submitter of resubmitted requests. */
  readonly actor: string | null;
  readonly checkIntegration: (sortingOrder: number) => Promise<Integration>;
}

export async function bulkAct(db: Db, action: BulkAction, options: BulkOptions): Promise<BulkResult> {
  const top = options.top ?? MAX_BULK;
  if (!Number.isInteger(top) || top < 1 || top > MAX_BULK)
    throw new AppError(400, 'invalidRequest', `top must be a whole number from 1 to ${MAX_BULK}, got ${top}.`);
  const counted = await options
    .select(db.selectFrom('ifw_bulk_import_request'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  let ids = options.select(db.selectFrom('ifw_bulk_import_request').select('request_id'));
  if (options.after !== undefined) ids = ids.where('request_id', '>', options.after);
  const taken = (
    await ids
      .orderBy('request_id')
      .limit(top + 1)
      .execute()
  ).map((r) => r.request_id);
  const more = taken.length > top;
  const selected = taken.slice(0, top);

  const results: BulkItem[] = [];
  for (let i = 0; i < selected.length; i += BATCH) {
    const batch = selected.slice(i, i + BATCH);
    // The integration checks of Resubmit read through the database's own handle: made before the
    // transaction (SQLite's one connection is the transaction's until it ends), their answers kept.
    const batchOptions = action === 'resubmit' ? { ...options, checkIntegration: await checkedIntegrations(db, batch, options) } : options;
    results.push(
      ...(await withTransaction(db, async (tx) => {
        const done: BulkItem[] = [];
        for (const requestId of batch) done.push(await actOn(tx, action, requestId, batchOptions));
        return done;
      })),
    );
  }
  const succeeded = results.filter((r) => r.outcome !== 'Refused').length;
  return {
    action,
    matched: Number(counted.n),
    processed: results.length,
    succeeded,
    refused: results.length - succeeded,
    results,
    more,
    next: more ? (selected[selected.length - 1] ?? null) : null,
  };
}

/** One request, by the single action's own function; its refusal (an error below 500) is the request's outcome. */
async function actOn(db: Db, action: BulkAction, requestId: string, options: BulkOptions): Promise<BulkItem> {
  const item = (status: string | null, newRequestId: string | null = null): BulkItem => ({
    requestId,
    outcome: OUTCOME_OF[action],
    status,
    newRequestId,
    error: null,
  });
  try {
    switch (action) {
      case 'cancel':
        return item((await cancelRequest(db, requestId, options.clock)).status);
      case 'reset':
        return item((await resetRequest(db, requestId)).status);
      case 'resubmit': {
        const accepted = await resubmitRequest(db, requestId, {
          clock: options.clock,
          submittedBy: options.actor,
          checkIntegration: options.checkIntegration,
        });
        return item(await statusOf(db, requestId), accepted.requestId);
      }
      case 'delete':
        await deleteRequest(db, requestId);
        return item(null);
      default: {
        const never: never = action;
        throw new Error(`unknown bulk action ${String(never)}`);
      }
    }
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    return {
      requestId,
      outcome: 'Refused',
      status: await statusOf(db, requestId),
      newRequestId: null,
      error: { code: err.code, message: err.message },
    };
  }
}

async function statusOf(db: Db, requestId: string): Promise<string | null> {
  const row = await db.selectFrom('ifw_bulk_import_request').select('status').where('request_id', '=', requestId).executeTakeFirst();
  return row?.status ?? null;
}

/** The integration check of each integration the requests name, made now; the function answers them again. */
async function checkedIntegrations(
  db: Db,
  requestIds: readonly string[],
  options: BulkOptions,
): Promise<(sortingOrder: number) => Promise<Integration>> {
  const rows = await db
    .selectFrom('ifw_bulk_import_request')
    .select('integration_sorting_order')
    .distinct()
    .where('request_id', 'in', requestIds)
    .execute();
  const checked = new Map<number, { integration?: Integration; error?: unknown }>();
  for (const { integration_sorting_order: sortingOrder } of rows) {
    try {
      checked.set(sortingOrder, { integration: await options.checkIntegration(sortingOrder) });
    } catch (error) {
      checked.set(sortingOrder, { error });
    }
  }
  return async (sortingOrder) => {
    const found = checked.get(sortingOrder) ?? { integration: await options.checkIntegration(sortingOrder) };
    if (found.integration === undefined) throw found.error;
    return found.integration;
  };
}
