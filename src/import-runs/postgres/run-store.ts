/**
 * A run's store on PostgreSQL (see ../run-store.ts): one pool client held from the run's first page to
 * its end, because the staged records live in that session's TEMP table (staged-records.ts).
 */
import { sql } from 'kysely';
import type pg from 'pg';
import { onClient, select, withScratchCommits } from '../../storage/connection.js';
import type { PostgresDatabase } from '../../storage/database.js';
import { inLeasedTransaction, LEASE_LOST } from '../../storage/postgres/leased-transaction.js';
import { importRecordBatchesPg } from '../../table-writer/postgres/importer.js';
import { failedOutcome } from '../../table-writer/tally.js';
import { payloadError } from '../../mapping/messages.js';
import { completeRun } from '../complete-run.js';
import { failRun, type FailRunArgs } from '../fail-run.js';
import { heartbeatRun, runLeaseHeld } from '../heartbeat-run.js';
import { createAsyncPageBuffer } from '../page-buffer.js';
import type { RunStore, RunStoreArgs } from '../run-store.js';
import { discardStagedPages } from '../stage-page.js';
import { serialisePage, stagePages } from './stage-pages.js';
import { clearStagedRecords, createStagedRecordsTable, stagedPages } from './staged-records.js';

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

export async function postgresRunStore(
  db: PostgresDatabase,
  { runId, owner, leaseMs, clock, log, heartbeatMs }: RunStoreArgs,
): Promise<RunStore> {
  // The run holds one connection for its whole length and renews its lease through another: with a
  // single connection in the pool the renewal would wait for the run, forever.
  if ((db.pool.options.max ?? 10) < 2)
    throw new Error('an import run on PostgreSQL needs a pool of at least 2 connections (IFW_DATABASE_POOL_SIZE)');
  const client: pg.PoolClient = await db.pool.connect();
  const conn = onClient(client);
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
    await createStagedRecordsTable(conn);
  } catch (err) {
    giveBack(asError(err));
    throw err;
  }
  const renewal = {
    renew: () => heartbeatRun(db, { runId, owner, now: clock(), leaseMs }),
    // An administrator's cancel clears the lease: read back often, so the import stops at once.
    held: () => runLeaseHeld(db, runId, owner),
    leaseMs,
    heartbeatMs,
    log,
  };
  return {
    async discardStaged() {
      await clearStagedRecords(conn, runId);
      await discardStagedPages(db, { runId, owner });
    },
    pageBuffer: (limits) =>
      createAsyncPageBuffer(serialisePage, (pages) => stagePages(conn, { runId, owner, now: clock(), leaseMs }, pages), limits),
    scratch: (fn) => withScratchCommits(conn, fn),
    fail: (args) => failRun(conn, args),
    async importStaged(target, end) {
      const result = await inLeasedTransaction(
        db,
        client,
        renewal,
        async (finishing, lost) => {
          // Staging counted the records: the importer sizes its chunks by that (table-writer/postgres/records.ts).
          const [run] = await select(
            conn,
            sql<{ records_fetched: number }>`select records_fetched from ifw_import_run where run_id = ${runId}`,
          );
          const input = {
            ...target,
            aborted: lost,
            batches: stagedPages(conn, runId),
            ...(run === undefined ? {} : { expectedRecords: Number(run.records_fetched) }),
          };
          return importRecordBatchesPg(client, input, async (outcome) => {
            if (!finishing()) return false;
            const ending = end(outcome);
            return 'complete' in ending ? completeRun(conn, ending.complete) : failRun(conn, ending.fail);
          });
        },
        (err) => (broken ??= err),
      );
      if (result !== LEASE_LOST) return result;
      return { committed: false, outcome: failedOutcome([payloadError('lease lost', 'the lease was lost during the import')], 1) };
    },
    clearStaged: () => clearStagedRecords(conn, runId),
    async close() {
      // The client goes back to the pool with an empty staging table; a client that cannot even do that is dropped.
      if (broken !== undefined) return giveBack();
      try {
        await clearStagedRecords(conn, runId);
        giveBack();
      } catch (err) {
        giveBack(asError(err));
      }
    },
  };
}

/**
 * Fails a run that got no store (opening it threw, e.g. a pool too small for a run): the Failed status
 * alone, through a connection of its own for as long as the statement takes.
 */
export async function failRunAlone(db: PostgresDatabase, args: FailRunArgs): Promise<boolean> {
  const client = await db.pool.connect();
  try {
    const conn = onClient(client);
    await createStagedRecordsTable(conn);
    return await failRun(conn, args);
  } finally {
    client.release();
  }
}
