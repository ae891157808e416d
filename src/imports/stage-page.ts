/**
 * Staging: each fetched page is written to `ifw_import_run_page` as it arrives, so a run of a thousand
 * pages holds one page in memory, not a thousand. Every write is fenced by the run's lease, and staging
 * a page renews that lease (a long fetch is its own heartbeat).
 */
import type BetterSqlite3 from 'better-sqlite3';
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

const BUMP_RUN = `
  update ifw_import_run
     set pages_fetched = pages_fetched + 1,
         record_count = record_count + @records,
         lease_expires_at = @leaseExpiresAt
   where run_id = @runId
     and status = 'Running'
     and lease_owner = @owner`;

const INSERT_PAGE = `
  insert into ifw_import_run_page (run_id, page_no, url, record_count, records)
  values (@runId, @pageNo, @url, @records, @json)`;

/**
 * False when the lease is no longer this worker's: nothing was staged and the run should stop.
 * Synchronous on the raw connection (one short transaction): it runs once per page, on the thread
 * that owns the connection.
 */
export function stagePage(db: Database, { runId, owner, now, leaseMs, page }: StagePageArgs): boolean {
  const json = JSON.stringify(page.records);
  const records = page.records.length;
  return stagingOf(db.sqlite)({ runId, owner, records, leaseExpiresAt: addMs(now, leaseMs), pageNo: page.pageNo, url: page.url, json });
}

interface StageParams {
  readonly runId: string;
  readonly owner: string;
  readonly records: number;
  readonly leaseExpiresAt: string;
  readonly pageNo: number;
  readonly url: string;
  readonly json: string;
}

/** The staging transaction, prepared once per connection (it runs for every page). */
const staging = new WeakMap<BetterSqlite3.Database, (params: StageParams) => boolean>();

function stagingOf(sqlite: BetterSqlite3.Database): (params: StageParams) => boolean {
  let stage = staging.get(sqlite);
  if (stage === undefined) {
    const bump = sqlite.prepare(BUMP_RUN);
    const insert = sqlite.prepare(INSERT_PAGE);
    const transaction = sqlite.transaction((p: StageParams): boolean => {
      if (bump.run({ runId: p.runId, owner: p.owner, records: p.records, leaseExpiresAt: p.leaseExpiresAt }).changes !== 1) return false;
      insert.run({ runId: p.runId, pageNo: p.pageNo, url: p.url, records: p.records, json: p.json });
      return true;
    });
    stage = (params) => transaction.immediate(params);
    staging.set(sqlite, stage);
  }
  return stage;
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
