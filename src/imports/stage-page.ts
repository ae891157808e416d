/**
 * Staging: each fetched page is written to `ifw_import_run_page` as it arrives, so a run of a thousand
 * pages holds one page in memory, not a thousand. Every write is fenced by the run's lease, and staging
 * a page renews that lease (a long fetch is its own heartbeat).
 */
import { sql } from 'kysely';
import type { Database } from '../storage/database.js';
import { addMs } from './model.js';

export interface StagePageArgs {
  readonly runId: string;
  readonly owner: string;
  readonly now: Date;
  readonly leaseMs: number;
  readonly page: { readonly pageNo: number; readonly url: string; readonly records: readonly unknown[] };
}

/** False when the lease is no longer this worker's: nothing was staged and the run should stop. */
export async function stagePage(db: Database, { runId, owner, now, leaseMs, page }: StagePageArgs): Promise<boolean> {
  const records = JSON.stringify(page.records);
  return db.kysely.transaction().execute(async (trx) => {
    const bumped = await sql`
      update ifw_import_run
         set pages_fetched = pages_fetched + 1,
             record_count = record_count + ${page.records.length},
             lease_expires_at = ${addMs(now, leaseMs)}
       where run_id = ${runId}
         and status = 'Running'
         and lease_owner = ${owner}`.execute(trx);
    if (bumped.numAffectedRows !== 1n) return false;
    await sql`
      insert into ifw_import_run_page (run_id, page_no, url, record_count, records)
      values (${runId}, ${page.pageNo}, ${page.url}, ${page.records.length}, ${records})`.execute(trx);
    return true;
  });
}

/** Pages left by an interrupted earlier attempt of this run go before the new attempt fetches. */
export async function discardStagedPages(db: Database, { runId, owner }: { readonly runId: string; readonly owner: string }): Promise<void> {
  await sql`
    delete from ifw_import_run_page
     where run_id = ${runId}
       and exists (select 1
                     from ifw_import_run
                    where run_id = ${runId}
                      and status = 'Running'
                      and lease_owner = ${owner})`.execute(db.kysely);
}
