/**
 * The job queue's vocabulary: what an entry runs (its kind), the states an entry moves through, and
 * the request a worker holds under a lease. Storage keeps them as text; these unions close the set.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../storage/database.js';

export const ENTRY_STATUSES = ['Ready', 'On Hold', 'In Process', 'Error'] as const;
export type EntryStatus = (typeof ENTRY_STATUSES)[number];

/** The statuses an administrator may set by hand; In Process and Error belong to the scheduler. */
export const SETTABLE_ENTRY_STATUSES = ['Ready', 'On Hold'] as const;
export type SettableEntryStatus = (typeof SETTABLE_ENTRY_STATUSES)[number];

export const JOB_KINDS = ['bulkImportProcessor', 'retentionCleanup', 'importRunProcessor', 'endpointImport'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export const parseJobKind = (kind: string): JobKind | undefined =>
  (JOB_KINDS as readonly string[]).includes(kind) ? (kind as JobKind) : undefined;

/** Ids of the entries the first migration seeds. */
export const BULK_IMPORT_PROCESSOR_ENTRY = 'bulk-import-processor';
export const RETENTION_CLEANUP_ENTRY = 'retention-cleanup';
/** Seeded by migration 003: drains Queued import runs. (Entries `endpoint:<code>` are created per scheduled endpoint.) */
export const IMPORT_RUN_PROCESSOR_ENTRY = 'import-run-processor';

/** A Bulk Import Request as the worker that claimed it sees it. */
export interface ClaimedRequest {
  readonly requestId: string;
  readonly integrationSortingOrder: number;
  readonly payload: string;
  /** How many times the request has been claimed, this claim included. */
  readonly attempts: number;
  readonly leaseOwner: string;
  readonly leaseExpiresAt: string;
}

/** A job queue entry claimed for one run. */
export interface ClaimedEntry {
  readonly id: string;
  readonly kind: string;
  readonly recurrenceSeconds: number;
  readonly parameters: string;
}

/**
 * The end of a claim's candidate subquery. On PostgreSQL `for update skip locked`: a claimer locks the
 * row it picked and the others pick the next unlocked one, so N claimers take N different rows in one
 * round. On SQLite nothing: its single writer serializes claims, and the outer re-check does the rest.
 */
export const claimLock = (db: Database): RawBuilder<unknown> => (db.capabilities.skipLocked ? sql`for update skip locked` : sql``);

export const addMs = (date: Date, ms: number): string => new Date(date.getTime() + ms).toISOString();
