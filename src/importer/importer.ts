/**
 * The SQLite import writer: one payload, one transaction. The JSON is parsed, the plan compiled and
 * the statements prepared before the write lock is taken; then every record is mapped, validated and
 * written inside a savepoint, and the caller's `finish` (the queue's lease-fenced status write) runs
 * in the same transaction, so "Completed" and "rows present" commit together or not at all.
 *
 * Synchronous on purpose: it runs on a worker thread with its own connection.
 */
import BetterSqlite3 from 'better-sqlite3';
import { AppError } from '../errors.js';
import { compileMapping, type CompiledMapping } from '../mapping/engine.js';
import { payloadError, type RecordError } from '../mapping/messages.js';
import { extractRecords } from '../mapping/payload.js';
import type { ImportInput, ImportOutcome } from './model.js';
import { failedOutcome, writeRecords, type Writers } from './records.js';
import { prepareBatchInsert, prepareRelationCheck, prepareWriter } from './statements.js';

export { MAX_KEPT_ERRORS, type ImportInput, type ImportOutcome, type RecordError } from './model.js';

const SAVEPOINT = 'ifw_import_data';

interface Prepared {
  readonly mapping: CompiledMapping;
  readonly records: readonly unknown[];
  readonly writers: Writers;
}

/** Everything that can be done before the write lock. A RecordError (payload-level) stops the import. */
function prepare(sqlite: BetterSqlite3.Database, input: ImportInput): Prepared | RecordError {
  const { writeMode, recordsPath } = input.plan.integration;
  let mapping: CompiledMapping;
  try {
    mapping = compileMapping(input.plan, input.tables);
  } catch (err) {
    if (err instanceof AppError) return payloadError('invalid integration', err.message);
    throw err;
  }
  const records = extractRecords(input.payload, recordsPath, mapping.records);
  if (!Array.isArray(records)) return records;
  try {
    const writers: Writers = {
      write: prepareWriter(sqlite, mapping, writeMode),
      batch: prepareBatchInsert(sqlite, mapping, writeMode),
      relationExists: prepareRelationCheck(sqlite, mapping),
    };
    return { mapping, records, writers };
  } catch (err) {
    // Typically the declared table (or a column) is missing in the database.
    if (err instanceof BetterSqlite3.SqliteError) {
      return payloadError('table not writable', `cannot write to table "${mapping.table.name}": ${err.message}`);
    }
    throw err;
  }
}

class LeaseLost extends Error {}

/**
 * Runs the import in one transaction. `finish(outcome)` runs inside the same transaction after the
 * data is written (or, on failure, after the data writes were rolled back to a savepoint) and
 * returns false when the caller's lease was lost; then the whole transaction is rolled back and
 * `importPayload` returns { committed: false }.
 */
export function importPayload(
  sqlite: BetterSqlite3.Database,
  input: ImportInput,
  finish: (outcome: ImportOutcome) => boolean,
): { committed: boolean; outcome: ImportOutcome } {
  const prepared = prepare(sqlite, input);
  let outcome: ImportOutcome | undefined;
  const run = sqlite.transaction(() => {
    if ('rule' in prepared) {
      outcome = failedOutcome([prepared], 1);
    } else {
      sqlite.exec(`SAVEPOINT ${SAVEPOINT}`);
      outcome = writeRecords(prepared.mapping, prepared.records, prepared.writers, input.plan.integration.onRecordError);
      if (!outcome.ok) sqlite.exec(`ROLLBACK TO ${SAVEPOINT}`);
      sqlite.exec(`RELEASE ${SAVEPOINT}`);
    }
    if (!finish(outcome)) throw new LeaseLost();
  });
  try {
    // IMMEDIATE takes the write lock up front: a deferred transaction that upgrades later can deadlock.
    run.immediate();
  } catch (err) {
    if (err instanceof LeaseLost && outcome !== undefined) return { committed: false, outcome };
    throw err;
  }
  return { committed: true, outcome: outcome! };
}
