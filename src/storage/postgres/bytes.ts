/**
 * Reading one bytea value as its bytes, through `COPY (query) TO STDOUT (FORMAT binary)`.
 *
 * node-postgres answers a bytea in text format: hex, twice the value's size, in one JS string that it
 * decodes into a second copy (its binary answers are decoded as UTF-8 text, so they cannot carry
 * bytes). For the 1 MB chunks of a large payload that is about four times the CPU (136 MB read chunk by
 * chunk: 923 against 243 ms) and, on the thread that imports, most of its garbage collection: a 2 MB
 * string per chunk. COPY's binary format sends the value's bytes as they are, in the socket's pieces.
 */
import type { RawBuilder } from 'kysely';
import { to as copyTo } from 'pg-copy-streams';
import { queryCompiler, type PostgresClientConnection } from '../connection.js';

/** "PGCOPY\n\377\r\n\0": the first bytes of every binary COPY. */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** The signature, a 32-bit flags field and the length of the header extension that follows. */
const HEADER = SIGNATURE.length + 8;

/** The value of the one-column, at most one-row answer in `copy` (a whole binary COPY), or undefined for no row. */
export function binaryCopyValue(copy: Buffer): Buffer | undefined {
  const broken = (what: string): Error => new Error(`binary COPY answer ${what}`);
  if (copy.length < HEADER || !copy.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw broken('without its signature');
  let at = HEADER + copy.readUInt32BE(SIGNATURE.length + 4);
  /** The next `n` bytes' offset, moving past them. */
  const take = (n: number): number => {
    if (at + n > copy.length) throw broken('cut short');
    at += n;
    return at - n;
  };
  const fields = (): number => copy.readInt16BE(take(2));
  const first = fields();
  if (first === -1) return undefined;
  if (first !== 1) throw broken(`with ${first} columns, not 1`);
  const length = copy.readInt32BE(take(4));
  if (length < 0) throw broken('with a NULL value');
  const start = take(length);
  if (fields() !== -1) throw broken('with more than one row');
  return copy.subarray(start, start + length);
}

/**
 * The bytea value `query` selects (one column, at most one row), or undefined when it selects none.
 * COPY takes no parameters: `query` writes its values as literals (`sql.lit`). The client must be the
 * caller's own while this runs (a COPY holds its connection until its last byte).
 */
export async function selectBytes(conn: PostgresClientConnection, query: RawBuilder<unknown>): Promise<Buffer | undefined> {
  const { sql, parameters } = query.compile(queryCompiler('postgres'));
  if (parameters.length > 0) throw new Error('selectBytes: COPY takes no parameters; write the values with sql.lit');
  const pieces: Buffer[] = [];
  for await (const piece of conn.pg.query(copyTo(`COPY (${sql}) TO STDOUT (FORMAT binary)`))) pieces.push(piece as Buffer);
  return binaryCopyValue(pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces));
}
