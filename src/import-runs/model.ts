/**
 * Import runs: one record per pull from a REST API endpoint (all its pages become one import). The
 * run is its own small queue: Queued → Running (claimed under a lease) → Completed or Failed;
 * Cancelled is kept in the vocabulary for an administrator's action.
 */
import type { Selectable } from 'kysely';
import type { RunStopReason } from '../rest-source/model.js';
import type { ImportRunPageRow, ImportRunRow } from '../storage/schema.js';

export const RUN_STATUSES = ['Queued', 'Running', 'Completed', 'Failed', 'Cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const RUN_TRIGGERS = ['manual', 'schedule'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

/** Ended runs: nothing changes them any more. */
export const isFinalStatus = (status: RunStatus): boolean => status === 'Completed' || status === 'Failed' || status === 'Cancelled';

/**
 * How a run ended, as the console shows it: a Completed run whose fetch stopped short (a page smaller
 * than Page Size although the API says more follow, Max Pages reached, records not countable) is
 * "Completed with warnings". Derived from the warnings: the status values stay the spec's.
 */
export const COMPLETED_WITH_WARNINGS = 'Completed with warnings';
export const runStatusLabel = (run: Pick<ImportRun, 'status' | 'warnings'>): string =>
  run.status === 'Completed' && run.warnings.length > 0 ? COMPLETED_WITH_WARNINGS : run.status;

/** A run as the API shows it. */
export interface ImportRun {
  readonly runId: string;
  readonly endpointCode: string;
  readonly integrationSortingOrder: number;
  readonly trigger: RunTrigger;
  readonly status: RunStatus;
  readonly queuedAt: string;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  readonly durationMs: number | null;
  /** Pages fetched, also one whose next link failed the run. */
  readonly pagesFetched: number;
  /** Records received from the endpoint (found on its pages), all pages; what was written is insertedCount + updatedCount. */
  readonly recordsFetched: number;
  readonly insertedCount: number;
  readonly updatedCount: number;
  readonly skippedCount: number;
  /** Why fetching stopped; null while it has not (or when the run failed before it did). */
  readonly stopReason: RunStopReason | null;
  /** Why fetching stopped, as a sentence ('' until it did). */
  readonly stopDetail: string;
  /** Plain sentences, each with its likely fix: why the run may have stopped short. */
  readonly warnings: string[];
  /** '' when there is no error. */
  readonly errorMessage: string;
  /** How many times the run was claimed (more than 1 after an interrupted worker). */
  readonly attempts: number;
}

export interface ImportRunPage {
  readonly pageNo: number;
  readonly url: string;
  /** Records received on the page. */
  readonly recordsFetched: number;
}

/** A run as the worker that claimed it sees it. */
export interface ClaimedRun {
  readonly runId: string;
  readonly endpointCode: string;
  readonly integrationSortingOrder: number;
  readonly attempts: number;
  readonly leaseOwner: string;
  readonly leaseExpiresAt: string;
  readonly startedAt: string;
}

export const RUN_COLUMNS = [
  'run_id',
  'endpoint_code',
  'integration_sorting_order',
  'trigger',
  'status',
  'queued_at',
  'started_at',
  'ended_at',
  'duration_ms',
  'pages_fetched',
  'records_fetched',
  'inserted_count',
  'updated_count',
  'skipped_count',
  'stop_reason',
  'stop_detail',
  'warnings',
  'error_message',
  'attempts',
] as const;
export type RunSummaryRow = Pick<Selectable<ImportRunRow>, (typeof RUN_COLUMNS)[number]>;

/** The column list of RUN_COLUMNS for hand-written SQL (`trigger` is a keyword, hence quoted). */
export const RUN_COLUMNS_SQL = RUN_COLUMNS.map((c) => (c === 'trigger' ? '"trigger"' : c)).join(', ');

function parseWarnings(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.map(String) : [];
  } catch {
    return [];
  }
}

export function toImportRun(row: RunSummaryRow): ImportRun {
  return {
    runId: row.run_id,
    endpointCode: row.endpoint_code,
    integrationSortingOrder: row.integration_sorting_order,
    trigger: row.trigger as RunTrigger,
    status: row.status as RunStatus,
    queuedAt: row.queued_at,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    durationMs: row.duration_ms,
    pagesFetched: row.pages_fetched,
    recordsFetched: row.records_fetched,
    insertedCount: row.inserted_count,
    updatedCount: row.updated_count,
    skippedCount: row.skipped_count,
    stopReason: row.stop_reason as RunStopReason | null,
    stopDetail: row.stop_detail,
    warnings: parseWarnings(row.warnings),
    errorMessage: row.error_message,
    attempts: row.attempts,
  };
}

export const toImportRunPage = (row: Pick<Selectable<ImportRunPageRow>, 'page_no' | 'url' | 'records_fetched'>): ImportRunPage => ({
  pageNo: row.page_no,
  url: row.url,
  recordsFetched: row.records_fetched,
});
