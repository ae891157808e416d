/**
 * The job queue's vocabulary: the states an entry moves through and an entry claimed for one run.
 * Storage keeps statuses as text; the union closes the set. What an entry runs is its kind (jobs.ts).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../storage/db.js';
import { capabilitiesOf } from '../storage/db.js';

export const ENTRY_STATUSES = ['Ready', 'On Hold', 'In Process', 'Error'] as const;
export type EntryStatus = (typeof ENTRY_STATUSES)[number];

/** The statuses an administrator may set by hand; In Process and Error belong to the scheduler. */
export const SETTABLE_ENTRY_STATUSES = ['Ready', 'On Hold'] as const;
export type SettableEntryStatus = (typeof SETTABLE_ENTRY_STATUSES)[number];

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
export const claimLock = (db: Db): RawBuilder<unknown> => (capabilitiesOf(db).skipLocked ? sql`for update skip locked` : sql``);

export const addMs = (date: Date, ms: number): string => new Date(date.getTime() + ms).toISOString();

/** What an administrator's cancel writes on a leased request or run: ended now, the lease cleared, the reason. */
export const cancelledByAdministrator = (at: Date) =>
  ({
    status: 'Cancelled',
    ended_at: at.toISOString(),
    lease_owner: null,
    lease_expires_at: null,
    error_message: 'Cancelled by an administrator.',
  }) as const;

/** A worker process is Alive while its heartbeat is recent, Dead once it is older than IFW_WORKER_DEAD_SECONDS. */
export const WORKER_STATUSES = ['Alive', 'Dead'] as const;
export type WorkerStatus = (typeof WORKER_STATUSES)[number];
