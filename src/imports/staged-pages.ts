/**
 * Reads a run's staged pages back, one page at a time, for the import. It runs inside the importer's
 * write transaction on the same connection, and better-sqlite3 refuses every other statement on a
 * connection while a `stmt.iterate()` cursor is open; so each page is its own keyset lookup on the
 * primary key (run_id, page_no), and only the current page's records are in memory.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { stagedRecordsTable } from './staged-records.js';

const NEXT_PAGE = `
  select page_no, records
    from temp.ifw_staged_records
   where run_id = ?
     and page_no > ?
   order by page_no
   limit 1`;

export function* stagedPages(sqlite: BetterSqlite3.Database, runId: string): Generator<readonly unknown[], void, undefined> {
  stagedRecordsTable(sqlite);
  const next = sqlite.prepare<[string, number], { page_no: number; records: string | null }>(NEXT_PAGE);
  for (let after = 0; ; ) {
    const row = next.get(runId, after);
    if (row === undefined) return;
    after = row.page_no;
    if (row.records === null) throw new Error(`page ${row.page_no} of run ${runId} has no staged records (already cleared)`);
    const records: unknown = JSON.parse(row.records);
    if (!Array.isArray(records)) throw new Error(`page ${row.page_no} of run ${runId}: staged records are not an array`);
    yield records;
  }
}
