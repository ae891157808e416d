/**
 * The per-record errors of a request, written by the step that finishes it, inside the importer's
 * transaction (synchronous on SQLite, on the same pg client on PostgreSQL). An earlier, interrupted
 * attempt may have left none, but a retried one must never show two attempts' errors: delete first.
 */
import type { PostgresConnection, SqliteConnection } from '../storage/connection.js';

export interface RequestRecordError {
  readonly recordNo: number | null;
  readonly field: string | null;
  readonly value: string | null;
  readonly rule: string;
  readonly message: string;
}

const DELETE_ERRORS = `delete from ifw_bulk_import_error where request_id = ?`;

const INSERT_ERROR = `
  insert into ifw_bulk_import_error (request_id, seq, record_no, field, value, rule, message)
  values (@requestId, @seq, @recordNo, @field, @value, @rule, @message)`;

/** PostgreSQL: every error in one statement (up to MAX_KEPT_ERRORS rows), arrays unnested in order. */
const INSERT_ERRORS_PG = `
  insert into ifw_bulk_import_error (request_id, seq, record_no, field, value, rule, message)
  select $1, e.seq, e.record_no, e.field, e.value, e.rule, e.message
    from unnest($2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[]) as e(seq, record_no, field, value, rule, message)`;

export function replaceRequestErrors(conn: SqliteConnection, requestId: string, errors: readonly RequestRecordError[]): void;
export function replaceRequestErrors(conn: PostgresConnection, requestId: string, errors: readonly RequestRecordError[]): Promise<void>;
export function replaceRequestErrors(
  conn: SqliteConnection | PostgresConnection,
  requestId: string,
  errors: readonly RequestRecordError[],
): void | Promise<void> {
  if (conn.dialect === 'postgres') return replaceRequestErrorsPg(conn, requestId, errors);
  conn.sqlite.prepare(DELETE_ERRORS).run(requestId);
  if (errors.length === 0) return;
  const insert = conn.sqlite.prepare(INSERT_ERROR);
  errors.forEach((e, i) => {
    insert.run({ requestId, seq: i + 1, recordNo: e.recordNo, field: e.field, value: e.value, rule: e.rule, message: e.message });
  });
}

async function replaceRequestErrorsPg(conn: PostgresConnection, requestId: string, errors: readonly RequestRecordError[]): Promise<void> {
  await conn.pg.query(DELETE_ERRORS.replace('?', '$1'), [requestId]);
  if (errors.length === 0) return;
  await conn.pg.query(INSERT_ERRORS_PG, [
    requestId,
    errors.map((_, i) => i + 1),
    errors.map((e) => e.recordNo),
    errors.map((e) => e.field),
    errors.map((e) => e.value),
    errors.map((e) => e.rule),
    errors.map((e) => e.message),
  ]);
}
