/**
 * A dry run of an integration: the real import, under the integration's settings (write mode, On
 * record error, relations, the rows already in the table), inside a transaction that is always rolled
 * back. Its outcome is therefore the outcome the real import would have, status, counts and messages,
 * because it is the same code: "Try a payload" imports a payload as a bulk import request does
 * (importPayload), "Preview first page" imports page 1's records as a run does (importRecordBatches).
 *
 * On SQLite the importer owns its synchronous transaction and rolls all of it back when `finish` says
 * false; it runs on the HTTP thread's connection while no other query of that thread holds it, and is
 * retried while another thread holds the write lock. On PostgreSQL it runs on a pooled client between
 * BEGIN and ROLLBACK.
 */
import { AppError } from '../core/errors.js';
import type { IntegrationPlan } from '../integrations/model.js';
import { getIntegrationPlan } from '../integrations/store.js';
import type { SqlValue } from '../mapping/convert.js';
import { compileMapping, mapRecord, type CompiledMapping } from '../mapping/engine.js';
import { unmatchedSourcePaths } from '../mapping/source-paths.js';
import type { Database, PostgresDatabase, SqliteDatabase } from '../storage/database.js';
import { retryBusy } from '../storage/sqlite/dialect.js';
import type { TargetTable } from '../tables/model.js';
import { getTableWithRelations } from '../tables/store.js';
import type { ImportOutcome, ImportResult, ImportTarget } from './model.js';
import { importPayloadPg, importRecordBatchesPg, type PgClient } from './postgres/importer.js';
import { importPayload, importRecordBatches } from './sqlite/importer.js';

/** One record as the import takes it: the row it maps to, or its errors in the import's words. */
export type DryRunRow =
  | { readonly recordNo: number; readonly row: Readonly<Record<string, SqlValue>> }
  | { readonly recordNo: number; readonly errors: readonly string[] };

/** The integration a dry run imports with. */
export interface DryRunIntegration {
  readonly plan: IntegrationPlan;
  /** Where the records are in a payload or a page ('' blank); page-records.ts. */
  readonly recordsPath: string;
  /** Compiled against its target table, or the message an import fails with at its start. */
  readonly mapping: CompiledMapping | { readonly error: string };
  /** The import of these records (a page's) as a run makes it, rolled back: its outcome. */
  readonly importRecords: (records: readonly unknown[]) => Promise<ImportOutcome>;
  /** The import of a payload text as a bulk import request makes it, rolled back: its outcome. */
  readonly importPayload: (payload: string) => Promise<ImportOutcome>;
}

/** What a dry run shows: the outcome, the first records, and source paths that find nothing. */
export interface DryRun {
  readonly outcome: ImportOutcome;
  /** The first records: each its row (as the import would map it) or its errors (as the import words them). */
  readonly rows: readonly DryRunRow[];
  /** One sentence per mapped source path that matches nothing in the records. */
  readonly warnings: readonly string[];
}

/** How long a dry run waits for SQLite's write lock (held by an import on a worker thread) before answering 503. */
const SQLITE_BUSY_WAIT_MS = 30_000;
/** How long a dry run waits for a row lock on PostgreSQL (a real import writing the same keys) before answering 503. */
const POSTGRES_LOCK_TIMEOUT = '10s';

const busy = (): AppError => new AppError(503, 'serviceUnavailable', 'The database is busy; try again shortly.');
const rollBack = (): boolean => false;

function onSqlite(db: SqliteDatabase, run: (sqlite: SqliteDatabase['sqlite']) => ImportResult): Promise<ImportOutcome> {
  // Holding the query builder's connection keeps this thread's other queries out of the transaction.
  return db.connection().execute(() => retryBusy(() => run(db.sqlite).outcome, SQLITE_BUSY_WAIT_MS));
}

async function onPostgres(db: PostgresDatabase, run: (client: PgClient) => Promise<ImportResult>): Promise<ImportOutcome> {
  const client = await db.pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(`BEGIN; SET LOCAL lock_timeout = '${POSTGRES_LOCK_TIMEOUT}'`);
    try {
      return (await run(client)).outcome;
    } catch (err) {
      if ((err as { code?: unknown }).code === '55P03') throw busy();
      throw err;
    } finally {
      await client.query('ROLLBACK').catch((err: unknown) => {
        broken = err instanceof Error ? err : new Error(String(err));
      });
    }
  } finally {
    // A client whose ROLLBACK failed is in an unknown state: pg closes it instead of pooling it.
    client.release(broken);
  }
}

