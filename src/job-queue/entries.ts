/** Reading job queue entries, as the admin API shows them. */
import type { Selectable } from 'kysely';
import type { Db } from '../storage/db.js';
import type { JobQueueEntryRow } from '../storage/schema.js';
import type { EntryStatus } from './model.js';

export interface JobQueueEntry {
  readonly id: string;
  readonly description: string;
  readonly kind: string;
  readonly status: EntryStatus;
  readonly recurrenceSeconds: number;
  /** null while the entry runs (or when it was never scheduled). */
  readonly nextRunAt: string | null;
  readonly lastRunAt: string | null;
  readonly lastEndedAt: string | null;
  /** '' when the last run succeeded. */
  readonly lastError: string;
}

const ENTRY_COLUMNS = [
  'id',
  'description',
  'kind',
  'status',
  'recurrence_seconds',
  'next_run_at',
  'last_run_at',
  'last_ended_at',
  'last_error',
] as const;
type EntrySummaryRow = Pick<Selectable<JobQueueEntryRow>, (typeof ENTRY_COLUMNS)[number]>;

function toJobQueueEntry(row: EntrySummaryRow): JobQueueEntry {
  return {
    id: row.id,
    description: row.description,
    kind: row.kind,
    status: row.status as EntryStatus,
    recurrenceSeconds: row.recurrence_seconds,
    nextRunAt: row.next_run_at,
    lastRunAt: row.last_run_at,
    lastEndedAt: row.last_ended_at,
    lastError: row.last_error,
  };
}

export async function listEntries(db: Db): Promise<JobQueueEntry[]> {
  const rows = await db.selectFrom('ifw_job_queue_entry').select(ENTRY_COLUMNS).orderBy('id').execute();
  return rows.map(toJobQueueEntry);
}

export async function getEntry(db: Db, id: string): Promise<JobQueueEntry | undefined> {
  const row = await db.selectFrom('ifw_job_queue_entry').select(ENTRY_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toJobQueueEntry(row);
}

/** Does this runner still hold the entry (In Process under its lease)? False once an administrator put it On Hold. */
export async function holdsEntry(db: Db, { id, owner }: { readonly id: string; readonly owner: string }): Promise<boolean> {
  const row = await db
    .selectFrom('ifw_job_queue_entry')
    .select('id')
    .where('id', '=', id)
    .where('status', '=', 'In Process')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return row !== undefined;
}

/** Is the entry On Hold? On PostgreSQL the Bulk Import Processor entry is the switch every worker's request loops obey. */
export async function entryOnHold(db: Db, id: string): Promise<boolean> {
  const row = await db.selectFrom('ifw_job_queue_entry').select('status').where('id', '=', id).executeTakeFirst();
  return row?.status === 'On Hold';
}
