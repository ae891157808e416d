/**
 * Staging: fetched pages are written as they arrive, so a run of a thousand pages holds a few pages in
 * memory, not a thousand: the page (URL, record count) to `ifw_import_run_page`, its records to the
 * connection's staging table (staged-records.ts). Several pages may share one transaction (see
 * page-buffer.ts): a commit costs far more than the insert of a page. Every write is fenced by the
 * run's lease, and staging renews that lease (a long fetch is its own heartbeat).
 */
import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import type { PgClient } from '../importer/postgres/client.js';
import { sqliteOf, type Database } from '../storage/database.js';
import { addMs } from './model.js';
import { pgStatement } from '../storage/pg-statement.js';
import { clearStagedRecords, INSERT_STAGED_RECORDS, stagedRecordsTable } from './staged-records.js';

export interface FetchedRecords {
  readonly pageNo: number;
  readonly url: string;
  readonly records: readonly unknown[];
}

/** A page ready to be written: its records serialised as it arrived, so that the parsed response can go. */
export interface SerialisedPage {
  readonly pageNo: number;
  readonly url: string;
  readonly recordCount: number;
  readonly json: string;
}

export const serialisePage = (page: FetchedRecords): SerialisedPage => ({
  pageNo: page.pageNo,
  url: page.url,
  recordCount: page.records.length,
  json: JSON.stringify(page.records),
});

interface Fence {
  readonly runId: string;
  readonly owner: string;
  readonly now: Date;
  readonly leaseMs: number;
}

export interface StagePageArgs extends Fence {
  readonly page: FetchedRecords;
}

export interface StagePagesArgs extends Fence {
  readonly pages: readonly SerialisedPage[];
}

const BUMP_RUN = `
  update ifw_import_run
     set pages_fetched = pages_fetched + @pages,
         record_count = record_count + @records,
         lease_expires_at = @leaseExpiresAt
   where run_id = @runId
     and status = 'Running'
     and lease_owner = @owner`;

const INSERT_PAGE = `
  insert into ifw_import_run_page (run_id, page_no, url, record_count)
  values (?, ?, ?, ?)`;

/** One page in its own transaction; false when the lease is no longer this worker's (nothing staged). */
export function stagePage(db: Database, { page, ...fence }: StagePageArgs): boolean {
  return stagePages(db, { ...fence, pages: [serialisePage(page)] });
}

/**
 * Pages in one transaction: the run's counters and lease first (fenced: when the lease is no longer
 * this worker's, nothing is staged and the result is false), then one row per page. Synchronous on
 * the raw connection, on the thread that owns it.
 */
export function stagePages(db: Database, { runId, owner, now, leaseMs, pages }: StagePagesArgs): boolean {
  if (pages.length === 0) return true;
  return stagingOf(sqliteOf(db))(runId, owner, addMs(now, leaseMs), pages);
}

type Staging = (runId: string, owner: string, leaseExpiresAt: string, pages: readonly SerialisedPage[]) => boolean;

/** The staging transaction, prepared once per connection (it runs for every few pages). */
const staging = new WeakMap<BetterSqlite3.Database, Staging>();

function stagingOf(sqlite: BetterSqlite3.Database): Staging {
  let stage = staging.get(sqlite);
  if (stage === undefined) {
    stagedRecordsTable(sqlite);
    const bump = sqlite.prepare(BUMP_RUN);
    const insert = sqlite.prepare(INSERT_PAGE);
    const insertRecords = sqlite.prepare(INSERT_STAGED_RECORDS);
    const transaction = sqlite.transaction((runId: string, owner: string, leaseExpiresAt: string, pages: readonly SerialisedPage[]): boolean => {
      let records = 0;
      for (const page of pages) records += page.recordCount;
      if (bump.run({ runId, owner, pages: pages.length, records, leaseExpiresAt }).changes !== 1) return false;
      for (const page of pages) {
        insert.run(runId, page.pageNo, page.url, page.recordCount);
        insertRecords.run(runId, page.pageNo, page.json);
      }
      return true;
    });
    stage = (runId, owner, leaseExpiresAt, pages) => transaction.immediate(runId, owner, leaseExpiresAt, pages);
    staging.set(sqlite, stage);
  }
  return stage;
}

/**
 * The same transaction on PostgreSQL, as one statement (one round trip, atomic on its own): the fenced
 * BUMP_RUN, and the page rows and staged records only for the run it bumped. On the run's own client,
 * whose session holds the staging table (staged-records.ts).
 */
const STAGE_PAGES_PG = `
  with bump as (${BUMP_RUN.trim()}
         returning run_id),
       page as (select *
                  from unnest(@pageNos::integer[], @urls::text[], @counts::integer[], @json::text[]) as p(page_no, url, record_count, records)),
       page_rows as (insert into ifw_import_run_page (run_id, page_no, url, record_count)
                     select bump.run_id, page.page_no, page.url, page.record_count from bump, page),
       staged as (insert into pg_temp.ifw_staged_records (run_id, page_no, records)
                  select bump.run_id, page.page_no, page.records from bump, page)
  select count(*)::integer as bumped from bump`;

export async function stagePagesPg(client: PgClient, { runId, owner, now, leaseMs, pages }: StagePagesArgs): Promise<boolean> {
  if (pages.length === 0) return true;
  let records = 0;
  for (const page of pages) records += page.recordCount;
  const { text, values } = pgStatement(STAGE_PAGES_PG, {
    runId,
    owner,
    pages: pages.length,
    records,
    leaseExpiresAt: addMs(now, leaseMs),
    pageNos: pages.map((p) => p.pageNo),
    urls: pages.map((p) => p.url),
    counts: pages.map((p) => p.recordCount),
    json: pages.map((p) => p.json),
  });
  const { rows } = await client.query<{ bumped: number }>(text, values);
  return rows[0]?.bumped === 1;
}

/** Pages left by an interrupted earlier attempt of this run go before the new attempt fetches. */
export async function discardStagedPages(db: Database, { runId, owner }: { readonly runId: string; readonly owner: string }): Promise<void> {
  // On PostgreSQL the run's own client starts with its staging table cleared (run-store.ts).
  if (db.dialect === 'sqlite') clearStagedRecords(db.sqlite, runId);
  await sql`
    delete from ifw_import_run_page
     where run_id = ${runId}
       and exists (select 1
                     from ifw_import_run
                    where run_id = ${runId}
                      and status = 'Running'
                      and lease_owner = ${owner})`.execute(db.kysely);
}
