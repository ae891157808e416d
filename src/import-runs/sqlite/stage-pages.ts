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
  // One prepared row insert for the run's pages: a multi-row statement would be a new text, prepared
  // anew, for each number of pages a commit holds.
  const insertPage = sqlite.prepare('insert into ifw_import_run_page (run_id, page_no, url, records_fetched) values (?, ?, ?, ?)');
  const transaction = sqlite.transaction((fence: Fence, pages: readonly PreparedPage[]): boolean => {
    if (execute(db, bumpRun(fence, pages)) !== 1) return false;
    for (const page of pages) insertPage.run(fence.runId, page.pageNo, page.url, page.recordCount);
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
