/**
 * A run's staging on PostgreSQL: the buffered pages keep their records as JSON text, and a batch of
 * pages is staged in one statement (one round trip, atomic on its own): the fenced counter update, and
 * the page rows and the staged records only for the run it updated. On the run's own client, whose
 * session holds the staging table (staged-records.ts).
 */
import { sql } from 'kysely';
import { select, type PostgresConnection } from '../../storage/connection.js';
import { bumpRun, type Fence, type FetchedRecords, type PreparedPage } from '../stage-page.js';

/** The records as JSON text. */
export interface SerialisedPage extends PreparedPage {
  readonly json: string;
}

export function serialisePage(page: FetchedRecords): SerialisedPage {
  const json = JSON.stringify(page.records);
  return { pageNo: page.pageNo, url: page.url, recordCount: page.records.length, json, bytes: json.length };
}

/** False when the run's lease is no longer this worker's: nothing was written. */
export async function stagePages(conn: PostgresConnection, fence: Fence, pages: readonly SerialisedPage[]): Promise<boolean> {
  if (pages.length === 0) return true;
  const [result] = await select(
    conn,
    sql<{ bumped: number }>`
      with bump as (${bumpRun(fence, pages)}
             returning run_id),
           page as (select *
                      from unnest(${pages.map((p) => p.pageNo)}::integer[], ${pages.map((p) => p.url)}::text[],
                                  ${pages.map((p) => p.recordCount)}::integer[], ${pages.map((p) => p.json)}::text[])
                        as p(page_no, url, records_fetched, records)),
           page_rows as (insert into ifw_import_run_page (run_id, page_no, url, records_fetched)
                         select bump.run_id, page.page_no, page.url, page.records_fetched from bump, page),
           staged as (insert into pg_temp.ifw_staged_records (run_id, page_no, records)
                      select bump.run_id, page.page_no, page.records from bump, page)
      select count(*)::integer as bumped from bump`,
  );
  return result?.bumped === 1;
}
