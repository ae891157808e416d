/**
 * The dialect-independent start of an import: compile the integration plan against the declared
 * tables and find the records. Both happen before any database work, so a broken plan or an
 * unreadable payload fails the import with a payload-level error without touching a table.
 */
import { AppError } from '../core/errors.js';
import { compileMapping, type CompiledMapping } from '../mapping/engine.js';
import { payloadError, type RecordError } from '../mapping/messages.js';
import { extractRecords } from '../mapping/payload.js';
import { recordBatches, recordBatchesAsync } from '../mapping/payload-stream.js';
import type { ChunkedPayload, ImportInput, ImportTarget } from './model.js';

/** Finds the records once the mapping is known (the payload's records path is part of it). */
export type RecordSource<B> = (mapping: CompiledMapping) => B | RecordError;

export interface CompiledImport<B> {
  readonly mapping: CompiledMapping;
  readonly batches: B;
}

export const isRecordError = (value: object): value is RecordError => 'rule' in value;

export function compileImport<B extends object>(input: ImportTarget, source: RecordSource<B>): CompiledImport<B> | RecordError {
  let mapping: CompiledMapping;
  try {
    mapping = compileMapping(input.plan, input.tables);
  } catch (err) {
    if (err instanceof AppError) return payloadError('invalid integration', err.message);
    throw err;
  }
  const batches = source(mapping);
  if (isRecordError(batches)) return batches;
  return { mapping, batches };
}

/** Records per batch read from a chunked payload, at least (a batch is what the chunks read so far completed). */
const STREAM_BATCH = 1000;

/** The records of a JSON payload: as one batch when the payload is a text, read in batches from its chunks otherwise. */
export const payloadSource =
  (input: ImportInput): RecordSource<Iterable<readonly unknown[]>> =>
  (mapping) => {
    const { recordsPath } = input.plan.integration;
    if (typeof input.payload !== 'string') {
      const open = syncChunks(input.payload);
      return recordBatches(open, recordsPath, STREAM_BATCH, (text) => extractRecords(text, recordsPath, mapping.records));
    }
    const records = extractRecords(input.payload, recordsPath, mapping.records);
    return Array.isArray(records) ? [records] : records;
  };

/** The same for an importer that may read asynchronously (PostgreSQL). */
export const payloadSourceAsync =
  (input: ImportInput): RecordSource<Iterable<readonly unknown[]> | AsyncIterable<readonly unknown[]>> =>
  (mapping) => {
    const { recordsPath } = input.plan.integration;
    if (typeof input.payload === 'string') return payloadSource(input)(mapping);
    const { chunks } = input.payload;
    const open = async function* (): AsyncGenerator<Uint8Array> {
      yield* chunks();
    };
    return recordBatchesAsync(open, recordsPath, STREAM_BATCH, (text) => extractRecords(text, recordsPath, mapping.records));
  };

function syncChunks(payload: ChunkedPayload): () => Iterable<Uint8Array> {
  return () => {
    const chunks = payload.chunks();
    if (!(Symbol.iterator in chunks)) throw new Error('this importer reads a chunked payload synchronously');
    return chunks;
  };
}

/** "cannot write to table …": the declared table (or a column, or a related table) is missing in the database. */
export const tableNotWritable = (mapping: CompiledMapping, reason: string): RecordError =>
  payloadError('table not writable', `cannot write to table "${mapping.table.name}": ${reason}`);
