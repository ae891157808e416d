/**
 * The per-record errors of a request, written by the step that finishes it, inside the importer's
 * transaction (synchronous on SQLite, on the same pg client on PostgreSQL). An earlier, interrupted
 * attempt may have left none, but a retried one must never show two attempts' errors: delete first.
 * The errors go in with one statement (at most MAX_KEPT_ERRORS rows, well within both dialects'
 * parameter limits).
 */
import { sql } from 'kysely';
import { execute, type Connection, type PostgresConnection, type SqliteConnection } from '../storage/connection.js';

export interface RequestRecordError {
  readonly recordNo: number | null;
  readonly field: string | null;
  readonly value: string | null;
  readonly rule: string;
  readonly message: string;
}

export function replaceRequestErrors(conn: SqliteConnection, requestId: string, errors: readonly RequestRecordError[]): void;
export function replaceRequestErrors(conn: PostgresConnection, requestId: string, errors: readonly RequestRecordError[]): Promise<void>;
export function replaceRequestErrors(conn: Connection, requestId: string, errors: readonly RequestRecordError[]): void | Promise<void> {
  const remove = sql`delete from ifw_bulk_import_error where request_id = ${requestId}`;
  const rows = errors.map((e, i) => sql`(${requestId}, ${i + 1}, ${e.recordNo}, ${e.field}, ${e.value}, ${e.rule}, ${e.message})`);
  const insert = sql`insert into ifw_bulk_import_error (request_id, seq, record_no, field, value, rule, message) values ${sql.join(rows)}`;
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
