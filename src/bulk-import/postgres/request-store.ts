/**
 * The request store on PostgreSQL (submit.ts RequestStore): requests and discards as the portable
 * store writes them, and a payload's chunks in one statement, prepared once per pooled connection.
 *
 * One statement, one round trip: its own transaction, whose commit need not wait for the disk
 * (`set_config(…, true)` is `SET LOCAL`; the request's durable commit, after its chunks, makes them
 * durable). A BEGIN, SET LOCAL, INSERT and COMMIT were four, each waiting for a turn of the HTTP
 * thread's event loop, busy reading the body meanwhile.
 *
 * Prepared, because the server plans an unnamed statement with its parameters as constants, and copies
 * the megabyte twice doing so (`eval_const_expressions`, then `copyObject`); a prepared statement is
 * planned once with its parameters left as such. The submit phase of a 128 MB payload took 3.82 s
 * at the median against 4.70 s (docs/benchmarks.md).
 */
import { sql } from 'kysely';
import { queryCompiler } from '../../storage/connection.js';
import type { PostgresDatabase } from '../../storage/database.js';
import { kyselyRequestStore, type RequestStore } from '../submit.js';

/** The statement's name on each connection of the pool (pg prepares it there on first use). */
const WRITE_CHUNK = 'ifw_write_payload_chunk';

/** The statement's text, its parameters `$1` (request id), `$2` (seq) and `$3` (data). */
const writeChunkText = sql`with durability as materialized (select set_config('synchronous_commit', 'off', true))
  insert into ifw_bulk_import_payload_chunk (request_id, seq, data)
  select ${''}::text, ${0}::integer, ${new Uint8Array(0)}::bytea from durability`.compile(queryCompiler('postgres')).sql;

export function postgresRequestStore(db: PostgresDatabase): RequestStore {
  return {
    ...kyselyRequestStore(db),
    async writeChunk(requestId, seq, data) {
      await db.pool.query({ name: WRITE_CHUNK, text: writeChunkText, values: [requestId, seq, data] });
    },
  };
}
