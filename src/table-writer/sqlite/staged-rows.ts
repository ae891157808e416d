/**
 * Staged rows (SQLite): the records of a paginated run, mapped as their page arrives and kept on the
 * worker's connection until the import. Mapping while the next page is on its way leaves the import
 * transaction with SQL-only work: when every record mapped cleanly, the write mode is insert or upsert
 * and the relations hold, the whole run is one `INSERT … SELECT` (prepareStagedCopy below); anything
 * else goes through the record loop, which reads the staged rows back instead of parsing and mapping
 * pages again.
 *
 * A run's rows: `record_no` (1, 2, … across pages), `raw` and one untyped column per mapped field
 * (`c0`, `c1`, …), so a value keeps the storage class the mapping gave it and the target column's
 * affinity applies exactly as to a bound parameter. Where a record came from (its page) is kept by the
 * run (record-origins.ts), not per row. A record whose mapping broke a rule is staged as
 * `raw` (its JSON text) with NULL columns: the import maps it again, with the relation checks, for the
 * exact messages. Relations are not checked while staging (the related rows may change until the
 * import's transaction); the import checks them.
 *
 * Where they are kept: the first HOT_BYTES of a run's rows in `ifw_scratch`, an in-memory database
 * attached to the connection, and the rest, if any, in a TEMP table, which SQLite spills to a temporary
 * file. An insert into the in-memory table costs about half of one into the TEMP table (no pager
 * between it and memory), and the staging insert is most of what a page costs the fetching thread; the
 * TEMP table keeps a run of millions of records from holding them all in memory. A run that went past
 * HOT_BYTES is read through a TEMP view of both, in record order (stagedRowsTable). The in-memory
 * database is auto-vacuumed: dropping a run's table gives its memory back.
 *
 * Neither reaches the database file or its write-ahead log: staged rows are scratch data, read only by
 * the connection that fetched them, and a run that is interrupted starts again from page 1.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { SqlValue } from '../../mapping/convert.js';
import { mapRecord, relationViolation, type CompiledMapping, type FieldViolation, type RelationExists } from '../../mapping/engine.js';
import type { WriteMode } from '../../integrations/model.js';
import { quoteIdent } from '../../tables/ddl.js';
import { mapBatch } from '../mapped-batches.js';
import { targetSql, upsertClause, valueAliases } from '../target-sql.js';
import { isRecordLevelSqliteError } from './statements.js';

/** Columns before the mapped values: record_no, raw. */
const STAGED_LEAD = 2;

/** The in-memory database attached for the first rows of each run. */
const SCRATCH = 'ifw_scratch';

/**
 * About how much of a run's staged values are kept in memory (strings by length, numbers as 8 bytes):
 * SQLite's pages take up to about twice that.
 */
export const HOT_BYTES = 16 << 20;

const tableName = (runId: string): string => `ifw_staged_${runId}`;
const hotTable = (runId: string): string => `${SCRATCH}.${quoteIdent(tableName(runId))}`;
const coldTable = (runId: string): string => `temp.${quoteIdent(tableName(runId))}`;
const bothView = (runId: string): string => `temp.${quoteIdent(`${tableName(runId)}_rows`)}`;

const exists = (sqlite: BetterSqlite3.Database, schema: 'temp' | typeof SCRATCH, name: string): boolean =>
  sqlite.prepare(`select 1 from ${schema}.sqlite_master where name = ?`).get(name) !== undefined;

const attached = (sqlite: BetterSqlite3.Database): boolean =>
  sqlite.prepare('select 1 from pragma_database_list where name = ?').get(SCRATCH) !== undefined;

/**
 * The run's staged rows, as SQL to select from: its in-memory table, or, when the run went past
 * HOT_BYTES (or could not attach the in-memory database), the TEMP table or the view of both.
 */
export function stagedRowsTable(sqlite: BetterSqlite3.Database, runId: string): string {
  if (!exists(sqlite, 'temp', tableName(runId))) return hotTable(runId);
  return attached(sqlite) && exists(sqlite, SCRATCH, tableName(runId)) ? bothView(runId) : coldTable(runId);
}

const createTable = (sqlite: BetterSqlite3.Database, table: string, width: number): void => {
  const values = valueAliases(width)
    .map((c) => `, ${c}`)
    .join('');
  sqlite.exec(`create table ${table} (record_no integer primary key, raw text${values})`);
};

/**
 * Creates the run's (empty) staging table; an earlier attempt's is dropped first. The in-memory
 * database is attached to the connection the first time (ATTACH cannot run inside a transaction: a run
 * staged from within one keeps all its rows in the TEMP table).
 */
