/**
 * A bytea value read as its bytes through a binary COPY (src/storage/postgres/bytes.ts): the parser of
 * the binary COPY answer, case by case, then against the real server: every byte value, a value of
 * megabytes (many socket pieces), no row, and the client usable afterwards.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onClient } from '../../src/storage/connection.js';
import { binaryCopyValue, selectBytes } from '../../src/storage/postgres/bytes.js';
import { SKIP_POSTGRES } from '../helpers/databases.js';
import { postgresBackend, type PostgresImportBackend } from '../helpers/import-backends.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const int16 = (n: number): Buffer => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
/** A binary COPY answer: header (flags 0, `extension` bytes of header extension), the tuples, the trailer. */
const answer = (tuples: Buffer[], extension = Buffer.alloc(0)): Buffer =>
  Buffer.concat([SIGNATURE, int32(0), int32(extension.length), extension, ...tuples, int16(-1)]);
const tuple = (...values: (Buffer | null)[]): Buffer =>
  Buffer.concat([int16(values.length), ...values.flatMap((v) => (v === null ? [int32(-1)] : [int32(v.length), v]))]);

describe('the binary COPY answer of one bytea value', () => {
  it.each([
    ['one row', answer([tuple(Buffer.from('{"a":1}'))]), Buffer.from('{"a":1}')],
    ['an empty value', answer([tuple(Buffer.alloc(0))]), Buffer.alloc(0)],
    [
      'every byte value',
      answer([tuple(Buffer.from(Array.from({ length: 256 }, (_, i) => i)))]),
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
    ],
    ['a header extension', answer([tuple(Buffer.from('x'))], Buffer.from('ext!')), Buffer.from('x')],
    ['no row', answer([]), undefined],
  ])('reads %s', (_, copy, value) => {
    expect(binaryCopyValue(copy)).toEqual(value);
  });

  it.each([
    ['a wrong signature', Buffer.from('PGCOPY\nxx\r\n\0\0\0\0\0\0\0\0\0'), /without its signature/],
    ['two rows', answer([tuple(Buffer.from('a')), tuple(Buffer.from('b'))]), /more than one row/],
    ['two columns', answer([tuple(Buffer.from('a'), Buffer.from('b'))]), /2 columns/],
    ['a NULL', answer([tuple(null)]), /NULL/],
    ['a value cut short', answer([tuple(Buffer.from('abcdef'))]).subarray(0, 30), /cut short/],
    ['no trailer', answer([tuple(Buffer.from('a'))]).subarray(0, -2), /cut short/],
  ])('refuses %s', (_, copy, message) => {
    expect(() => binaryCopyValue(copy)).toThrow(message);
  });
});

describe.skipIf(SKIP_POSTGRES)('selectBytes on PostgreSQL', () => {
  let b: PostgresImportBackend;
  beforeAll(async () => {
    b = await postgresBackend();
    await b.exec('CREATE TABLE blob (id int PRIMARY KEY, data bytea)');
  });
  afterAll(async () => {
    await b.close();
  });
  const of = (id: number) => sql`select data from blob where id = ${sql.lit(id)}`;

  it('reads a value as its bytes: every byte value, megabytes in many pieces, an empty one; no row is undefined', async () => {
    const conn = onClient(b.client);
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const large = randomBytes(3 * 1024 * 1024 + 7);
    await b.client.query('INSERT INTO blob (id, data) VALUES (1, $1), (2, $2), (3, $3)', [every, large, Buffer.alloc(0)]);
    expect(await selectBytes(conn, of(1))).toEqual(every);
    expect((await selectBytes(conn, of(2)))!.equals(large)).toBe(true);
    expect(await selectBytes(conn, of(3))).toEqual(Buffer.alloc(0));
    expect(await selectBytes(conn, of(4))).toBeUndefined();
    // The client is free again after each COPY.
    expect((await b.client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('refuses a query with parameters (COPY takes none), and a NULL', async () => {
    const conn = onClient(b.client);
    await expect(selectBytes(conn, sql`select data from blob where id = ${1}`)).rejects.toThrow(/sql\.lit/);
    await b.client.query('INSERT INTO blob (id, data) VALUES (5, NULL)');
    await expect(selectBytes(conn, of(5))).rejects.toThrow(/NULL/);
    expect((await b.client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });
});
