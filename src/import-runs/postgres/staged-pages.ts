/**
 * Reads a run's staged pages back on PostgreSQL, one page at a time, for the import: each page is its
 * own keyset lookup on the primary key (run_id, page_no), on the run's own client between the
 * importer's statements, so only the current page's records are in memory.
 */
import type { PgClient } from '../../table-writer/postgres/client.js';

const NEXT_PAGE_PG = `
  select page_no, records
    from pg_temp.ifw_staged_records
   where run_id = $1
     and page_no > $2
   order by page_no
   limit 1`;

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

export async function* stagedPagesPg(client: PgClient, runId: string): AsyncGenerator<readonly unknown[], void, undefined> {
  for (let after = 0; ;) {
    const { rows } = await client.query<StagedRow>(NEXT_PAGE_PG, [runId, after]);
    const row = rows[0];
    if (row === undefined) return;
    after = row.page_no;
    yield parsePage(runId, row);
  }
}
