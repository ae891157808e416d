/**
 * The PostgreSQL record loop: gathers records from the batches into chunks of CHUNK_RECORDS (small
 * pages are joined, a large payload is cut), writes each chunk (chunk.ts), and numbers records on
 * across batches, as the SQLite loop does. In fail mode the good records are still written (the
 * caller rolls them back) so that duplicates and relations later in the payload are judged exactly as
 * in a clean run.
 */
import type { OnRecordError, WriteMode } from '../../integrations/model.js';
import type { CompiledMapping } from '../../mapping/engine.js';
import { ImportAborted, type ImportOutcome } from '../model.js';
import { Tally } from '../tally.js';
import { chunkWriter, type MappedChunk } from './chunk.js';
import type { PgClient } from './client.js';
import { buildStagedSql, Stage } from './staging.js';

/**
 * Records per chunk, at least. Each chunk costs a handful of round trips and one subtransaction (its
 * savepoint); a transaction with more than 64 subtransactions that wrote makes other sessions'
 * visibility checks slower, so chunks are large: 20 for 100 000 records. Beyond this size throughput
 * no longer grows (2 000 and 5 000 measure the same), while the memory held and the work redone when a
 * chunk falls back to one record at a time do.
 */
export const CHUNK_RECORDS = 5000;

/**
 * Chunks per import at most, when the number of records is known beforehand: a larger import gets
 * larger chunks, so that its chunk savepoints (and the import's own) stay within the 64 subtransactions
 * PostgreSQL keeps track of cheaply.
 */
export const MAX_CHUNKS = 60;

/** The chunk size for an import of about `expectedRecords` records (unknown: CHUNK_RECORDS). */
export const chunkRecordsFor = (expectedRecords: number | undefined): number =>
  expectedRecords === undefined ? CHUNK_RECORDS : Math.max(CHUNK_RECORDS, Math.ceil(expectedRecords / MAX_CHUNKS));

export type RecordBatches = Iterable<readonly unknown[]> | AsyncIterable<readonly unknown[]>;

export async function writeRecordsPg(
  client: PgClient,
  mapping: CompiledMapping,
  batches: RecordBatches,
  writeMode: WriteMode,
  onRecordError: OnRecordError,
  chunkRecords: number | (() => number) = CHUNK_RECORDS,
  aborted?: () => boolean,
): Promise<ImportOutcome> {
  const tally = new Tally();
  // A function is asked once the first batch is in (an estimate of the number of records needs it).
  let size = typeof chunkRecords === 'number' ? chunkRecords : undefined;
  const stage = new Stage(client, buildStagedSql(mapping, writeMode));
  const writer = chunkWriter(client, mapping, writeMode, stage);
  const source = Symbol.asyncIterator in batches ? batches[Symbol.asyncIterator]() : batches[Symbol.iterator]();
  let batch: readonly unknown[] = [];
  let taken = 0;
  let firstRecordNo = 1;
  /** The next chunk's records; empty when all are read. Reading may use the client (a payload stored in PostgreSQL). */
  const nextRecords = async (): Promise<unknown[]> => {
    const chunk: unknown[] = [];
    for (;;) {
      if (taken === batch.length) {
        const next = await source.next();
        if (next.done === true) break;
        batch = next.value;
        taken = 0;
        size ??= (chunkRecords as () => number)();
      }
      const take = Math.min(size! - chunk.length, batch.length - taken);
      for (let i = taken; i < taken + take; i++) chunk.push(batch[i]);
      taken += take;
      if (chunk.length === size) break;
    }
    return chunk;
  };
  const map = (records: readonly unknown[]): MappedChunk | null => {
    if (records.length === 0) return null;
    const mapped = writer.map(records, firstRecordNo);
    firstRecordNo += records.length;
    return mapped;
  };
  // One chunk ahead: the next one is read before a chunk is written, and mapped while the database
  // applies it.
  let current = map(await nextRecords());
  while (current !== null) {
    if (aborted?.() === true) throw new ImportAborted();
    const records = await nextRecords();
    let next = null as MappedChunk | null;
    await writer.write(current, tally, () => {
      next = map(records);
    });
    current = next;
  }
  await stage.drop();
  return tally.outcome(onRecordError);
}
