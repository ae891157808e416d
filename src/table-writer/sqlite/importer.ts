/**
 * The SQLite import writer: one import, one transaction. The plan is compiled and the statements
 * prepared before the write lock is taken; then every record is mapped, validated and written inside
 * a savepoint, and the caller's `finish` (the queue's lease-fenced status write) runs in the same
 * transaction, so "Completed" and "rows present" commit together or not at all.
 *
 * Three entry points share that core: `importPayload` (a JSON text, parsed before the lock, or its
 * stored chunks, parsed a record at a time inside the transaction; a large payload is parsed and
 * mapped on the mapping thread while this one inserts: mapped-batches.ts),
 * `importRecordBatches` (parsed record arrays in batches) and `importStagedRows` (the records of a REST
 * API run, mapped as their pages arrived and staged on the connection: staged-rows.ts).
 *
 * Synchronous on purpose: it runs on a worker thread with its own connection.
 */
import BetterSqlite3 from 'better-sqlite3';
import type { CompiledMapping } from '../../mapping/engine.js';
import type { RecordError } from '../../mapping/messages.js';
import { PayloadProblem } from '../../mapping/payload-stream.js';
import {
  ImportAborted,
  type ImportFinish,
  type ImportInput,
  type ImportOutcome,
  type ImportResult,
  type ImportTarget,
  type RecordBatchesInput,
} from '../model.js';
import { compileImport, isRecordError, payloadSource, tableNotWritable, type RecordSource } from '../plan.js';
import { mapRecords, writeRecords, type Batch, type FillRow, type Writers } from './records.js';
import { mappedBatches, mappedRowFiller, mapsInThread } from '../mapped-batches.js';
import { prepareStagedCopy, readStagedRows, stagedRowFiller, type StagedCopy } from './staged-rows.js';
import { prepareBatchInsert, prepareRelationCheck, prepareWriter, sqliteMissingObject } from './statements.js';
import { missingObjectReason } from '../refusals.js';
import { failedOutcome, Tally } from '../tally.js';

export {
  MAX_KEPT_ERRORS,
  type ImportFinish,
  type ImportInput,
  type ImportOutcome,
  type ImportResult,
  type RecordBatchesInput,
  type RecordError,
} from '../model.js';

const SAVEPOINT = 'ifw_import_data';

/** The records as the record loop reads them: batches, and how a record of a batch fills a row. */
interface Feed<B extends Batch> {
  readonly batches: Iterable<B>;
  readonly fill: FillRow<B>;
  /** The staging table of staged rows: tried as one INSERT … SELECT before the record loop. */
  readonly stagedTable?: string;
}

/** A feed of either kind of batch: the record loop hands each batch only to the fill it came with. */
const feed = <B extends Batch>(batches: Iterable<B>, fill: FillRow<B>): Feed<Batch> => ({ batches, fill: fill as FillRow<Batch> });

interface Prepared<B extends Batch> {
  readonly mapping: CompiledMapping;
  readonly feed: Feed<B>;
  readonly writers: Writers;
  readonly copy: StagedCopy | null;
}

/** Everything that can be done before the write lock. A RecordError (payload-level) stops the import. */
function prepare<B extends Batch>(
  sqlite: BetterSqlite3.Database,
  input: ImportTarget,
  source: RecordSource<Feed<B>>,
): Prepared<B> | RecordError {
  const { writeMode } = input.plan.integration;
  const compiled = compileImport(input, source);
  if (isRecordError(compiled)) return compiled;
  const { mapping, batches: feed } = compiled;
  try {
    const writers: Writers = {
      write: prepareWriter(sqlite, mapping, writeMode),
      batch: prepareBatchInsert(sqlite, mapping, writeMode),
      relationExists: prepareRelationCheck(sqlite, mapping),
    };
    const copy = feed.stagedTable === undefined ? null : prepareStagedCopy(sqlite, mapping, writeMode, feed.stagedTable);
    return { mapping, feed, writers, copy };
  } catch (err) {
    // Typically the declared table (or a column) is missing in the database.
    if (err instanceof BetterSqlite3.SqliteError) return tableNotWritable(mapping, missingObjectReason(sqliteMissingObject(err)));
    throw err;
  }
}

class LeaseLost extends Error {}

/** The records written: in one statement when the staged rows allow it, else through the record loop. */
function write<B extends Batch>(prepared: Prepared<B>, input: ImportTarget): ImportOutcome {
  const { onRecordError } = input.plan.integration;
  if (input.aborted?.() === true) throw new ImportAborted();
  const copied = prepared.copy?.() ?? null;
  if (copied !== null) {
    const tally = new Tally();
    tally.inserted = copied.inserted;
    tally.updated = copied.updated;
    return tally.outcome(onRecordError);
  }
  return writeRecords(prepared.mapping, prepared.feed.batches, prepared.feed.fill, prepared.writers, onRecordError, input.aborted);
}

function runImport<B extends Batch>(
  sqlite: BetterSqlite3.Database,
  input: ImportTarget,
  source: RecordSource<Feed<B>>,
  finish: ImportFinish,
): ImportResult {
  const prepared = prepare(sqlite, input, source);
  let outcome: ImportOutcome | undefined;
  const run = sqlite.transaction(() => {
    if (isRecordError(prepared)) {
      outcome = failedOutcome([prepared], 1);
    } else {
      sqlite.exec(`SAVEPOINT ${SAVEPOINT}`);
      try {
        outcome = write(prepared, input);
      } catch (err) {
        // A payload read in chunks may turn out not to be JSON (or to lack its records) part-way.
        if (!(err instanceof PayloadProblem)) throw err;
        outcome = failedOutcome([err.error], 1);
      }
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
  const source = payloadSource(input);
  return runImport(
    sqlite,
    input,
    (mapping) => {
      // A large payload is parsed and mapped on the mapping thread while this one inserts.
      if (mapsInThread(input, mapping)) return feed(mappedBatches(input), mappedRowFiller(mapping));
      const batches = source(mapping);
      return isRecordError(batches) ? batches : feed(batches, mapRecords(mapping));
    },
    finish,
  );
}

/**
 * The same import over record arrays given in batches: same outcome, same messages (record numbers
 * continue from one batch to the next), one transaction, `finish` inside it. A batch source that
 * throws rolls everything back and the error propagates.
 */
export function importRecordBatches(sqlite: BetterSqlite3.Database, input: RecordBatchesInput, finish: ImportFinish): ImportResult {
  return runImport(sqlite, input, (mapping) => ({ batches: input.batches, fill: mapRecords(mapping) }), finish);
}

/**
 * The same import over the rows staged for a run (`table`, staged-rows.ts, on this connection), mapped
 * with the same plan and tables: same outcome, same messages. When every record mapped cleanly, the
 * write mode is insert or upsert and every related key exists, all rows go in with one INSERT … SELECT;
 * a constraint that statement runs into undoes it, and the record loop then finds the records to blame.
 */
export function importStagedRows(
  sqlite: BetterSqlite3.Database,
  input: ImportTarget & { readonly table: string },
  finish: ImportFinish,
): ImportResult {
  return runImport(
    sqlite,
    input,
    (mapping) => ({ batches: readStagedRows(sqlite, input.table), fill: stagedRowFiller(mapping), stagedTable: input.table }),
    finish,
  );
}
