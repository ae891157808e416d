/**
 * A run's staging on SQLite. A page's records are mapped through the integration the moment the page
 * arrives and inserted into the run's staging table (table-writer/sqlite/staged-rows.ts) as they fill
 * whole INSERTs: an in-memory table attached to the connection (a TEMP table past a size), so that
 * insert takes no lock on the database file, and the work is done while the next page is on its way
 * rather than in one block per commit. The page rows wait in the page buffer and several are written
 * in one fenced transaction; a run whose lease is lost stops at its next one, and its staged rows are
 * dropped.
 */
import type { CompiledMapping } from '../../mapping/engine.js';
import { execute } from '../../storage/connection.js';
import type { SqliteDatabase } from '../../storage/database.js';
import { createStagedRows, stagedRowsWriter } from '../../table-writer/sqlite/staged-rows.js';
import { bumpRun, type Fence, type FetchedRecords, type PreparedPage } from '../stage-page.js';

export interface SqliteStaging {
  /** Maps the page's records and stages them (staged-rows.ts: the last few with a later page); the page row is left for `write`. */
  readonly stageRecords: (page: FetchedRecords) => PreparedPage;
  /**
   * Page rows in one transaction: the run's counters and lease first (fenced: when the lease is no
   * longer this worker's, nothing is written and the result is false), then the pages' rows.
   */
  readonly write: (fence: Fence, pages: readonly PreparedPage[]) => boolean;
}

/** Page rows in one INSERT (against a fast API, a commit holds up to 256: staging limits, page-buffer.ts). */
const PAGES_PER_INSERT = 32;

/** The page row alone: its records are staged, or wait to be, by the staging writer. */
const pageRowOnly = (page: FetchedRecords): PreparedPage => ({
  pageNo: page.pageNo,
  url: page.url,
  recordCount: page.records.length,
  bytes: page.url.length,
});

/**
 * Starts a run's staging: creates its (empty) staging table for `mapping` and prepares the row
 * inserts once. Synchronous on the raw connection, on the thread that owns it.
 */
export function sqliteStaging(db: SqliteDatabase, runId: string, mapping: CompiledMapping): SqliteStaging {
  const { sqlite } = db;
  createStagedRows(sqlite, runId, mapping.columns.length);
  const rows = stagedRowsWriter(sqlite, runId, mapping);
  // The run's page rows go PAGES_PER_INSERT at a time, the rest of a commit's one by one: two
  // statements prepared once, where a statement for each number of pages would be prepared anew.
  const insertPages = (count: number) =>
    sqlite.prepare(
      `insert into ifw_import_run_page (run_id, page_no, url, records_fetched) values ${Array(count).fill('(?, ?, ?, ?)').join(', ')}`,
    );
  const insertPage = insertPages(1);
  const insertMany = insertPages(PAGES_PER_INSERT);
  const params = new Array<unknown>(4 * PAGES_PER_INSERT);
  const transaction = sqlite.transaction((fence: Fence, pages: readonly PreparedPage[]): boolean => {
    if (execute(db, bumpRun(fence, pages)) !== 1) return false;
    let at = 0;
    for (; at + PAGES_PER_INSERT <= pages.length; at += PAGES_PER_INSERT) {
      for (let i = 0; i < PAGES_PER_INSERT; i++) {
        const page = pages[at + i]!;
        params[4 * i] = fence.runId;
        params[4 * i + 1] = page.pageNo;
        params[4 * i + 2] = page.url;
        params[4 * i + 3] = page.recordCount;
      }
      insertMany.run(params);
    }
    for (; at < pages.length; at++) insertPage.run(fence.runId, pages[at]!.pageNo, pages[at]!.url, pages[at]!.recordCount);
    return true;
  });
  return {
    stageRecords(page) {
      rows.stage(page.records);
      return pageRowOnly(page);
    },
    write: (fence, pages) => {
      // A page row is written only once its records are staged.
      rows.flush();
      return pages.length === 0 ? true : transaction.immediate(fence, pages);
    },
  };
}
