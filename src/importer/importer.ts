/**
 * The SQLite import writer: one import, one transaction. The plan is compiled and the statements
 * prepared before the write lock is taken; then every record is mapped, validated and written inside
 * a savepoint, and the caller's `finish` (the queue's lease-fenced status write) runs in the same
 * transaction, so "Completed" and "rows present" commit together or not at all.
 *
 * Two entry points share that core: `importPayload` (a JSON text, parsed before the lock) and
 * `importRecordBatches` (parsed record arrays, e.g. the staged pages of a REST API run, read lazily
 * inside the transaction).
 *
 * Synchronous on purpose: it runs on a worker thread with its own connection.
 */
import BetterSqlite3 from 'better-sqlite3';
import type { CompiledMapping } from '../mapping/engine.js';
import type { RecordError } from '../mapping/messages.js';
import type { ImportFinish, ImportInput, ImportOutcome, ImportResult, RecordBatchesInput } from './model.js';
import { compileImport, isRecordError, payloadSource, tableNotWritable, type RecordSource } from './plan.js';
import { writeRecords, type Writers } from './records.js';
import { prepareBatchInsert, prepareRelationCheck, prepareWriter } from './statements.js';
import { failedOutcome } from './tally.js';

export {
  MAX_KEPT_ERRORS,
  type ImportFinish,
  type ImportInput,
  type ImportOutcome,
  type ImportResult,
  type RecordBatchesInput,
  type RecordError,
} from './model.js';

const SAVEPOINT = 'ifw_import_data';

type Batches = Iterable<readonly unknown[]>;

interface Prepared {
  readonly mapping: CompiledMapping;
  readonly batches: Batches;
  readonly writers: Writers;
}

/** Everything that can be done before the write lock. A RecordError (payload-level) stops the import. */
function prepare(sqlite: BetterSqlite3.Database, input: Omit<ImportInput, 'payload'>, source: RecordSource<Batches>): Prepared | RecordError {
  const { writeMode } = input.plan.integration;
  const compiled = compileImport(input, source);
  if (isRecordError(compiled)) return compiled;
  const { mapping, batches } = compiled;
  try {
    const writers: Writers = {
      write: prepareWriter(sqlite, mapping, writeMode),
      batch: prepareBatchInsert(sqlite, mapping, writeMode),
      relationExists: prepareRelationCheck(sqlite, mapping),
    };
    return { mapping, batches, writers };
  } catch (err) {
    // Typically the declared table (or a column) is missing in the database.
    if (err instanceof BetterSqlite3.SqliteError) return tableNotWritable(mapping, err.message);
    throw err;
  }
}

class LeaseLost extends Error {}

function runImport(sqlite: BetterSqlite3.Database, input: Omit<ImportInput, 'payload'>, source: RecordSource<Batches>, finish: ImportFinish): ImportResult {
  const prepared = prepare(sqlite, input, source);
  let outcome: ImportOutcome | undefined;
  const run = sqlite.transaction(() => {
    if (isRecordError(prepared)) {
      outcome = failedOutcome([prepared], 1);
    } else {
      sqlite.exec(`SAVEPOINT ${SAVEPOINT}`);
      outcome = writeRecords(prepared.mapping, prepared.batches, prepared.writers, input.plan.integration.onRecordError);
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

/**
 * Runs the import of a JSON payload in one transaction. `finish(outcome)` runs inside the same
 * transaction after the data is written (or, on failure, after the data writes were rolled back to a
 * savepoint) and returns false when the caller's lease was lost; then the whole transaction is rolled
 * back and `importPayload` returns { committed: false }.
 */
export function importPayload(sqlite: BetterSqlite3.Database, input: ImportInput, finish: ImportFinish): ImportResult {
  return runImport(sqlite, input, payloadSource(input), finish);
}

/**
 * The same import over record arrays given in batches: same outcome, same messages (record numbers
 * continue from one batch to the next), one transaction, `finish` inside it. A batch source that
 * throws rolls everything back and the error propagates.
 */
export function importRecordBatches(sqlite: BetterSqlite3.Database, input: RecordBatchesInput, finish: ImportFinish): ImportResult {
  return runImport(sqlite, input, () => input.batches, finish);
}
