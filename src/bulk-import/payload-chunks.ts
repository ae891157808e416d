/**
 * Reading a request's payload stored in chunks (upload.ts wrote them), in order, one chunk at a time:
 * synchronously on SQLite's worker connection, asynchronously on the PostgreSQL client of the import
 * transaction. A missing chunk is an internal error: the request is failed and says so.
 */
import { sql } from 'kysely';
import { select, type PostgresClientConnection, type SqliteConnection } from '../storage/connection.js';
import { selectBytes } from '../storage/postgres/bytes.js';

const missing = (requestId: string, seq: number, count: number): Error =>
  new Error(`chunk ${seq + 1} of ${count} of the payload of request ${requestId} is missing`);

/** One chunk's query; `inline` writes its values as literals (a COPY takes no parameters). */
const chunkQuery = (requestId: string, seq: number, inline = false) => {
  const [id, no] = inline ? [sql.lit(requestId), sql.lit(seq)] : [requestId, seq];
  return sql<{ data: Uint8Array }>`select data from ifw_bulk_import_payload_chunk where request_id = ${id} and seq = ${no}`;
};

export function sqliteChunks(conn: SqliteConnection, requestId: string, count: number): () => Iterable<Uint8Array> {
  return function* () {
    for (let seq = 0; seq < count; seq++) {
      const data = select(conn, chunkQuery(requestId, seq))[0]?.data;
      if (data === undefined) throw missing(requestId, seq, count);
      yield data;
    }
  };
}

export function postgresChunks(conn: PostgresClientConnection, requestId: string, count: number): () => AsyncIterable<Uint8Array> {
  return async function* () {
    for (let seq = 0; seq < count; seq++) {
      // As bytes (a binary COPY), not as the hex text node-postgres reads a bytea as: storage/postgres/bytes.ts.
      const data = await selectBytes(conn, chunkQuery(requestId, seq, true));
      if (data === undefined) throw missing(requestId, seq, count);
      yield data;
    }
  };
}
