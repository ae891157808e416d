/**
 * Where a run stages its pages and ends: the dialect seam of the run orchestrator (run-imports.ts).
 * The transitions are the shared ones (one statement text for both dialects); what differs is the
 * connection they run on and how a transaction is held:
 *
 * - SQLite: the worker thread's own connection; records are mapped as their page arrives and staged as
 *   rows (importer/staged-rows.ts); staging writes are synchronous, and their commits skip the fsync;
 *   the import is one better-sqlite3 transaction over the staged rows.
 * - PostgreSQL: a pool client the run holds from its first page to its end, because the staged records
 *   live in that session's TEMP table. Staging statements commit with synchronous_commit off; the import
 *   is BEGIN … importRecordBatchesPg … COMMIT on that client, its last write the fenced status.
 *
 * Either way every staging write and the final status are fenced by the run's lease, and the staged
 * records are cleared when the run ends, however it ends.
 */
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import { importStagedRows } from '../table-writer/sqlite/importer.js';
import type { ImportOutcome, ImportResult, ImportTarget } from '../table-writer/model.js';
import { importRecordBatchesPg } from '../table-writer/postgres/importer.js';
import { failedOutcome } from '../table-writer/tally.js';
import { payloadError } from '../mapping/messages.js';
import { backendPid, cancelBackend, defaultHeartbeatMs, keepLease } from '../storage/postgres/lease-keeper.js';
import { heartbeatRun } from './heartbeat-run.js';
import type pg from 'pg';
import type { Database, PostgresDatabase, SqliteDatabase } from '../storage/database.js';
import { withScratchCommits } from '../storage/sqlite/dialect.js';
import { completeRun, completeRunPg, type CompleteRunArgs } from './complete-run.js';
import { failRun, failRunPg, type FailRunArgs } from './fail-run.js';
import { dropStagedRows, stagedRowsTable } from '../table-writer/sqlite/staged-rows.js';
import type { CompiledMapping } from '../mapping/engine.js';
import { createAsyncPageBuffer, createPageBuffer, type StagingLimits } from './page-buffer.js';
import type { FetchedRecords } from './stage-page.js';
import { discardStagedPages, serialisePage, sqliteStaging, stagePagesPg } from './stage-page.js';
import { stagedPagesPg } from './postgres/staged-pages.js';
import { clearStagedRecordsPg, stagedRecordsTablePg } from './postgres/staged-records.js';

/** How the import transaction ends: the run Completed or Failed (both fenced by the lease). */
export type RunEnd = { readonly complete: CompleteRunArgs } | { readonly fail: FailRunArgs };

/** A page buffer of either kind (page-buffer.ts): the orchestrator awaits what it answers. */
export interface StagingBuffer {
  add(page: FetchedRecords): boolean | Promise<boolean>;
  flush(): boolean | Promise<boolean>;
  close(): void | Promise<void>;
}

export interface RunStore {
  /** Drops what an interrupted earlier attempt of this run staged. */
  discardStaged(): Promise<void>;
  /** Stages the run's pages (an earlier attempt's staged records are gone first); `mapping` is the import's. */
  pageBuffer(limits: StagingLimits, mapping: CompiledMapping): StagingBuffer;
  /** Runs `fn` (the fetch) with staging commits that need not survive a crash: the run starts again from page 1 anyway. */
  scratch<T>(fn: () => Promise<T>): Promise<T>;
  /** The run Failed (fenced) and its staged records cleared; false when the lease was lost. */
  fail(args: FailRunArgs): Promise<boolean>;
  /** One transaction: every staged record through the importer, then `end(outcome)`'s fenced status. */
  importStaged(target: ImportTarget, end: (outcome: ImportOutcome) => RunEnd): Promise<ImportResult>;
  clearStaged(): Promise<void>;
  /** Gives the connection back (PostgreSQL). */
  close(): Promise<void>;
}

export interface RunStoreArgs {
  readonly runId: string;
  readonly owner: string;
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  /** How often the lease is renewed during PostgreSQL's import transaction; default a third of the lease. */
  readonly heartbeatMs?: number;
}

export async function openRunStore(db: Database, args: RunStoreArgs): Promise<RunStore> {
  return db.dialect === 'sqlite' ? sqliteRunStore(db, args) : await postgresRunStore(db, args);
}

/**
 * Fails a run that got no store (openRunStore threw, e.g. a pool too small for a run): the Failed status
 * alone, through a connection of its own for as long as the statement takes.
 */
export async function failRunWithoutStore(db: Database, args: FailRunArgs): Promise<boolean> {
  if (db.dialect === 'sqlite') return failRun(db, args);
  const client = await db.pool.connect();
  try {
    await stagedRecordsTablePg(client);
    return await failRunPg(client, args);
  } finally {
    client.release();
  }
}

/** A synchronous call as a promise: a throw becomes a rejection, as for PostgreSQL's round trips. */
const settle = <T>(fn: () => T): Promise<T> => new Promise((resolve) => resolve(fn()));

