/**
 * Staging: fetched pages are written as they arrive, so a run of a thousand pages holds a few pages in
 * memory, not a thousand: the page (URL, record count) to `ifw_import_run_page`, its records to the
 * connection's TEMP staging. Page rows wait in a small buffer and several share one transaction (see
 * page-buffer.ts): a commit costs far more than the insert of a page. Those transactions are fenced by
 * the run's lease, and renew it (a long fetch is its own heartbeat).
 *
 * - SQLite maps a page's records the moment it arrives and stages them as rows at once
 *   (sqlite/stage-pages.ts).
 * - PostgreSQL keeps the records' JSON in the buffered page and stages it with the page rows, in one
 *   statement (postgres/stage-pages.ts).
 *
 * What both share is here: the shape of a page on its way, the fenced counter update.
 */
import { sql, type RawBuilder } from 'kysely';
import { addMs } from '../job-queue/model.js';
import type { Database } from '../storage/database.js';
import { clearStaged } from './staged.js';

export interface FetchedRecords {
  readonly pageNo: number;
  readonly url: string;
  readonly records: readonly unknown[];
}

/** A page ready to be written, its records prepared as it arrived, so that the parsed response can go. */
export interface PreparedPage {
  readonly pageNo: number;
  readonly url: string;
  readonly recordCount: number;
  /** About what the prepared records take (the page buffer's size limit). */
  readonly bytes: number;
}

export interface Fence {
  readonly runId: string;
  readonly owner: string;
  readonly now: Date;
  readonly leaseMs: number;
}

/**
 * The run's counters and lease, fenced: it changes the run only while the lease is this worker's. A
 * long fetch renews the lease this way, page batch after page batch.
 */
export function bumpRun(fence: Fence, pages: readonly PreparedPage[]): RawBuilder<unknown> {
  let records = 0;
  for (const page of pages) records += page.recordCount;
  return sql`
    update ifw_import_run
       set pages_fetched = pages_fetched + ${pages.length},
           records_fetched = records_fetched + ${records},
           lease_expires_at = ${addMs(fence.now, fence.leaseMs)}
     where run_id = ${fence.runId}
       and status = 'Running'
       and lease_owner = ${fence.owner}`;
}

/** Pages left by an interrupted earlier attempt of this run go before the new attempt fetches. */
export async function discardStagedPages(
  db: Database,
  { runId, owner }: { readonly runId: string; readonly owner: string },
): Promise<void> {
  // On PostgreSQL the run's own client starts with its staging table cleared (postgres/run-store.ts).
  if (db.dialect === 'sqlite') clearStaged(db, runId);
  await sql`
    delete from ifw_import_run_page
     where run_id = ${runId}
       and exists (select 1
                     from ifw_import_run
                    where run_id = ${runId}
                      and status = 'Running'
                      and lease_owner = ${owner})`.execute(db);
}
