/**
 * The mapping thread heard by an asynchronous importer (src/table-writer/mapped-batches-async.ts): it
 * maps on while the import writes (a text's pieces handed over at once, up to AHEAD_ASYNC batches
 * ahead), a payload stored in the database is read only while the import waits for a batch (its
 * connection is busy otherwise), large records are held ahead only up to a number of characters, the
 * batches come in order and whole, a payload that stops being JSON fails where it does, and an import
 * that leaves early frees the thread.
 */
import { describe, expect, it, vi } from 'vitest';
import { AHEAD_ASYNC, AHEAD_ASYNC_CHARS, mappedBatchesAsync } from '../../src/table-writer/mapped-batches-async.js';
import { mappedBatches, spareMemory, textChunks } from '../../src/table-writer/mapped-batches.js';
import { PayloadProblem } from '../../src/mapping/payload-stream.js';
import type { ChunkedPayload } from '../../src/table-writer/model.js';
import type { TargetTable } from '../../src/tables/model.js';
import { plan, tables } from '../helpers/mapping-runs.js';
import { columnsPlan } from '../helpers/plans.js';

const PIECE = 4096;
const records = (n: number): string => JSON.stringify(Array.from({ length: n }, (_, i) => ({ id: i + 1, name: 'n' })));

/** The text's bytes in pieces, counting the pieces taken; `read` makes them come asynchronously, as stored chunks do. */
function pieces(text: string, read?: (piece: number) => void): ChunkedPayload & { taken: () => number } {
  const bytes = Buffer.from(text);
  let taken = 0;
  return {
    bytes: bytes.length,
    taken: () => taken,
    chunks:
      read === undefined
        ? function* () {
            for (let at = 0; at < bytes.length; at += PIECE, taken++) yield bytes.subarray(at, at + PIECE);
          }
        : async function* () {
            for (let at = 0; at < bytes.length; at += PIECE, taken++) {
              await new Promise((resolve) => setImmediate(resolve));
              read(taken);
              yield bytes.subarray(at, at + PIECE);
            }
          },
  };
}

const recordsIn = (batches: readonly { length: number }[]): number => batches.reduce((n, b) => n + b.length, 0);

