/**
 * The per-record errors of a run, kept like a bulk request's (bulk-import/record-errors.ts) and with
 * where each record came from: its page and its place on that page. Written by the step that ends the
 * run, inside the import's transaction, after its fenced status write; an earlier interrupted attempt's
 * are deleted first. At most MAX_KEPT_ERRORS rows, in one statement.
 */
import { sql } from 'kysely';
import { execute, type Connection } from '../storage/connection.js';
import type { Db } from '../storage/db.js';

export interface RunRecordError {
  readonly recordNo: number | null;
  /** The page the record came from, and its 1-based place on it; null for an error of no record. */
  readonly pageNo: number | null;
  readonly recordOnPage: number | null;
  readonly field: string | null;
  readonly value: string | null;
  readonly rule: string;
  readonly message: string;
}

export function replaceRunErrors(conn: Connection, runId: string, errors: readonly RunRecordError[]): void | Promise<void> {
  const remove = sql`delete from ifw_import_run_error where run_id = ${runId}`;
  const rows = errors.map(
    (e, i) => sql`(${runId}, ${i + 1}, ${e.recordNo}, ${e.pageNo}, ${e.recordOnPage}, ${e.field}, ${e.value}, ${e.rule}, ${e.message})`,
  );
  const insert = sql`insert into ifw_import_run_error (run_id, seq, record_no, page_no, record_on_page, field, value, rule, message) values ${sql.join(rows)}`;
  if (conn.dialect === 'sqlite') {
    execute(conn, remove);
    if (rows.length > 0) execute(conn, insert);
    return;
  }
  return (async () => {
    await execute(conn, remove);
    if (rows.length > 0) await execute(conn, insert);
  })();
}

/** A run's kept errors in record order, a page of them. */
export async function listRunErrors(
  db: Db,
  runId: string,
  { skip, limit }: { skip: number; limit: number },
): Promise<(RunRecordError & { readonly seq: number })[]> {
  const rows = await db
    .selectFrom('ifw_import_run_error')
    .select(['seq', 'record_no', 'page_no', 'record_on_page', 'field', 'value', 'rule', 'message'])
    .where('run_id', '=', runId)
    .orderBy('seq')
    .offset(skip)
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    seq: r.seq,
    recordNo: r.record_no,
    pageNo: r.page_no,
    recordOnPage: r.record_on_page,
    field: r.field,
    value: r.value,
    rule: r.rule,
    message: r.message,
  }));
}
