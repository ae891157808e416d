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
import type { MappedBatch } from '../mapped-batches.js';
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

/**
 * Characters of COPY text in a chunk at most (but one batch always), for records mapped on the mapping
 * thread: records of kilobytes each would otherwise make chunks of hundreds of megabytes, held twice
 * (the chunk written, and the next one mapped meanwhile) and copied once more as UTF-8 when sent. A
 * chunk of small records reaches its number of records first (about 2 M characters for 16 700
 * customers).
 */
export const CHUNK_CHARS = 4 * 1024 * 1024;

/**
 * Records in the first chunk of records mapped on the mapping thread, doubling from chunk to chunk up to
 * the chunk size. The import gathers the next chunk before it writes one, so with whole chunks the first
 * COPY waited for two of them (10 000 records, a tenth of a 100 000-record import) while the connection
 * sat idle; now it starts after 3 000.
 */
export const FIRST_MAPPED_CHUNK = 1000;

/** The chunk size for an import of about `expectedRecords` records (unknown: CHUNK_RECORDS). */
export const chunkRecordsFor = (expectedRecords: number | undefined): number => chunkRecordsLeft(expectedRecords, 0, 0);

/**
 * The same once `chunksDone` chunks of `recordsDone` records are written: the records still expected
 * spread over the chunks still allowed. An estimate that grows as the import reads on (records per byte
 * read so far, importer.ts) then still keeps the import within MAX_CHUNKS: later chunks make up for it.
 */
export const chunkRecordsLeft = (expectedRecords: number | undefined, chunksDone: number, recordsDone: number): number =>
  expectedRecords === undefined
    ? CHUNK_RECORDS
    : Math.max(CHUNK_RECORDS, Math.ceil(Math.max(0, expectedRecords - recordsDone) / Math.max(1, MAX_CHUNKS - chunksDone)));

/** Records per chunk: fixed, or asked before each chunk (chunks and records written so far). */
export type ChunkRecords = number | ((chunksDone: number, recordsDone: number) => number);

export type RecordBatches = Iterable<readonly unknown[]> | AsyncIterable<readonly unknown[]>;

/** Records already parsed and mapped on the mapping thread (mapped-batches.ts mappedBatchesAsync). */
export interface MappedRecordBatches {
  readonly mapped: AsyncIterable<MappedBatch>;
}

/** A chunk's records as read, made into a MappedChunk (mapped, written as COPY text) when its turn comes. */
type Gathered = (firstRecordNo: number) => MappedChunk;

export async function writeRecordsPg(
  client: PgClient,
  mapping: CompiledMapping,
  batches: RecordBatches | MappedRecordBatches,
  writeMode: WriteMode,
  onRecordError: OnRecordError,
  chunkRecords: ChunkRecords = CHUNK_RECORDS,
  aborted?: () => boolean,
  chunkChars = CHUNK_CHARS,
): Promise<ImportOutcome> {
  const tally = new Tally();
  // A function is asked once the chunk's first batch is in (an estimate of the number of records needs it).
  let size: number | undefined;
  let chunksDone = 0;
  let recordsDone = 0;
  const chunkSize = (): number => (size ??= typeof chunkRecords === 'number' ? chunkRecords : chunkRecords(chunksDone, recordsDone));
  const gathered = (records: number): void => {
    chunksDone++;
    recordsDone += records;
    size = undefined;
  };
  const stage = new Stage(client, buildStagedSql(mapping, writeMode));
  const writer = chunkWriter(client, mapping, writeMode, stage);
  /** The next chunk's records; null when all are read. Reading may use the client (a payload stored in PostgreSQL). */
  let nextChunk: () => Promise<Gathered | null>;
  /** Stops the mapping thread's work when the import ends early (a write failed, the import was aborted). */
  let close = (): Promise<void> => Promise.resolve();
  if ('mapped' in batches) {
    const source = batches.mapped[Symbol.asyncIterator]();
    close = async () => void (await source.return?.());
    // Whole mapped batches (about 1 000 records each) until the chunk has its size, in records or in text.
    nextChunk = async () => {
      const taken: MappedBatch[] = [];
      const records = Math.min(chunkSize(), FIRST_MAPPED_CHUNK * 2 ** chunksDone);
      for (let count = 0, chars = 0; count === 0 || (count < records && chars < chunkChars);) {
        const next = await source.next();
        if (next.done === true) break;
        taken.push(next.value);
        count += next.value.length;
        chars += next.value.text?.length ?? 0;
      }
      if (taken.length === 0) return null;
      gathered(taken.reduce((n, b) => n + b.length, 0));
      return (firstRecordNo) => writer.mapped(taken, firstRecordNo);
    };
  } else {
    const source = Symbol.asyncIterator in batches ? batches[Symbol.asyncIterator]() : batches[Symbol.iterator]();
    let batch: readonly unknown[] = [];
    let taken = 0;
    nextChunk = async () => {
      const chunk: unknown[] = [];
      for (;;) {
        if (taken === batch.length) {
          const next = await source.next();
          if (next.done === true) break;
          batch = next.value;
          taken = 0;
        }
        const take = Math.min(chunkSize() - chunk.length, batch.length - taken);
        for (let i = taken; i < taken + take; i++) chunk.push(batch[i]);
        taken += take;
        if (chunk.length === size) break;
      }
      if (chunk.length === 0) return null;
      gathered(chunk.length);
      return (firstRecordNo) => writer.map(chunk, firstRecordNo);
    };
  }
  let firstRecordNo = 1;
  const map = (gathered: Gathered | null): MappedChunk | null => {
    if (gathered === null) return null;
    const mapped = gathered(firstRecordNo);
    firstRecordNo += mapped.length;
    return mapped;
  };
  // One chunk ahead: the next one is read before a chunk is written, and mapped while the database
  // applies it.
  try {
    let current = map(await nextChunk());
    while (current !== null) {
      if (aborted?.() === true) throw new ImportAborted();
      const gathered = await nextChunk();
      let next = null as MappedChunk | null;
      await writer.write(current, tally, () => {
        next = map(gathered);
      });
      current = next;
    }
  } finally {
    await close();
  }
  await stage.drop();
  return tally.outcome(onRecordError);
}
