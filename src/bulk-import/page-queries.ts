/**
 * What the console's request pages read: one page of the list by keyset (newest first, so that a page
 * costs the same with a million requests as with ten) and the counts the dashboard shows.
 */
import type { Db } from '../storage/db.js';
import type { RequestSelection } from './bulk-actions.js';
import { REQUEST_COLUMNS, type RequestStatus, type RequestSummaryRow } from './model.js';

export interface RequestListQuery {
  readonly status?: RequestStatus;
  readonly integrationSortingOrder?: number;
  /** Submitted by any of these (`user:admin`, `application:admin`). */
  readonly submittedBy?: readonly string[];
  /** Submitted at or after (ISO). */
  readonly from?: string;
  /** Submitted before (ISO). */
  readonly to?: string;
  /** The last row of the previous page: this page starts after it. */
  readonly after?: { readonly submittedAt: string; readonly requestId: string };
  readonly limit: number;
}

export type RequestListRow = RequestSummaryRow & { submitted_by: string | null };

/** The requests the console's filter selects (status, integration, submitter, time range): the list's and its bulk actions'. */
export function consoleSelection(q: Omit<RequestListQuery, 'after' | 'limit'>): RequestSelection {
  return (start) => {
    let query = start;
    if (q.status !== undefined) query = query.where('status', '=', q.status);
    if (q.integrationSortingOrder !== undefined) query = query.where('integration_sorting_order', '=', q.integrationSortingOrder);
    const by = q.submittedBy;
    if (by !== undefined)
      query = by.length === 1 && by[0] !== undefined ? query.where('submitted_by', '=', by[0]) : query.where('submitted_by', 'in', by);
    if (q.from !== undefined) query = query.where('submitted_at', '>=', q.from);
    if (q.to !== undefined) query = query.where('submitted_at', '<', q.to);
    return query;
  };
}

export async function listRequestPage(db: Db, q: RequestListQuery): Promise<RequestListRow[]> {
  let query = consoleSelection(q)(db.selectFrom('ifw_bulk_import_request').select([...REQUEST_COLUMNS, 'submitted_by']));
  const after = q.after;
  if (after !== undefined)
    query = query.where((eb) =>
      eb.or([
        eb('submitted_at', '<', after.submittedAt),
        eb.and([eb('submitted_at', '=', after.submittedAt), eb('request_id', '<', after.requestId)]),
      ]),
    );
  return query.orderBy('submitted_at', 'desc').orderBy('request_id', 'desc').limit(q.limit).execute();
}

/**
 * Of the submitters `user:admin` and `application:admin` a plain name stands for, those who submitted
 * anything (one index probe each): the list then filters by one value, which its index serves in
 * order, and by both only when both exist.
 */
export async function submittersPresent(db: Db, labels: readonly string[]): Promise<string[]> {
  const present = await Promise.all(
    labels.map(async (label) =>
      (await db
        .selectFrom('ifw_bulk_import_request')
        .select('submitted_by')
        .where('submitted_by', '=', label)
        .limit(1)
        .executeTakeFirst()) === undefined
        ? undefined
        : label,
    ),
  );
  const found = present.filter((l): l is string => l !== undefined);
  return found.length === 0 ? labels.slice(0, 1) : found;
}

/** Requests submitted since `since`, per status. */
export async function countRequestsByStatus(db: Db, since: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('ifw_bulk_import_request')
    .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('submitted_at', '>=', since)
    .groupBy('status')
    .execute();
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

export interface MinuteCount {
  /** `YYYY-MM-DDTHH:MM` (UTC). */
  readonly minute: string;
  readonly count: number;
}

/** Requests submitted per minute since `since`. */
export async function requestsPerMinute(db: Db, since: string): Promise<MinuteCount[]> {
  const rows = await db
    .selectFrom('ifw_bulk_import_request')
    .select([
      (eb) => eb.fn<string>('substr', ['submitted_at', eb.val(1), eb.val(16)]).as('minute'),
      (eb) => eb.fn.countAll<number | string>().as('n'),
    ])
    .where('submitted_at', '>=', since)
    .groupBy('minute')
    .execute();
  return rows.map((r) => ({ minute: r.minute, count: Number(r.n) }));
}

/** Records imported (inserted or updated) per minute by requests that ended since `since`. */
export async function recordsPerMinute(db: Db, since: string): Promise<MinuteCount[]> {
  const rows = await db
    .selectFrom('ifw_bulk_import_request')
    .select([
      (eb) => eb.fn<string>('substr', ['processed_at', eb.val(1), eb.val(16)]).as('minute'),
      (eb) => eb.fn.sum<number | string>(eb('inserted_count', '+', eb.ref('updated_count'))).as('n'),
    ])
    // ended_at is indexed; a Completed request ended when it was processed.
    .where('ended_at', '>=', since)
    .where('status', '=', 'Completed')
    .groupBy('minute')
    .execute();
  return rows.map((r) => ({ minute: r.minute, count: Number(r.n ?? 0) }));
}

/** The queue now: Pending and Processing requests, and when the oldest Pending one was submitted (null: none). */
export async function queueDepth(db: Db): Promise<{ pending: number; processing: number; oldestPendingAt: string | null }> {
  const [counts, oldest] = await Promise.all([
    db
      .selectFrom('ifw_bulk_import_request')
      .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('status', 'in', ['Pending', 'Processing'])
      .groupBy('status')
      .execute(),
    db
      .selectFrom('ifw_bulk_import_request')
      .select('submitted_at')
      .where('status', '=', 'Pending')
      .orderBy('submitted_at')
      .limit(1)
      .executeTakeFirst(),
  ]);
  const n = (status: string): number => Number(counts.find((c) => c.status === status)?.n ?? 0);
  return { pending: n('Pending'), processing: n('Processing'), oldestPendingAt: oldest?.submitted_at ?? null };
}

/** Pending requests submitted before `before`. */
export async function countPendingBefore(db: Db, before: string): Promise<number> {
  const row = await db
    .selectFrom('ifw_bulk_import_request')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status', '=', 'Pending')
    .where('submitted_at', '<', before)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