export function createStagedRows(sqlite: BetterSqlite3.Database, runId: string, width: number): void {
  dropStagedRows(sqlite, runId);
  if (!attached(sqlite)) {
    if (sqlite.inTransaction) return createTable(sqlite, coldTable(runId), width);
    sqlite.exec(`attach database ':memory:' as ${SCRATCH}`);
    // So that dropping a run's table gives its memory back, instead of keeping the pages for the next run.
    sqlite.pragma(`${SCRATCH}.auto_vacuum = FULL`);
  }
  createTable(sqlite, hotTable(runId), width);
}

/** Drops the run's staged rows, if there are any (the run ended, failed, or starts again). */
export function dropStagedRows(sqlite: BetterSqlite3.Database, runId: string): void {
  sqlite.exec(`drop view if exists ${bothView(runId)}; drop table if exists ${coldTable(runId)}`);
  if (attached(sqlite)) sqlite.exec(`drop table if exists ${hotTable(runId)}`);
}

/** Whether the run has staged rows (a staging table) on this connection. */
export function hasStagedRows(sqlite: BetterSqlite3.Database, runId: string): boolean {
  return exists(sqlite, 'temp', tableName(runId)) || (attached(sqlite) && exists(sqlite, SCRATCH, tableName(runId)));
}

/** Rows per INSERT into the staging table at most, within SQLite's smallest bound-parameter limit (999). */
const rowsPerInsert = (stride: number): number => Math.max(1, Math.min(64, Math.floor(999 / stride)));

/** About what a staged row holds: strings by length, numbers as 8 bytes, and a little for the row. */
function stagedBytes(raw: string | null, values: readonly SqlValue[], from: number, width: number): number {
  let bytes = 16 + (raw === null ? 0 : raw.length);
  for (let c = from; c < from + width; c++) {
    const value = values[c];
    bytes += typeof value === 'string' ? value.length : 8;
  }
  return bytes;
}

/** Stages a run's records as their pages arrive (stagedRowsWriter). */
export interface StagedRowsWriter {
  /** Maps a page's records and stages them: at once as far as they fill whole INSERTs, the rest with the next page's or `flush`. */
  stage(records: readonly unknown[]): void;
  /** Stages the records still waiting: before their page rows are written, and before the import. */
  flush(): void;
}

/**
 * Maps each page's records (mapBatch, numbering them on from page to page) as it arrives and inserts
 * them into the run's staging table: a record with a violation is staged as its JSON text instead of
 * its values. The inserts are multi-row INSERTs of up to 64 rows, prepared once per run per row count,
 * each its own statement on the run's staging tables only: they take no lock on the database file and
 * write nothing to its write-ahead log, so they can run the moment a page arrives, whatever the run's
 * staging transactions do.
 *
 * The rows of a page that do not fill a whole INSERT wait for the next page's. Work done on the fetching
 * thread while the next page is on its way is not free: on 2 cores against a local paging server, 20 µs
 * of it after every page cost 28–37 µs a page, the same 40 µs after every second page 5–10 µs, 80 µs
 * after every fourth 4–8 µs. Staged in whole INSERTs, pages of 20 records are written three or four at a
 * time, pages of 64 records or more at once. At most 63 mapped rows wait, so memory stays flat.
 *
 * Rows of clean records bind only their values: the row number SQLite gives an appended row (one more
 * than the table's last) is the record's number already, and `raw` is NULL. Binding is most of the
 * insert's cost: 20 rows of two values took 18–20 µs a page so, against 28–36 µs with the record
 * number, a page number and `raw` bound too. Rows with a violation, and the first rows of the TEMP
 * table (whose numbers go on from the in-memory table's), bind the number and `raw` as well.
 */