/** The dry-run imports of one integration on `db`. */
function importers(db: Database, target: ImportTarget): Pick<DryRunIntegration, 'importRecords' | 'importPayload'> {
  if (db.dialect === 'sqlite') {
    return {
      importRecords: (records) => onSqlite(db, (sqlite) => importRecordBatches(sqlite, { ...target, batches: [records] }, rollBack)),
      importPayload: (payload) => onSqlite(db, (sqlite) => importPayload(sqlite, { ...target, payload, mapInThread: false }, rollBack)),
    };
  }
  return {
    importRecords: (records) =>
      onPostgres(db, (client) =>
        importRecordBatchesPg(client, { ...target, batches: [records], expectedRecords: records.length }, rollBack),
      ),
    importPayload: (payload) => onPostgres(db, (client) => importPayloadPg(client, { ...target, payload }, rollBack)),
  };
}

/** The integration with that Sorting Order as a dry run uses it; undefined when there is none. */
export async function loadDryRunIntegration(db: Database, sortingOrder: number): Promise<DryRunIntegration | undefined> {
  const plan = await getIntegrationPlan(db, sortingOrder);
  if (plan === undefined) return undefined;
  const tables: ReadonlyMap<string, TargetTable> = await getTableWithRelations(db, plan.integration.targetTable);
  let mapping: DryRunIntegration['mapping'];
  try {
    mapping = compileMapping(plan, tables);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    mapping = { error: err.message };
  }
  return { plan, recordsPath: plan.integration.recordsPath, mapping, ...importers(db, { plan, tables }) };
}

/**
 * The first `shown` records as the outcome judged them: a record the import reported is shown with
 * the import's messages; any other with the row it maps to. When the import kept fewer errors than it
 * found, records after the last kept one cannot be told apart and are left out.
 */
function shownRows(mapping: CompiledMapping, records: readonly unknown[], outcome: ImportOutcome, shown: number): DryRunRow[] {
  const messages = new Map<number, string[]>();
  for (const e of outcome.errors)
    if (e.recordNo !== null) (messages.get(e.recordNo) ?? messages.set(e.recordNo, []).get(e.recordNo)!).push(e.message);
  const truncated = outcome.errorCount > outcome.errors.length;
  const lastKnown = truncated ? (outcome.errors.at(-1)?.recordNo ?? 0) : Infinity;
  const { columns } = mapping;
  const row = new Array<SqlValue>(columns.length).fill(null);
  const rows: DryRunRow[] = [];
  for (let i = 0; i < Math.min(shown, records.length); i++) {
    const recordNo = i + 1;
    if (recordNo > lastKnown) break;
    const errors = messages.get(recordNo);
    if (errors !== undefined) {
      rows.push({ recordNo, errors });
      continue;
    }
    // Only for display: whether the record goes in was decided by the import above.
    mapRecord(mapping, records[i], row, () => true);
    rows.push({ recordNo, row: Object.fromEntries(columns.map((c, n) => [c.field.name, row[n]!])) });
  }
  return rows;
}

/** What a dry run shows of `records` and their import's `outcome`. */
export function describeDryRun(
  integration: DryRunIntegration,
  mapping: CompiledMapping,
  records: readonly unknown[],
  outcome: ImportOutcome,
  shown: number,
): DryRun {
  return { outcome, rows: shownRows(mapping, records, outcome, shown), warnings: unmatchedSourcePaths(integration.plan, records) };
}

/**
 * The outcome in the words of a person about to submit: "would end Failed: nothing would be written"
 * or "would end Completed: 3 would be inserted, 1 updated, 2 skipped".
 */
export function dryRunSummary(outcome: ImportOutcome): string {
  if (!outcome.ok) return 'The import would end Failed: nothing would be written.';
  const { inserted, updated, skipped } = outcome;
  if (inserted + updated + skipped === 0) return 'The import would end Completed: there are no records, nothing would be written.';
  return `The import would end Completed: ${inserted} would be inserted, ${updated} updated, ${skipped} skipped.`;
}
