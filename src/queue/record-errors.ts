/**
 * The per-record errors of a request, written by the step that finishes it, inside the importer's
 * transaction (hence synchronous on the raw connection). An earlier, interrupted attempt may have
 * left none, but a retried one must never show two attempts' errors: delete first.
 */
import { sqliteOf, type Database } from '../storage/database.js';

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

export function replaceRequestErrors(db: Database, requestId: string, errors: readonly RequestRecordError[]): void {
  sqliteOf(db).prepare(DELETE_ERRORS).run(requestId);
  if (errors.length === 0) return;
  const insert = sqliteOf(db).prepare(INSERT_ERROR);
  errors.forEach((e, i) => {
    insert.run({ requestId, seq: i + 1, recordNo: e.recordNo, field: e.field, value: e.value, rule: e.rule, message: e.message });
  });
}