export function stagedRowsWriter(
  sqlite: BetterSqlite3.Database,
  runId: string,
  mapping: CompiledMapping,
  hotLimit = HOT_BYTES,
): StagedRowsWriter {
  const width = mapping.columns.length;
  const aliases = valueAliases(width);
  type Prepared = { readonly statement: BetterSqlite3.Statement; readonly params: SqlValue[] };
  /** Inserts of values only (numbered by SQLite), and of record number, `raw` and values, by row count. */
  const forms = {
    values: { names: aliases.join(', '), stride: width },
    whole: { names: ['record_no', 'raw', ...aliases].join(', '), stride: STAGED_LEAD + width },
  };
  type Form = keyof typeof forms;
  let statements = new Map<string, Prepared>();
  // Into the in-memory table until the run has staged `hotLimit` bytes there; then into the TEMP table.
  let table = stagedRowsTable(sqlite, runId);
  let hot = table === hotTable(runId);
  let hotBytes = 0;
  /** Records staged so far. */
  let recordNo = 0;
  /** Whether the table numbers the row it appends next as the next record (not a new TEMP table's first). */
  let numbered = true;
  const goCold = (): void => {
    createTable(sqlite, coldTable(runId), width);
    const names = forms.whole.names;
    sqlite.exec(`create view ${bothView(runId)} as select ${names} from ${table} union all select ${names} from ${coldTable(runId)}`);
    table = coldTable(runId);
    hot = false;
    statements = new Map();
    numbered = false;
  };
  const statementFor = (form: Form, rows: number): Prepared => {
    const key = `${form} ${rows}`;
    let prepared = statements.get(key);
    if (prepared === undefined) {
      const { names, stride } = forms[form];
      const tuple = `(${new Array<string>(stride).fill('?').join(', ')})`;
      prepared = {
        statement: sqlite.prepare(`insert into ${table} (${names}) values ${new Array<string>(rows).fill(tuple).join(', ')}`),
        params: new Array<SqlValue>(rows * stride),
      };
      statements.set(key, prepared);
    }
    return prepared;
  };
  // Rows per INSERT at most, the same for both forms (SQLite's smallest bound-parameter limit is 999).
  const most = rowsPerInsert(STAGED_LEAD + width);
  /** Mapped rows waiting for an INSERT: `width` values each, and each row's JSON text when it has a violation. */
  let waiting: SqlValue[] = [];
  let waitingRaw: (string | null)[] = [];
  /** Rows at the start of `waiting` already inserted (dropped once a page's whole INSERTs are done). */
  let done = 0;

  /** Inserts the `count` waiting rows after those done. */
  const insert = (count: number): void => {
    if (hot && hotBytes >= hotLimit) goCold();
    let clean = numbered;
    for (let r = done; clean && r < done + count; r++) clean = waitingRaw[r] === null;
    const { statement, params } = statementFor(clean ? 'values' : 'whole', count);
    if (clean) {
      for (let at = 0, v = done * width; at < params.length; at++, v++) params[at] = waiting[v]!;
      if (hot) for (let r = done; r < done + count; r++) hotBytes += stagedBytes(null, waiting, r * width, width);
    } else {
      for (let r = done, at = 0; r < done + count; r++, at += STAGED_LEAD + width) {
        const raw = waitingRaw[r] ?? null;
        params[at] = recordNo + 1 + r - done;
        params[at + 1] = raw;
        for (let c = 0; c < width; c++) params[at + STAGED_LEAD + c] = waiting[r * width + c]!;
        if (hot) hotBytes += stagedBytes(raw, waiting, r * width, width);
      }
    }
    statement.run(params);
    recordNo += count;
    done += count;
    numbered = true;
  };
  /** Forgets the rows inserted, keeping those still waiting (a page that filled no INSERT copies nothing). */
  const dropDone = (): void => {
    if (done === 0) return;
    waiting = waiting.slice(done * width);
    waitingRaw = waitingRaw.slice(done);
    done = 0;
  };

  const row = new Array<SqlValue>(width).fill(null);
  return {
    stage(records) {
      const { values, violations } = mapBatch(mapping, records, row);
      waiting = waiting.length === 0 ? values : waiting.concat(values);
      for (let r = 0; r < records.length; r++) waitingRaw.push(violations?.has(r) === true ? (JSON.stringify(records[r]) ?? 'null') : null);
      while (waitingRaw.length - done >= most) insert(most);
      dropDone();
    },
    flush() {
      if (waitingRaw.length > 0) insert(waitingRaw.length);
      dropDone();
    },
  };
}

/** Staged rows read back for the record loop this many at a time (memory stays bounded). */
const READ_CHUNK = 1000;

/**
 * The staged rows in record order, a chunk at a time: each a keyset lookup on record_no, because
 * better-sqlite3 refuses other statements on a connection while an iterate() cursor is open, and the
 * record loop writes between reads. Each row is [record_no, raw, c0, c1, …].
 */
export function* readStagedRows(
  sqlite: BetterSqlite3.Database,
  table: string,
): Generator<readonly (readonly SqlValue[])[], void, undefined> {
  const next = sqlite
    .prepare<[number], SqlValue[]>(`select * from ${table} where record_no > ? order by record_no limit ${READ_CHUNK}`)
    .raw();
  for (let after = 0; ;) {
    const rows = next.all(after);
    if (rows.length === 0) return;
    after = rows[rows.length - 1]![0] as number;
    yield rows;
  }
}

/**
 * What the record loop asks of a staged row: its mapped values in `row`, and its violations: for a
 * record that mapped cleanly, only relations can fail (checked now, in column order, as mapRecord
 * does); a record staged as JSON is mapped again.
 */
