/**
 * The PostgreSQL record loop: gathers records from the batches into chunks of CHUNK_RECORDS (small
 * pages are joined, a large payload is cut), writes each chunk (chunk.ts), and numbers records on
 * across batches, as the SQLite loop does. In fail mode the good records are still written (the
 * caller rolls them back) so that duplicates and relations later in the payload are judged exactly as
 * in a clean run.
 */
import type { OnRecordError, WriteMode } from '../../integrations/model.js';
import type { CompiledMapping } from '../../mapping/engine.js';
import type { ImportOutcome } from '../model.js';
import { Tally } from '../tally.js';
import { chunkWriter } from './chunk.js';
import type { PgClient } from './client.js';

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
): Promise<ImportOutcome> {
  const tally = new Tally();
  // A function is asked once the first batch is in (an estimate of the number of records needs it).
  let size = typeof chunkRecords === 'number' ? chunkRecords : undefined;
  const write = chunkWriter(client, mapping, writeMode);
  let chunk: unknown[] = [];
  let firstRecordNo = 1;
  const flush = async (): Promise<void> => {
    await write(chunk, firstRecordNo, tally);
    firstRecordNo += chunk.length;
    chunk = [];
  };
  for await (const records of batches) {
    size ??= (chunkRecords as () => number)();
    for (let start = 0; start < records.length;) {
      const take = Math.min(size - chunk.length, records.length - start);
      for (let i = start; i < start + take; i++) chunk.push(records[i]);
      start += take;
      if (chunk.length === size) await flush();
    }
  }
  if (chunk.length > 0) await flush();
  return tally.outcome(onRecordError);
}
