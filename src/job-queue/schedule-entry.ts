/**
 * Entries that features create and remove themselves (an endpoint's schedule): created Ready, or, when
 * the entry exists, its kind, description, parameters and interval updated while its status stays as
 * an administrator left it (On Hold stays On Hold). Changing the interval never postpones a run that
 * is already planned sooner.
 */
import { sql } from 'kysely';
import type { Db } from '../storage/db.js';
import { addMs } from './model.js';

export interface RecurringEntry {
  readonly id: string;
  readonly kind: string;
  readonly description: string;
  readonly recurrenceSeconds: number;
  /** Stored as JSON; what the kind's handler reads. */
  readonly parameters: object;
}

export async function upsertRecurringEntry(db: Db, entry: RecurringEntry, now: Date): Promise<void> {
  const at = now.toISOString();
  const next = addMs(now, entry.recurrenceSeconds * 1000);
  await sql`
    insert into ifw_job_queue_entry (id, kind, description, status, recurrence_seconds, next_run_at, parameters, created_at, updated_at)
    values (${entry.id}, ${entry.kind}, ${entry.description}, 'Ready', ${entry.recurrenceSeconds}, ${next}, ${JSON.stringify(entry.parameters)}, ${at}, ${at})
    on conflict (id) do update
       set kind = excluded.kind,
           description = excluded.description,
           parameters = excluded.parameters,
           recurrence_seconds = excluded.recurrence_seconds,
           next_run_at = case when ifw_job_queue_entry.next_run_at > excluded.next_run_at then excluded.next_run_at
                              else ifw_job_queue_entry.next_run_at end,
           updated_at = excluded.updated_at`.execute(db);
}

/** Removes the entry if it exists and is of `kind` (an entry of another kind with that id is not this feature's). */
export async function removeEntry(db: Db, { id, kind }: { readonly id: string; readonly kind: string }): Promise<void> {
  await db.deleteFrom('ifw_job_queue_entry').where('id', '=', id).where('kind', '=', kind).execute();
}