describe('the mapping thread for an asynchronous import', () => {
  it('maps on while the import writes: a text is handed over as the thread asks, up to AHEAD_ASYNC batches ahead', async () => {
    const payload = pieces(records(60_000));
    const batches = mappedBatchesAsync({ plan: plan('insert', 'fail', ''), tables, payload }, true);
    const first = await batches.next();
    expect(first.done).toBe(false);
    // The import writes now and asks for nothing: the thread is still given pieces, and maps a whole
    // chunk of the import's and more (about 30 000 records of some 20 bytes, 4 KB pieces).
    const ahead = Math.floor(((AHEAD_ASYNC - 2) * 1000 * 20) / PIECE);
    await vi.waitFor(() => expect(payload.taken()).toBeGreaterThan(ahead), { timeout: 20_000, interval: 20 });
    const rest = [];
    for await (const batch of batches) rest.push(batch);
    expect(first.value!.length + recordsIn(rest)).toBe(60_000);
    expect(rest.every((b) => b.text !== undefined && b.values.length === 0)).toBe(true);
  });

  it('holds at most AHEAD_ASYNC_CHARS of COPY text ahead when records are large', async () => {
    const note: TargetTable = {
      name: 'note',
      primaryKey: ['id'],
      fields: [
        { name: 'id', type: 'integer' },
        { name: 'body', type: 'text', maxLength: 10_000 },
      ],
    };
    const body = 'x'.repeat(2000);
    const text = JSON.stringify(Array.from({ length: 12_000 }, (_, i) => ({ id: i + 1, body })));
    const payload = pieces(text);
    const input = {
      plan: columnsPlan('note', [
        ['id', 'id'],
        ['body', 'body'],
      ]),
      tables: new Map([['note', note]]),
      payload,
    };
    const batches = mappedBatchesAsync(input, true);
    const first = await batches.next();
    // Batches of about 2 MB: some 4 fit in the characters allowed, far fewer than AHEAD_ASYNC.
    const batchChars = first.value!.text!.length;
    expect(batchChars).toBeGreaterThan(AHEAD_ASYNC_CHARS / 8);
    const most = Math.ceil((AHEAD_ASYNC_CHARS / batchChars + 2) * (batchChars / PIECE));
    await vi.waitFor(() => expect(payload.taken()).toBeGreaterThan(most / 2), { timeout: 20_000, interval: 20 });
    // Then it stops for room: what it took stays within the bound (a mapping thread given 32 batches would read on).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(payload.taken()).toBeLessThanOrEqual(most);
    let records = first.value!.length;
    for await (const batch of batches) records += batch.length;
    expect(records).toBe(12_000);
  });

  it('reads a stored payload only while the import waits for a batch (its connection is free then)', async () => {
    let writing = false;
    const readWhileWriting: number[] = [];
    const payload = pieces(records(40_000), (piece) => {
      if (writing) readWhileWriting.push(piece);
    });
    const batches = mappedBatchesAsync({ plan: plan('insert', 'fail', ''), tables, payload }, false);
    let taken = 0;
    let writes = 0;
    for await (const batch of batches) {
      taken += batch.length;
      // After every fifth batch the import "writes" for a while: its connection is busy, nothing is
      // read, and the thread maps on with the pieces read ahead.
      if (++writes % 5 === 0) {
        writing = true;
        await new Promise((resolve) => setTimeout(resolve, 30));
        writing = false;
      }
    }
    expect(taken).toBe(40_000);
    expect(writes).toBeGreaterThanOrEqual(30);
    expect(readWhileWriting).toEqual([]);
  });

  it('fails where the payload stops being JSON, with the error of the synchronous import, after the same batches every time', async () => {
    const text = `${records(5000).slice(0, -1)},{"id":1,"name":"n"} nonsense]`;
    const input = { plan: plan('insert', 'fail', ''), tables };
    const failure = (err: unknown) => (err instanceof PayloadProblem ? err.error : err);
    const sync: number[] = [];
    let syncError: unknown;
    try {
      for (const batch of mappedBatches({ ...input, payload: pieces(text) })) sync.push(batch.length);
    } catch (err) {
      syncError = failure(err);
    }
    expect(syncError).toMatchObject({ message: expect.stringContaining('not valid JSON') });
    // The end comes while the import may be reading a piece ahead: it must not be missed, any time.
    // Records at the root go to COPY text bytes (json-copy.ts) in batches of 1 000, up to the last
    // whole record before the break; the general path, reading again, then says what is wrong.
    let first: number[] | undefined;
    for (let run = 0; run < 20; run++) {
      const async: number[] = [];
      let asyncError: unknown;
      try {
        for await (const batch of mappedBatchesAsync({ ...input, payload: pieces(text, () => undefined) }, true)) async.push(batch.length);
      } catch (err) {
        asyncError = failure(err);
      }
      first ??= async;
      expect({ run, batches: async, error: asyncError }).toEqual({ run, batches: first, error: syncError });
      expect(async.reduce((n, b) => n + b, 0)).toBeLessThanOrEqual(5001);
    }
  });

  it('hands a text over in pieces of a megabyte at most, never between the two halves of a character', () => {
    const mb = 1 << 20;
    for (const text of [`${'a'.repeat(mb - 1)}😀${'b'.repeat(10)}`, 'é'.repeat(mb), 'x'.repeat(2 * mb + 3)]) {
      const pieces = [...(textChunks(text).chunks() as Iterable<Uint8Array>)].map((piece) => Buffer.from(piece));
      expect(pieces.every((piece) => piece.length <= mb && !piece.toString().includes('\ufffd'))).toBe(true);
      expect(Buffer.concat(pieces).toString()).toBe(text);
    }
  });

  it('writes the pieces of a text into memory the thread gave back, and keeps at most four megabytes of it', async () => {
    const text = records(300_000);
    expect(Buffer.byteLength(text)).toBeGreaterThan(6 * 1024 * 1024);
    for (let run = 0; run < 2; run++) {
      let n = 0;
      for await (const batch of mappedBatchesAsync({ plan: plan('insert', 'fail', ''), tables, payload: text }, true)) n += batch.length;
      expect(n).toBe(300_000);
      expect(spareMemory()).toBeGreaterThan(0);
      expect(spareMemory()).toBeLessThanOrEqual(4 * 1024 * 1024);
    }
  });

  it('stops the thread when the import leaves early, and maps the next import from the start', async () => {
    const text = records(50_000);
    const early = mappedBatchesAsync({ plan: plan('insert', 'fail', ''), tables, payload: pieces(text, () => undefined) }, true);
    expect((await early.next()).done).toBe(false);
    await early.return();

    let count = 0;
    for await (const batch of mappedBatchesAsync({ plan: plan('insert', 'fail', ''), tables, payload: pieces(text) }, true))
      count += batch.length;
    expect(count).toBe(50_000);
  });
});