function sqliteRunStore(db: SqliteDatabase, { runId, owner, leaseMs, clock }: RunStoreArgs): RunStore {
  return {
    discardStaged: () => discardStagedPages(db, { runId, owner }),
    pageBuffer(limits, mapping) {
      const staging = sqliteStaging(db, runId, mapping);
      return createPageBuffer(staging.stageRecords, (pages) => staging.write({ runId, owner, now: clock(), leaseMs }, pages), limits);
    },
    scratch: (fn) => withScratchCommits(db.sqlite, fn),
    fail: (args) => settle(() => failRun(db, args)),
    importStaged: (target, end) =>
      settle(() =>
        importStagedRows(db.sqlite, { ...target, table: stagedRowsTable(runId) }, (outcome) => {
          const ending = end(outcome);
          return 'complete' in ending ? completeRun(db, ending.complete) : failRun(db, ending.fail);
        }),
      ),
    clearStaged: () => settle(() => dropStagedRows(db.sqlite, runId)),
    close: () => Promise.resolve(),
  };
}

async function postgresRunStore(db: PostgresDatabase, { runId, owner, leaseMs, clock, log, heartbeatMs }: RunStoreArgs): Promise<RunStore> {
  // The run holds one connection for its whole length and renews its lease through another: with a
  // single connection in the pool the renewal would wait for the run, forever.
  if ((db.pool.options.max ?? 10) < 2)
    throw new Error('an import run on PostgreSQL needs a pool of at least 2 connections (IFW_DATABASE_POOL_SIZE)');
  const client: pg.PoolClient = await db.pool.connect();
  // A checked-out client has no listener of the pool's: without this one, the server ending the
  // connection mid-run would be an unhandled 'error' event and end the process. The run's next
  // statement fails anyway, and the broken client is dropped on close.
  let broken: Error | undefined;
  const onError = (err: Error): void => {
    broken ??= err;
  };
  client.on('error', onError);
  const giveBack = (err?: Error): void => {
    client.removeListener('error', onError);
    client.release(err ?? broken);
  };
  try {
    await stagedRecordsTablePg(client);
  } catch (err) {
    giveBack(err instanceof Error ? err : new Error(String(err)));
    throw err;
  }
  return {
    async discardStaged() {
      await clearStagedRecordsPg(client, runId);
      await discardStagedPages(db, { runId, owner });
    },
    pageBuffer: (limits) =>
      createAsyncPageBuffer(serialisePage, (pages) => stagePagesPg(client, { runId, owner, now: clock(), leaseMs, pages }), limits),
    async scratch(fn) {
      // Like SQLite's synchronous=NORMAL: a crash may lose the last staging commits, never corrupt anything.
      await client.query('set synchronous_commit = off');
      let result: Awaited<ReturnType<typeof fn>>;
      try {
        result = await fn();
      } catch (err) {
        // The fetch's error is the one to report, even when the connection is the thing that broke.
        await client.query('reset synchronous_commit').catch(() => undefined);
        throw err;
      }
      await client.query('reset synchronous_commit');
      return result;
    },
    fail: (args) => failRunPg(client, args),
    async importStaged(target, end) {
      // The import may outlast the lease: it is renewed meanwhile on another pooled connection, and a
      // renewal that finds it lost cancels the import's statement (keep-lease.ts).
      const lease = keepLease({
        renew: () => heartbeatRun(db, { runId, owner, now: clock(), leaseMs }),
        everyMs: heartbeatMs ?? defaultHeartbeatMs(leaseMs),
        cancel: cancelBackend(db, backendPid(client)),
        log,
      });
      try {
        await client.query('begin');
        // Staging counted the records: the importer sizes its chunks by that (importer/postgres/records.ts).
        const { rows } = await client.query<{ record_count: number }>('select record_count from ifw_import_run where run_id = $1', [runId]);
        const staged = rows[0]?.record_count;
        const input = {
          ...target,
          batches: stagedPagesPg(client, runId),
          ...(staged === undefined ? {} : { expectedRecords: Number(staged) }),
        };
        const result = await importRecordBatchesPg(client, input, (outcome) => {
          lease.finishing();
          if (lease.lost) return false;
          const ending = end(outcome);
          return 'complete' in ending ? completeRunPg(client, ending.complete) : failRunPg(client, ending.fail);
        });
        if (!result.committed) {
          await client.query('rollback');
          return result;
        }
        // COMMIT of an aborted transaction answers ROLLBACK instead of failing: that must not pass for a commit.
        const { command } = await client.query('commit');
        if (command !== 'COMMIT') throw new Error(`the import transaction of run ${runId} did not commit (${command})`);
        return result;
      } catch (err) {
        await client.query('rollback').catch(() => undefined);
        // The renewal found the lease lost and cancelled the import's statement: nothing was committed.
        if (lease.lost)
          return { committed: false, outcome: failedOutcome([payloadError('lease lost', 'the lease was lost during the import')], 1) };
        throw err;
      } finally {
        await lease.stop();
      }
    },
    clearStaged: () => clearStagedRecordsPg(client, runId),
    async close() {
      // The client goes back to the pool with an empty staging table; a client that cannot even do that is dropped.
      if (broken !== undefined) return giveBack();
      try {
        await clearStagedRecordsPg(client, runId);
        giveBack();
      } catch (err) {
        giveBack(err instanceof Error ? err : new Error(String(err)));
      }
    },
  };
}
