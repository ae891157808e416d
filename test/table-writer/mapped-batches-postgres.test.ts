/**
 * The PostgreSQL importer with the mapping thread (src/table-writer/mapped-batches.ts
 * mappedBatchesAsync: parsed, mapped and written as COPY text there) gives the outcome, the messages
 * and the rows of the import on one thread, for every write mode and error mode: records with
 * violations, keys repeated within and across chunks (the COPY straight into the table is refused and
 * the chunk judged), a NUL character (not staged), lone surrogates, exact decimals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportInput } from '../../src/table-writer/model.js';
import { SKIP_POSTGRES } from '../helpers/databases.js';
import { postgresBackend, type PostgresImportBackend } from '../helpers/import-backends.js';
import { chunked, item, plan, tables, tooDeepAmongRecords } from '../helpers/mapping-runs.js';

if (!SKIP_POSTGRES) {
  describe('PostgreSQL import on the mapping thread', () => {
    let b: PostgresImportBackend;
    beforeAll(async () => {
      b = await postgresBackend();
    });
    afterAll(async () => {
      await b.close();
    });

    async function run(payload: ImportInput['payload'], p: ImportInput['plan'], mapInThread: boolean): Promise<unknown> {
      await b.reset([item]);
      await b.exec(`insert into item (id, name) values (1, 'old'), (900, 'old')`);
      const { committed, outcome } = await b.importPayload({ plan: p, tables, payload, mapInThread }, { result: true });
      return { committed, outcome, rows: await b.all('select * from item order by id') };
    }

    it('imports thousands of records in many chunks as one thread does, errors and all', async () => {
      const records = Array.from({ length: 12_345 }, (_, i) => {
        if (i % 997 === 5) return { id: i + 2, name: 'too long', kind: 'c' };
        if (i % 1500 === 7) return 'not a record';
        if (i === 6001) return { id: i + 2, name: 'a\u0000b' };
        if (i === 6002) return { id: i + 2, name: '\\t\t\n' };
        if (i === 8003) return { id: i + 2, name: 'x\ud800', n: { qty: 123456789012345 } };
        // Keys repeated: an existing row (900), and a record of an earlier chunk.
        const id = i % 3000 === 11 ? 900 : i === 7000 ? 3 : i + 2;
        return { id, name: `n${i % 1000}`, n: { qty: i / 4 }, kind: i % 2 === 0 ? 'a' : 'b' };
      });
      const text = JSON.stringify(records);
      for (const [mode, onError] of [
        ['insert', 'skip'],
        ['insert', 'fail'],
        ['upsert', 'skip'],
        ['update', 'skip'],
      ] as const) {
        const p = plan(mode, onError, '');
        const alone = await run(text, p, false);
        expect(await run(text, p, true), `${mode}/${onError}: text, mapping thread`).toEqual(alone);
        expect(await run(chunked(text, 100_000), p, true), `${mode}/${onError}: chunks, mapping thread`).toEqual(alone);
      }
    });

    it('reads the records again where the straight reader gives up (nesting too deep), and imports them as one thread does', async () => {
      const text = tooDeepAmongRecords();
      for (const [mode, onError] of [
        ['insert', 'fail'],
        ['upsert', 'skip'],
      ] as const) {
        const p = plan(mode, onError, '');
        const alone = await run(text, p, false);
        expect(alone).toMatchObject({ committed: true, outcome: { ok: true } });
        expect(await run(text, p, true), `${mode}/${onError}: text`).toEqual(alone);
        expect(await run(chunked(text, 50_000), p, true), `${mode}/${onError}: chunks`).toEqual(alone);
      }
    });

    it('writes a clean insert straight into the table, the same rows as on one thread', async () => {
      const records = Array.from({ length: 11_000 }, (_, i) => ({ id: i + 1000, name: `n${i % 10}`, n: { qty: i / 8 }, kind: 'a' }));
      const text = JSON.stringify(records);
      const p = plan('insert', 'fail', '');
      const alone = await run(text, p, false);
      expect(alone).toMatchObject({ committed: true, outcome: { ok: true, inserted: 11_000 } });
      expect(await run(chunked(text, 65_536), p, true)).toEqual(alone);
    });
  });
}
