/**
 * The record loop: map, validate and write every record, collecting errors in record order. Rows of
 * insert mode are buffered into multi-row INSERTs; anything unusual (a record with errors, a relation
 * not found, a failing batch) first writes the buffered rows one by one, so that errors are reported
 * in record order and relations may point at rows earlier in the same payload.
 */
import type { OnRecordError } from '../../integrations/model.js';
import type { SqlValue } from '../../mapping/convert.js';
import { mapRecord, type CompiledMapping, type FieldViolation, type RelationExists } from '../../mapping/engine.js';
import { ImportAborted, type ImportOutcome } from '../model.js';
import { isRecordLevelSqliteError, sqliteRefusal, type BatchInsert, type RowWriter } from './statements.js';
import { keyErrorFactory, Tally } from '../tally.js';

export interface Writers {
  readonly write: RowWriter;
  readonly batch: BatchInsert | null;
  readonly relationExists: RelationExists;
}

/** A batch of records as the record loop reads it: `length` records, each filled into a row by a FillRow. */
export interface Batch {
  readonly length: number;
}

/**
 * Fills `row` from record `index` of a batch and says what is wrong with the record: mapping a parsed
 * record (`mapRecords`), taking a row mapped while it was staged (staged-rows.ts), or one mapped on the
 * mapping thread (mapped-batches.ts).
 */
export type FillRow<B extends Batch> = (
  batch: B,
  index: number,
  row: SqlValue[],
  relationExists: RelationExists,
) => FieldViolation[] | null;

/** The FillRow of parsed records. */
export const mapRecords =
  (mapping: CompiledMapping): FillRow<readonly unknown[]> =>
  (records, index, row, relationExists) =>
    mapRecord(mapping, records[index], row, relationExists);

/**
 * Writes the records; throws only for database failures that are not about a record. In fail mode the
 * good records are still written (the caller rolls them back) so that duplicates and relations later
 * in the payload are judged exactly as in a clean run. The records come in batches (a payload is one
 * batch; a paginated run gives its staged rows a chunk at a time); record numbers run on across them.
 */
/** How often (in records) the record loop asks whether the import was aborted: a few microseconds each time. */
const ABORT_CHECK_EVERY = 1000;

export function writeRecords<B extends Batch>(
  mapping: CompiledMapping,
  batches: Iterable<B>,
  fill: FillRow<B>,
  writers: Writers,
  onRecordError: OnRecordError,
  aborted?: () => boolean,
): ImportOutcome {
  const width = mapping.columns.length;
  const { write, batch } = writers;
  const batchSize = batch?.size ?? 0;

  const row: SqlValue[] = new Array<SqlValue>(width).fill(null);
  const replayRow: SqlValue[] = new Array<SqlValue>(width).fill(null);
  const buffer: SqlValue[] = new Array<SqlValue>(batchSize * width).fill(null);
  const bufferedRecordNo: number[] = new Array<number>(batchSize).fill(0);
  let buffered = 0;

  const tally = new Tally();
  const keyError = keyErrorFactory(mapping);

  const writeOne = (recordNo: number, values: readonly SqlValue[]): void => {
    let result;
    try {
      result = write(values);
    } catch (err) {
      if (!isRecordLevelSqliteError(err)) throw err;
      tally.refuse(recordNo, mapping.table.name, sqliteRefusal(err));
      return;
    }
    if (result === 'inserted') tally.inserted++;
    else if (result === 'updated') tally.updated++;
    else tally.skip(keyError(recordNo, result, values));
  };

  const flushOneByOne = (): void => {
    for (let b = 0; b < buffered; b++) {
      for (let c = 0; c < width; c++) replayRow[c] = buffer[b * width + c]!;
      writeOne(bufferedRecordNo[b]!, replayRow);
    }
    buffered = 0;
  };

  const flushBatch = (): void => {
    try {
      batch!.run(buffer);
      tally.inserted += buffered;
      buffered = 0;
    } catch (err) {
      // The failed statement left no rows behind; find the culprit(s) row by row.
      if (!isRecordLevelSqliteError(err)) throw err;
      flushOneByOne();
    }
  };

  // A related key may sit in a buffered row (a self-relation to an earlier record): write them, ask again.
  const relationExists: RelationExists = (column, value) => {
    if (writers.relationExists(column, value)) return true;
    if (buffered === 0) return false;
    flushOneByOne();
    return writers.relationExists(column, value);
  };

  let recordNo = 0;
  for (const records of batches) {
    for (let i = 0; i < records.length; i++) {
      recordNo++;
      // A whole payload may be one batch: asked every ABORT_CHECK_EVERY records, not per batch.
      if (aborted !== undefined && recordNo % ABORT_CHECK_EVERY === 0 && aborted()) throw new ImportAborted();
      const violations = fill(records, i, row, relationExists);
      if (violations !== null) {
        if (buffered > 0) flushOneByOne();
        tally.reject(recordNo, violations);
      } else if (batchSize === 0) {
        writeOne(recordNo, row);
      } else {
        const base = buffered * width;
        for (let c = 0; c < width; c++) buffer[base + c] = row[c]!;
        bufferedRecordNo[buffered++] = recordNo;
        if (buffered === batchSize) flushBatch();
      }
    }
  }
  flushOneByOne();

  return tally.outcome(onRecordError);
}
