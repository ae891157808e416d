/**
 * An endpoint's schedule is a job queue entry `endpoint:<code>` (kind endpointImport) that queues a
 * run when due. Saving an endpoint with a schedule creates or updates its entry; saving it without
 * one, or deleting it, removes the entry. An administrator may put the entry On Hold in the job queue
 * API: changing the interval keeps that status. Re-saving an endpoint never postpones a run that is
 * already planned sooner (like changing an entry's interval by hand).
 */
import { sql } from 'kysely';
import type { Database } from '../storage/database.js';
import { addMs } from '../import-runs/model.js';

export const ENDPOINT_IMPORT_KIND = 'endpointImport';
export const endpointEntryId = (endpointCode: string): string => `endpoint:${endpointCode}`;
export const endpointEntryDescription = (endpointCode: string): string => `Import from REST API endpoint ${endpointCode}`;

/** What an endpointImport entry's `parameters` hold. */
export interface EndpointImportParameters {
  readonly endpointCode: string;
}

export async function syncEndpointSchedule(db: Database, endpointCode: string, scheduleSeconds: number | null, now: Date): Promise<void> {
  const id = endpointEntryId(endpointCode);
  if (scheduleSeconds === null) {
    await db.kysely.deleteFrom('ifw_job_queue_entry').where('id', '=', id).where('kind', '=', ENDPOINT_IMPORT_KIND).execute();
    return;
  }
  const at = now.toISOString();
  const next = addMs(now, scheduleSeconds * 1000);
  const parameters = JSON.stringify({ endpointCode } satisfies EndpointImportParameters);
  await sql`
    insert into ifw_job_queue_entry (id, kind, description, status, recurrence_seconds, next_run_at, parameters, created_at, updated_at)
    values (${id}, ${ENDPOINT_IMPORT_KIND}, ${endpointEntryDescription(endpointCode)}, 'Ready', ${scheduleSeconds}, ${next}, ${parameters}, ${at}, ${at})
    on conflict (id) do update
       set kind = excluded.kind,
           description = excluded.description,
           parameters = excluded.parameters,
           recurrence_seconds = excluded.recurrence_seconds,
           next_run_at = case when ifw_job_queue_entry.next_run_at > excluded.next_run_at then excluded.next_run_at
                              else ifw_job_queue_entry.next_run_at end,
           updated_at = excluded.updated_at`.execute(db.kysely);
}
