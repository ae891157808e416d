/**
 * The request stores' chunk writes (src/bulk-import/submit.ts kyselyRequestStore, and on PostgreSQL
 * src/bulk-import/postgres/request-store.ts, which the service uses): a chunk of a large payload is
 * stored byte for byte, and on PostgreSQL in one prepared statement whose own commit does not wait for
 * the disk (the request's durable commit, after its chunks, makes them durable), without changing the
 * setting for anything else on the connection.
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postgresRequestStore } from '../../src/bulk-import/postgres/request-store.js';
import { kyselyRequestStore, type RequestStore } from '../../src/bulk-import/submit.js';
import { parseDatabaseUrl } from '../../src/core/config.js';
import { openDatabase, type Database } from '../../src/storage/database.js';
import { BACKENDS, type Backend, type FreshDatabase } from '../helpers/databases.js';

/** A migrated database of `backend` for each test, opened as the service opens it. */
function eachDatabase(backend: Backend, poolSize?: number): () => Database {
  let fresh: FreshDatabase | undefined;
  let db: Database | undefined;
  beforeEach(async () => {
    fresh = await backend.fresh();
    db = openDatabase(parseDatabaseUrl(fresh.url, os.tmpdir(), poolSize), { busyTimeoutMs: 10_000 });
  });
  afterEach(async () => {
    await db?.close();
    await fresh?.cleanup();
  });
  return () => db!;
}

/** The store the service writes through on `db`'s dialect (on SQLite it is the writer thread's, whose statements are the portable store's). */
const storeOf = (db: Database): RequestStore => (db.dialect === 'postgres' ? postgresRequestStore(db) : kyselyRequestStore(db));

describe.each(BACKENDS)('payload chunks written by the request store on $name', (backend) => {
  describe.skipIf(backend.skip)(backend.name, () => {
    const database = eachDatabase(backend);

    const stored = async (requestId: string): Promise<Buffer[]> => {
      const rows = await database()
        .selectFrom('ifw_bulk_import_payload_chunk')
        .select(['seq', 'data'])
        .where('request_id', '=', requestId)
        .orderBy('seq')
        .execute();
      return rows.map((row) => Buffer.from(row.data));
    };

    it('stores each chunk byte for byte: every byte value, a megabyte, an empty one; a chunk written twice is refused', async () => {
      const store = storeOf(database());
      const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const large = randomBytes((1 << 20) + 7);
      await store.writeChunk('r1', 0, every);
      await store.writeChunk('r1', 1, large);
      await store.writeChunk('r1', 2, new Uint8Array(0));
      await store.writeChunk('r2', 0, Buffer.from('other'));
      const chunks = await stored('r1');
      expect(chunks).toHaveLength(3);
      expect(chunks[0]).toEqual(every);
      expect(chunks[1]!.equals(large)).toBe(true);
      expect(chunks[2]).toEqual(Buffer.alloc(0));
      await expect(store.writeChunk('r1', 1, Buffer.from('again'))).rejects.toThrow();
      expect((await stored('r1'))[1]!.equals(large)).toBe(true);
      await store.discardChunks('r1');
      expect(await stored('r1')).toEqual([]);
      expect(await stored('r2')).toEqual([Buffer.from('other')]);
    });
  });
});

const postgres = BACKENDS.find((b) => b.name === 'postgres')!;

describe.skipIf(postgres.skip)('payload chunks on PostgreSQL', () => {
  // One connection: what it has prepared is what the store prepared.
  const database = eachDatabase(postgres, 1);

  it("commits a chunk without waiting for the disk, and leaves the connection's setting as it was", async () => {
    // A trigger notes the setting the inserting transaction runs with (dropped with the database's reset).
    await sql`create table chunk_commit_seen (seq integer, synchronous_commit text)`.execute(database());
    await sql`create function note_chunk_commit() returns trigger language plpgsql as $$
        begin
          insert into chunk_commit_seen values (new.seq, current_setting('synchronous_commit'));
          return new;
        end $$`.execute(database());
    await sql`create trigger note_chunk_commit before insert on ifw_bulk_import_payload_chunk
        for each row execute function note_chunk_commit()`.execute(database());
    const store = storeOf(database());
    for (let seq = 0; seq < 4; seq++) await store.writeChunk('r1', seq, Buffer.from(`chunk ${seq}`));
    const seen = await sql<{ seq: number; synchronous_commit: string }>`select * from chunk_commit_seen order by seq`.execute(database());
    expect(seen.rows).toEqual([0, 1, 2, 3].map((seq) => ({ seq, synchronous_commit: 'off' })));
    // Every other statement on the pool's connections still commits durably.
    for (let i = 0; i < 4; i++) {
      const { rows } = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(database());
      expect(rows[0]!.synchronous_commit).toBe('on');
    }
  });

  it('writes chunks through a statement the connection prepared once', async () => {
    const store = storeOf(database());
    for (let seq = 0; seq < 3; seq++) await store.writeChunk('r1', seq, Buffer.from(`chunk ${seq}`));
    const prepared = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(database());
    expect(prepared.rows).toEqual([
      { name: 'ifw_write_payload_chunk', statement: expect.stringContaining('insert into ifw_bulk_import_payload_chunk') },
    ]);
  });
});
