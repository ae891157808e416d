/**
 * An endpoint's schedule is a job queue entry `endpoint:<code>` (kind endpointImport) that queues a
 * run when due. Saving an endpoint with a schedule creates or updates its entry; saving it without
 * one, or deleting it, removes the entry. An administrator may put the entry On Hold in the job queue
 * API: changing the interval keeps that status. Re-saving an endpoint never postpones a run that is
 * already planned sooner (like changing an entry's interval by hand).
 */
import { removeEntry, upsertRecurringEntry } from '../job-queue/schedule-entry.js';
import type { Db } from '../storage/db.js';

export const ENDPOINT_IMPORT_KIND = 'endpointImport';
export const endpointEntryId = (endpointCode: string): string => `endpoint:${endpointCode}`;
export const endpointEntryDescription = (endpointCode: string): string => `Import from REST API endpoint ${endpointCode}`;

/** What an endpointImport entry's `parameters` hold. */
export interface EndpointImportParameters {
  readonly endpointCode: string;
}

export async function syncEndpointSchedule(db: Db, endpointCode: string, scheduleSeconds: number | null, now: Date): Promise<void> {
  const id = endpointEntryId(endpointCode);
  if (scheduleSeconds === null) {
    await removeEntry(db, { id, kind: ENDPOINT_IMPORT_KIND });
    return;
  }
  const parameters: EndpointImportParameters = { endpointCode };
  await upsertRecurringEntry(
    db,
    { id, kind: ENDPOINT_IMPORT_KIND, description: endpointEntryDescription(endpointCode), recurrenceSeconds: scheduleSeconds, parameters },
    now,
  );
}
