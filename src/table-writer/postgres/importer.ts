/**
 * The PostgreSQL import writer: the same import as the SQLite one (same plan, same outcome, same
 * messages), on a connection whose transaction the caller controls. The caller begins it, hands in
 * the client, and commits or rolls back afterwards; the import only ever uses savepoints, so that
 * whatever it undoes leaves the caller's transaction usable:
 *
 *   SAVEPOINT ifw_import
 *     data writes (chunk savepoints inside)   → ROLLBACK TO ifw_import when the outcome is not ok
 *     finish(outcome): the caller's status write, same transaction
 *   RELEASE ifw_import                        ← or ROLLBACK TO it when finish says the lease is lost
 *
 * As on SQLite, "Completed" and "rows present" then commit together or not at all.
 */
import type { CompiledMapping } from '../../mapping/engine.js';
import type { RecordError } from '../../mapping/messages.js';
import type { ChunkedPayload, ImportInput, ImportOutcome, ImportResult, ImportTarget } from '../model.js';
import { PayloadProblem } from '../../mapping/payload-stream.js';
import { compileImport, isRecordError, payloadSourceAsync, tableNotWritable, type RecordSource } from '../plan.js';
import { failedOutcome } from '../tally.js';
import { isMissingObjectPgError, pgMissingObject, release, rollbackAndRelease, rollbackTo, savepoint, type PgClient } from './client.js';
import {
  chunkRecordsFor,
  chunkRecordsLeft,
  writeRecordsPg,
  type ChunkRecords,
  type MappedRecordBatches,
  type RecordBatches,
} from './records.js';
import { mapsInThread, textChunks } from '../mapped-batches.js';
import { mappedBatchesAsync } from '../mapped-batches-async.js';
import { buildImportSql, relationProbeSql } from './sql.js';
import { missingObjectReason } from '../refusals.js';

export type { PgClient } from './client.js';
export type { RecordBatches } from './records.js';

/** As on SQLite (see model.ts ImportFinish), and it may be async: its writes go through the same client. */
export type ImportFinishPg = (outcome: ImportOutcome) => boolean | Promise<boolean>;

/** As RecordBatchesInput, and the batches may come asynchronously (staged pages read from PostgreSQL). */
export interface RecordBatchesInputPg extends ImportTarget {
  readonly batches: RecordBatches;
  /** About how many records the batches hold, when known: a large import then gets larger chunks (records.ts MAX_CHUNKS). */
  readonly expectedRecords?: number;
}

/**
 * The table, its mapped columns and the related tables must exist before anything is written: the
 * SQLite importer learns this when it prepares its statements. A statement that reads nothing asks;
 * if it fails, the transaction is aborted, and the caller's ifw_import savepoint brings it back.
 */
async function probeTable(client: PgClient, mapping: CompiledMapping): Promise<RecordError | null> {
  const probes = [buildImportSql(mapping, 'insert').probe];
  for (const c of mapping.columns) if (c.relation !== null) probes.push(relationProbeSql(c.relation.table, c.relation.field));
  try {
    for (const probe of probes) await client.query(probe);
    return null;
  } catch (err) {
    if (!isMissingObjectPgError(err)) throw err;
    await rollbackTo(client, 'ifw_import');
    return tableNotWritable(mapping, missingObjectReason(pgMissingObject(err)));
  }
}

async function runImport(
  client: PgClient,
  input: ImportTarget,
  source: RecordSource<RecordBatches | MappedRecordBatches>,
  finish: ImportFinishPg,
  expectedRecords?: (batches: RecordBatches | MappedRecordBatches) => number | (() => number | undefined) | undefined,
): Promise<ImportResult> {
  // Compiling the plan and parsing a payload need no database: done before the first statement.
  const compiled = compileImport(input, source);
  const { writeMode, onRecordError } = input.plan.integration;
  await savepoint(client, 'ifw_import');
  try {
    let outcome: ImportOutcome;
    if (isRecordError(compiled)) {
      outcome = failedOutcome([compiled], 1);
    } else {
      const unwritable = await probeTable(client, compiled.mapping);
      const expected = expectedRecords?.(compiled.batches);
      const chunkRecords: ChunkRecords =
        typeof expected === 'function' ? (done, written) => chunkRecordsLeft(expected(), done, written) : chunkRecordsFor(expected);
      try {
        outcome =
          unwritable !== null
            ? failedOutcome([unwritable], 1)
            : await writeRecordsPg(client, compiled.mapping, compiled.batches, writeMode, onRecordError, chunkRecords, input.aborted);
      } catch (err) {
        // A payload read in chunks may turn out not to be JSON (or to lack its records) part-way.
        if (!(err instanceof PayloadProblem)) throw err;
        outcome = failedOutcome([err.error], 1);
      }
      if (!outcome.ok) await rollbackTo(client, 'ifw_import');
    }
    if (!(await finish(outcome))) {
      await rollbackAndRelease(client, 'ifw_import');
      return { committed: false, outcome };
    }
    await release(client, 'ifw_import');
    return { committed: true, outcome };
  } catch (err) {
    // The caller gets its transaction back without any of the import's writes, and the original error.
    // If even the rollback fails (the connection is gone), that second failure says nothing new.
    await rollbackAndRelease(client, 'ifw_import').catch(() => undefined);
    throw err;
  }
}

