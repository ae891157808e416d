/**
 * The one INSERT of new Bulk Import Requests. Kysely runs it on PostgreSQL (submit.ts); the SQLite
 * writer thread prepares its compiled text once and binds each row's values in the compiled order
 * (`preparedRequestInsert`), so group commit keeps better-sqlite3's prepared-statement speed.
 */
import type { Insertable, Kysely } from 'kysely';
import type { BulkImportRequestRow, DB } from '../storage/schema.js';
import type { NewRequestRow } from './sqlite/writer-messages.js';

/** A new request as its row: Pending, with no claim, no outcome yet. */
export const requestRow = (r: NewRequestRow): Insertable<BulkImportRequestRow> => ({
  request_id: r.requestId,
  integration_sorting_order: r.integrationSortingOrder,
  payload: r.payload,
  payload_chunks: r.payloadChunks,
  payload_length: r.payloadLength,
  status: 'Pending',
  submitted_at: r.submittedAt,
  submitted_by: r.submittedBy,
});

export const insertRequests = (db: Kysely<DB>, rows: readonly NewRequestRow[]) =>
  db.insertInto('ifw_bulk_import_request').values(rows.map(requestRow));

type Column = keyof Insertable<BulkImportRequestRow>;

/**
 * The statement for one row, compiled by `compiler` (a query builder that need not be connected), and
 * the row's values in the order of its parameters: each column is compiled with its own name as the
 * value, so the compiled parameters say which column each placeholder binds.
 */
export function preparedRequestInsert(compiler: Kysely<DB>): { sql: string; values: (r: NewRequestRow) => unknown[] } {
  const sample = requestRow({
    requestId: '',
    integrationSortingOrder: 0,
    payload: '',
    payloadChunks: 0,
    payloadLength: null,
    submittedAt: '',
    submittedBy: null,
  });
  const columns = Object.keys(sample) as Column[];
  const named = Object.fromEntries(columns.map((c) => [c, c])) as unknown as Insertable<BulkImportRequestRow>;
  const compiled = compiler.insertInto('ifw_bulk_import_request').values(named).compile();
  const order = compiled.parameters.map((p) => {
    if (!columns.includes(p as Column)) throw new Error(`the request INSERT compiled a parameter that is no column: ${String(p)}`);
    return p as Column;
  });
  return {
    sql: compiled.sql,
    values: (r) => {
      const row = requestRow(r);
      return order.map((c) => row[c]);
    },
  };
}
