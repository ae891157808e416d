/**
 * The dialect-independent start of an import: compile the integration plan against the declared
 * tables and find the records. Both happen before any database work, so a broken plan or an
 * unreadable payload fails the import with a payload-level error without touching a table.
 */
import { AppError } from '../core/errors.js';
import { compileMapping, type CompiledMapping } from '../mapping/engine.js';
import { payloadError, type RecordError } from '../mapping/messages.js';
import { extractRecords } from '../mapping/payload.js';
import type { ImportInput, ImportTarget } from './model.js';

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

/** The records of a JSON payload, as one batch. */
export const payloadSource =
  (input: ImportInput): RecordSource<readonly (readonly unknown[])[]> =>
  (mapping) => {
    const records = extractRecords(input.payload, input.plan.integration.recordsPath, mapping.records);
    return Array.isArray(records) ? [records] : records;
  };

/** "cannot write to table …": the declared table (or a column, or a related table) is missing in the database. */
export const tableNotWritable = (mapping: CompiledMapping, reason: string): RecordError =>
  payloadError('table not writable', `cannot write to table "${mapping.table.name}": ${reason}`);