export function stagedRowFiller(
  mapping: CompiledMapping,
): (rows: readonly (readonly SqlValue[])[], index: number, row: SqlValue[], relationExists: RelationExists) => FieldViolation[] | null {
  const { columns } = mapping;
  const relations = columns.flatMap((column, i) => (column.relation === null ? [] : [i]));
  return (rows, index, row, relationExists) => {
    const staged = rows[index]!;
    const raw = staged[1];
    if (typeof raw === 'string') return mapRecord(mapping, JSON.parse(raw) as unknown, row, relationExists);
    for (let c = 0; c < columns.length; c++) row[c] = staged[STAGED_LEAD + c]!;
    let violations: FieldViolation[] | null = null;
    for (const i of relations) {
      const value = row[i]!;
      if (value !== null && !relationExists(i, value)) (violations ??= []).push(relationViolation(columns[i]!, value));
    }
    return violations;
  };
}

/** The counts of an import written in one statement. */
export interface Copied {
  readonly inserted: number;
  readonly updated: number;
}

/** Writes every staged row at once and answers the counts, or null when the record loop has to. */
export type StagedCopy = () => Copied | null;

/**
 * The one-statement import of staged rows, for insert and upsert mode: null when it cannot apply
 * (update mode needs a per-row answer; a relation to the target table itself depends on record order;
 * an upsert needs a key and a column besides it). At run time it answers null, having written nothing,
 * when a record was staged with a violation, when a related key is missing (checked in SQL, with the
 * comparison a bound parameter gets: the related column's affinity), when an upsert's key is NULL
 * somewhere, or when the statement runs into a constraint (SQLite undoes the statement); the record
 * loop then reports exactly which records broke what.
 *
 * Upsert is `INSERT … SELECT … ON CONFLICT (key) DO UPDATE`, so a key that comes twice is inserted,
 * then updated, as the record loop does it; the counts come from the distinct staged keys not yet in
 * the table (inserted), the rest being updates.
 */
export function prepareStagedCopy(
  sqlite: BetterSqlite3.Database,
  mapping: CompiledMapping,
  mode: WriteMode,
  staged: string,
): StagedCopy | null {
  const { columns, keyColumns } = mapping;
  const target = targetSql(mapping);
  const { table, names, nonKeys } = target;
  if (mode === 'update' || columns.some((c) => c.relation?.table === mapping.table.name)) return null;
  if (mode === 'upsert' && (keyColumns.length === 0 || nonKeys.length === 0)) return null;
  const one = (sql: string): BetterSqlite3.Statement => sqlite.prepare(sql).pluck();
  const refusals = [one(`select 1 from ${staged} where raw is not null limit 1`)];
  columns.forEach(({ relation }, i) => {
    if (relation === null) return;
    refusals.push(
      one(
        `select 1 from ${staged} s where s.c${i} is not null and not exists (select 1 from ${quoteIdent(relation.table)} r where r.${quoteIdent(relation.field)} = s.c${i}) limit 1`,
      ),
    );
  });
  const insert = `insert into ${table} (${names.join(', ')}) select ${valueAliases(columns.length).join(', ')} from ${staged}`;
  let copy: BetterSqlite3.Statement;
  let newKeys: BetterSqlite3.Statement | null = null;
  let total: BetterSqlite3.Statement | null = null;
  if (mode === 'upsert') {
    const keys = keyColumns.map((k) => `c${k}`);
    refusals.push(one(`select 1 from ${staged} where ${keys.map((k) => `${k} is null`).join(' or ')} limit 1`));
    const sameKey = keyColumns.map((k) => `t.${names[k]!} = s.c${k}`).join(' and ');
    newKeys = one(
      `select count(*) from (select distinct ${keys.join(', ')} from ${staged}) s where not exists (select 1 from ${table} t where ${sameKey})`,
    );
    total = one(`select count(*) from ${staged}`);
    // "where true": SQLite's grammar needs a WHERE before ON CONFLICT when the rows come from a SELECT.
    copy = sqlite.prepare(`${insert} where true order by record_no ${upsertClause(target)}`);
  } else {
    copy = sqlite.prepare(`${insert} order by record_no`);
  }
  return () => {
    if (refusals.some((refusal) => refusal.get() !== undefined)) return null;
    const inserted = newKeys === null ? null : (newKeys.get() as number);
    const rows = total === null ? null : (total.get() as number);
    let changes: number;
    try {
      changes = copy.run().changes;
    } catch (err) {
      if (isRecordLevelSqliteError(err)) return null;
      throw err;
    }
    return inserted === null || rows === null ? { inserted: changes, updated: 0 } : { inserted, updated: rows - inserted };
  };
}
