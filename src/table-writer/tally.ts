/**
 * The counts and errors of one import, and the words for a key that is there or missing. Shared by
 * the SQLite and PostgreSQL record loops, so that both backends report the same numbers and the same
 * messages for the same records.
 */
import type { OnRecordError } from '../integrations/model.js';
import type { SqlValue } from '../mapping/convert.js';
import type { CompiledMapping, FieldViolation } from '../mapping/engine.js';
import { describeValue, formatErrorMessage, formatSkippedMessage, recordError, type RecordError } from '../mapping/messages.js';
import { MAX_KEPT_ERRORS, type ImportOutcome } from './model.js';
import { refusalRule, type Refusal } from './refusals.js';

export function failedOutcome(errors: readonly RecordError[], errorCount: number): ImportOutcome {
  return {
    ok: false,
    recordCount: 0,
    inserted: 0,
    updated: 0,
    skipped: 0,
    errors,
    errorCount,
    errorMessage: formatErrorMessage(errors, errorCount),
  };
}

/** Mutable on purpose: the record loops bump the counters once per record. */
export class Tally {
  readonly errors: RecordError[] = [];
  errorCount = 0;
  /** Records with at least one error: in skip mode, the records skipped. */
  badRecords = 0;
  inserted = 0;
  updated = 0;

  /** Keeps the first MAX_KEPT_ERRORS errors, counts them all. */
  add(error: RecordError): void {
    this.errorCount++;
    if (this.errors.length < MAX_KEPT_ERRORS) this.errors.push(error);
  }

  /** A record that is not written because its mapping broke rules. */
  reject(recordNo: number, violations: readonly FieldViolation[]): void {
    this.badRecords++;
    for (const v of violations) this.add(recordError(recordNo, v.field, v.value, v.rule));
  }

  /** A record the database refused (refusals.ts words why). */
  refuse(recordNo: number, table: string, refusal: Refusal): void {
    this.skip(recordError(recordNo, null, null, refusalRule(table, refusal)));
  }

  /** A record that is not written, for this one reason (its key, see keyErrorFactory). */
  skip(error: RecordError): void {
    this.badRecords++;
    this.add(error);
  }

  /** Adds the counts and errors of a later part of the import (its records come after this one's). */
  merge(later: Tally): void {
    this.badRecords += later.badRecords;
    this.inserted += later.inserted;
    this.updated += later.updated;
    this.errorCount += later.errorCount;
    for (const error of later.errors) {
      if (this.errors.length >= MAX_KEPT_ERRORS) break;
      this.errors.push(error);
    }
  }

  /** In fail mode any error fails the import (the caller rolls the data back); in skip mode it commits without the bad records. */
  outcome(onRecordError: OnRecordError): ImportOutcome {
    const { errors, errorCount, badRecords, inserted, updated } = this;
    if (errorCount > 0 && onRecordError === 'fail') return failedOutcome(errors, errorCount);
    return {
      ok: true,
      recordCount: inserted + updated,
      inserted,
      updated,
      skipped: badRecords,
      errors,
      errorCount,
      errorMessage: errorCount === 0 ? '' : formatSkippedMessage(badRecords, errors, errorCount),
    };
  }
}

/**
 * The error of a record whose key decides against it: `keyExists` (insert mode: the key is in the
 * table, or was written earlier in the payload) or `keyMissing` (update mode: no row has the key).
 * It names the first key field and shows every key value.
 */
export function keyErrorFactory(
  mapping: CompiledMapping,
): (recordNo: number, problem: 'keyExists' | 'keyMissing', row: readonly SqlValue[]) => RecordError {
  const { table, keyColumns } = mapping;
  const keyField = keyColumns.length > 0 ? mapping.columns[keyColumns[0]!]!.field.name : null;
  const exists = `already exists in table "${table.name}"`;
  const missing = `does not exist in table "${table.name}" (update needs an existing row)`;
  const keyValue = (row: readonly SqlValue[]): string =>
    describeValue(keyColumns.length === 1 ? row[keyColumns[0]!] : keyColumns.map((k) => String(row[k])).join(', '));
  return (recordNo, problem, row) => recordError(recordNo, keyField, keyValue(row), problem === 'keyExists' ? exists : missing);
}