/**
 * Imports a JSON payload inside the caller's transaction. `finish(outcome)` runs in that transaction
 * after the data is written (or, on failure, after the data writes were rolled back) and returns false
 * when the caller's lease was lost; then the import's writes and finish's are rolled back and the
 * result is { committed: false }. A throwing finish or batch source also rolls them back, and the
 * error propagates; in every case the caller's transaction stays usable and is the caller's to end.
 */
export async function importPayloadPg(client: PgClient, input: ImportInput, finish: ImportFinishPg): Promise<ImportResult> {
  // Read in pieces: the number of records is estimated from the records read so far (records per byte
  // read; the mapping thread reads a piece or two ahead, so the estimate grows as the import goes on).
  const seen = { records: 0, bytes: 0 };
  let bytesRead = 0;
  // A text's pieces stay synchronous: the mapping thread may have them while the connection is busy (mapped-batches-async.ts).
  const counted = (payload: ChunkedPayload): ChunkedPayload => ({
    bytes: payload.bytes,
    chunks: () => {
      const opened = payload.chunks();
      return Symbol.iterator in opened
        ? (function* () {
            for (const chunk of opened) {
              bytesRead += chunk.length;
              yield chunk;
            }
          })()
        : (async function* () {
            for await (const chunk of opened) {
              bytesRead += chunk.length;
              yield chunk;
            }
          })();
    },
  });
  const counting = async function* <T extends { readonly length: number }>(batches: AsyncIterable<T>): AsyncGenerator<T> {
    for await (const batch of batches) {
      seen.records += batch.length;
      seen.bytes = bytesRead;
      yield batch;
    }
  };
  let bytes = typeof input.payload === 'string' ? 0 : input.payload.bytes;
  const estimate = (): number | undefined => (seen.bytes === 0 ? undefined : Math.ceil((seen.records / seen.bytes) * bytes));
  const source: RecordSource<RecordBatches | MappedRecordBatches> = (mapping) => {
    // A large payload is parsed and mapped on the mapping thread while this one writes; the mapping
    // thread also writes the rows as COPY text (chunk.ts streams it as it is).
    if (mapsInThread(input, mapping)) {
      const chunked = typeof input.payload === 'string' ? textChunks(input.payload) : input.payload;
      bytes = chunked.bytes;
      return { mapped: counting(mappedBatchesAsync({ ...input, payload: counted(chunked) }, true)) };
    }
    if (typeof input.payload === 'string') return payloadSourceAsync(input)(mapping);
    const batches = payloadSourceAsync({ ...input, payload: counted(input.payload) })(mapping);
    return isRecordError(batches) ? batches : counting(batches as AsyncIterable<readonly unknown[]>);
  };
  // A payload text's records are in memory (an array of batches): their number is known.
  const count = (batches: RecordBatches | MappedRecordBatches): number | (() => number | undefined) =>
    Array.isArray(batches) ? (batches as readonly (readonly unknown[])[]).reduce((n, b) => n + b.length, 0) : estimate;
  return runImport(client, input, source, finish, count);
}

/** The same import over record arrays in batches (sync or async); record numbers continue across batches. */
export async function importRecordBatchesPg(client: PgClient, input: RecordBatchesInputPg, finish: ImportFinishPg): Promise<ImportResult> {
  return runImport(
    client,
    input,
    () => input.batches,
    finish,
    () => input.expectedRecords,
  );
}
