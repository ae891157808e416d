/**
 * Staging: fetched pages are written as they arrive, so a run of a thousand pages holds a few pages in
 * memory, not a thousand: the page (URL, record count) to `ifw_import_run_page`, its records to the
 * connection's TEMP staging. Page rows wait in a small buffer and several share one transaction (see
 * page-buffer.ts): a commit costs far more than the insert of a page. Those transactions are fenced by
 * the run's lease, and renew it (a long fetch is its own heartbeat).
 *
 * - SQLite maps a page's records the moment it arrives and inserts them into the run's staging table
 *   (importer/staged-rows.ts) at once: a TEMP table, so that insert takes no lock on the database
 *   file, and the work is done while the next page is on its way rather than in one block per commit.
 *   A run whose lease is lost stops at its next staging transaction, and its staged rows are dropped.
 * - PostgreSQL keeps the records' JSON in the buffered page and stages it with the page rows, in one
 *   statement (staged-records.ts).
 */
import { sql } from 'kysely';
import type { PgClient } from '../table-writer/postgres/client.js';
import { createStagedRows, dropStagedRows, recordMapper, stagedRowsWriter } from '../table-writer/sqlite/staged-rows.js';
import type { CompiledMapping } from '../mapping/engine.js';
import { sqliteOf, type Database } from '../storage/database.js';
import { addMs } from '../job-queue/model.js';
import { pgStatement } from '../storage/postgres/statement.js';

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

/** PostgreSQL's: the records as JSON text. */
export interface SerialisedPage extends PreparedPage {
  readonly json: string;
}

/** The page row alone: its records are staged already (SQLite). */
const pageRowOnly = (page: FetchedRecords): PreparedPage => ({
  pageNo: page.pageNo,
  url: page.url,
  recordCount: page.records.length,
  bytes: page.url.length,
});

export function serialisePage(page: FetchedRecords): SerialisedPage {
  const json = JSON.stringify(page.records);
  return { pageNo: page.pageNo, url: page.url, recordCount: page.records.length, json, bytes: json.length };
}

export interface Fence {
  readonly runId: string;
  readonly owner: string;
  readonly now: Date;
  readonly leaseMs: number;
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

/** A run's staging on SQLite. */
export interface SqliteStaging {
  /** Maps the page's records and stages them at once; the page row is left for `write`. */
  readonly stageRecords: (page: FetchedRecords) => PreparedPage;
  /**
   * Page rows in one transaction: the run's counters and lease first (fenced: when the lease is no
   * longer this worker's, nothing is written and the result is false), then one row per page.
   */
  readonly write: (fence: Fence, pages: readonly PreparedPage[]) => boolean;
}

/**
 * Starts a run's staging on SQLite: creates its (empty) staging table for `mapping` and prepares the
 * statements once. Synchronous on the raw connection, on the thread that owns it.
 */
export function sqliteStaging(db: Database, runId: string, mapping: CompiledMapping): SqliteStaging {
  const sqlite = sqliteOf(db);
  const width = mapping.columns.length;
  createStagedRows(sqlite, runId, width);
  const map = recordMapper(mapping);
  const insertRows = stagedRowsWriter(sqlite, runId, width);
  const bump = sqlite.prepare(BUMP_RUN);
  const insertPage = sqlite.prepare(INSERT_PAGE);
  const transaction = sqlite.transaction((fence: Fence, pages: readonly PreparedPage[]): boolean => {
    let records = 0;
    for (const page of pages) records += page.recordCount;
    const leaseExpiresAt = addMs(fence.now, fence.leaseMs);
    if (bump.run({ runId: fence.runId, owner: fence.owner, pages: pages.length, records, leaseExpiresAt }).changes !== 1) return false;
    for (const page of pages) insertPage.run(fence.runId, page.pageNo, page.url, page.recordCount);
    return true;
  });
  return {
    stageRecords(page) {
      insertRows(map(page.pageNo, page.records));
      return pageRowOnly(page);
    },
    write: (fence, pages) => (pages.length === 0 ? true : transaction.immediate(fence, pages)),
  };
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
export async function discardStagedPages(
  db: Database,
  { runId, owner }: { readonly runId: string; readonly owner: string },
): Promise<void> {
  // On PostgreSQL the run's own client starts with its staging table cleared (run-store.ts).
  if (db.dialect === 'sqlite') dropStagedRows(db.sqlite, runId);
  await sql`
    delete from ifw_import_run_page
     where run_id = ${runId}
       and exists (select 1
                     from ifw_import_run
                    where run_id = ${runId}
                      and status = 'Running'
                      and lease_owner = ${owner})`.execute(db.kysely);
}
