/**
 * Reads a run's staged pages back, one page at a time, for the import. It runs inside the importer's
 * write transaction on the same connection, and better-sqlite3 refuses every other statement on a
 * connection while a `stmt.iterate()` cursor is open; so each page is its own keyset lookup on the
 * primary key (run_id, page_no), and only the current page's records are in memory. PostgreSQL reads
 * the same way (a cursor would serve too, but one page per lookup keeps both readers alike).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { PgClient } from '../importer/postgres/client.js';
import { stagedRecordsTable } from './staged-records.js';

const nextPage = (schema: 'temp' | 'pg_temp', runId: string, after: string): string => `
  select page_no, records
    from ${schema}.ifw_staged_records
   where run_id = ${runId}
     and page_no > ${after}
   order by page_no
   limit 1`;

const NEXT_PAGE = nextPage('temp', '?', '?');
const NEXT_PAGE_PG = nextPage('pg_temp', '$1', '$2');

interface StagedRow {
  page_no: number;
  records: string | null;
}

function parsePage(runId: string, row: StagedRow): readonly unknown[] {
  if (row.records === null) throw new Error(`page ${row.page_no} of run ${runId} has no staged records (already cleared)`);
  const records: unknown = JSON.parse(row.records);
  if (!Array.isArray(records)) throw new Error(`page ${row.page_no} of run ${runId}: staged records are not an array`);
  return records;
}

export function* stagedPages(sqlite: BetterSqlite3.Database, runId: string): Generator<readonly unknown[], void, undefined> {
  stagedRecordsTable(sqlite);
  const next = sqlite.prepare<[string, number], StagedRow>(NEXT_PAGE);
  for (let after = 0; ; ) {
    const row = next.get(runId, after);
    if (row === undefined) return;
    after = row.page_no;
    yield parsePage(runId, row);
  }
}

/** The same on PostgreSQL, on the run's own client, between the importer's statements on that client. */
export async function* stagedPagesPg(client: PgClient, runId: string): AsyncGenerator<readonly unknown[], void, undefined> {
  for (let after = 0; ; ) {
    const { rows } = await client.query<StagedRow>(NEXT_PAGE_PG, [runId, after]);
    const row = rows[0];
    if (row === undefined) return;
    after = row.page_no;
    yield parsePage(runId, row);
  }
}
