/**
 * Where staged records wait for the import on PostgreSQL: a TEMP table of the run's own session (a pool
 * client the run holds from its first page to its end), not a table of the database. Staged records
 * are scratch data (a run that is interrupted starts again from page 1, and only the session that
 * fetched them reads them), so they stay out of the write-ahead log, and the import's durable commit
 * carries the target rows and the run's status, not megabytes of staged JSON being cleared. The page
 * rows in `ifw_import_run_page` (URL, record count) stay in the database, where every reader sees the
 * run's progress. SQLite stages mapped rows instead: table-writer/sqlite/staged-rows.ts.
 *
 * Pages are read back one at a time for the import: each page is its own keyset lookup on the primary
 * key (run_id, page_no), on the run's client between the importer's statements, so only the current
 * page's records are in memory.
 */
import { sql } from 'kysely';
import { execute, select, type PostgresConnection } from '../../storage/connection.js';

/** The session's staging table; cheap when it exists, so a run asks once as it starts. */
export async function createStagedRecordsTable(conn: PostgresConnection): Promise<void> {
  // Asked first rather than `create … if not exists`, whose notice "relation already exists, skipping"
  // would reach the server log once per run and say nothing.
  const [found] = await select(conn, sql<{ exists: boolean }>`select to_regclass('pg_temp.ifw_staged_records') is not null as exists`);
  if (found?.exists === true) return;
  await execute(
    conn,
    sql`create temp table ifw_staged_records (
          run_id text not null,
          page_no integer not null,
          records text not null,
          primary key (run_id, page_no)
        )`,
  );
}

export async function clearStagedRecords(conn: PostgresConnection, runId: string): Promise<void> {
  await execute(conn, sql`delete from pg_temp.ifw_staged_records where run_id = ${runId}`);
}

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

export async function* stagedPages(conn: PostgresConnection, runId: string): AsyncGenerator<readonly unknown[], void, undefined> {
  for (let after = 0; ;) {
    const [row] = await select(
      conn,
      sql<StagedRow>`
        select page_no, records
          from pg_temp.ifw_staged_records
         where run_id = ${runId}
           and page_no > ${after}
         order by page_no
         limit 1`,
    );
    if (row === undefined) return;
    after = row.page_no;
    yield parsePage(runId, row);
  }
}
