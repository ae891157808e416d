/**
 * One request's import transaction, per dialect: the data writes and the fenced final status write
 * (Completed or Failed, with the per-record errors) commit together, or, when the lease is no longer
 * this worker's, nothing does.
 *
 * - SQLite: the synchronous importer on the worker thread's own connection; finish runs inside its
 *   transaction. No heartbeat is possible meanwhile (the thread is busy), nor needed: one writer.
 * - PostgreSQL: a pooled client, BEGIN, the PostgreSQL importer, finish on the same client, COMMIT.
 *   The lease is renewed meanwhile on another pooled connection (keep-lease.ts).
 */
import type { Logger } from 'pino';
import { importPayload as defaultImportPayload } from '../table-writer/sqlite/importer.js';
import type { ImportInput, ImportOutcome } from '../table-writer/model.js';
import { importPayloadPg as defaultImportPayloadPg } from '../table-writer/postgres/importer.js';
import type { PostgresConnection } from '../storage/connection.js';
import type { PostgresDatabase, SqliteDatabase } from '../storage/database.js';
import { completeRequest } from './complete-request.js';
import { failRequest } from './fail-request.js';
import { heartbeatRequest } from './heartbeat-request.js';
import { backendPid, cancelBackend, defaultHeartbeatMs, keepLease } from '../storage/postgres/lease-keeper.js';
import type { ProcessorContext } from './processor.js';
import { replaceRequestErrors } from './record-errors.js';

export type Imported = { readonly committed: false } | { readonly committed: true; readonly outcome: ImportOutcome };

export interface ImportJob {
  readonly requestId: string;
  readonly input: ImportInput;
  readonly time: () => Date;
  readonly log: Logger;
}

export function importInTransaction(ctx: ProcessorContext, job: ImportJob): Imported | Promise<Imported> {
  const { db } = ctx;
  return db.dialect === 'sqlite' ? importOnSqlite(ctx, db, job) : importOnPostgres(ctx, db, job);
}

function importOnSqlite(ctx: ProcessorContext, db: SqliteDatabase, { requestId, input, time }: ImportJob): Imported {
  const { owner } = ctx;
  const run = ctx.importPayload ?? defaultImportPayload;
  return run(db.sqlite, input, (result) => {
    const at = time();
    const finished = result.ok
      ? completeRequest(db, { requestId, owner, now: at, ...countsOf(result) })
      : failRequest(db, { requestId, owner, now: at, errorMessage: result.errorMessage });
    if (finished) replaceRequestErrors(db, requestId, result.errors);
    return finished;
  });
}

const countsOf = (o: ImportOutcome) => ({
  recordCount: o.recordCount,
  inserted: o.inserted,
  updated: o.updated,
  skipped: o.skipped,
  errorMessage: o.errorMessage,
});

async function importOnPostgres(ctx: ProcessorContext, db: PostgresDatabase, job: ImportJob): Promise<Imported> {
  const { owner } = ctx;
  const { requestId, input, time } = job;
  const run = ctx.importPayloadPg ?? defaultImportPayloadPg;
  const client = await db.pool.connect();
  const conn: PostgresConnection = { dialect: 'postgres', pg: client };
  const lease = keepLease({
    renew: () => heartbeatRequest(db, { requestId, owner, now: time(), leaseMs: ctx.leaseMs }),
    everyMs: ctx.heartbeatMs ?? defaultHeartbeatMs(ctx.leaseMs),
    cancel: cancelBackend(db, backendPid(client)),
    log: job.log,
  });
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await run(client, input, async (outcome) => {
      lease.finishing();
      if (lease.lost) return false;
      const at = time();
      const finished = outcome.ok
        ? await completeRequest(conn, { requestId, owner, now: at, ...countsOf(outcome) })
        : await failRequest(conn, { requestId, owner, now: at, errorMessage: outcome.errorMessage });
      if (finished) await replaceRequestErrors(conn, requestId, outcome.errors);
      return finished;
    });
    await client.query(result.committed ? 'COMMIT' : 'ROLLBACK');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    // The heartbeat found the lease lost and cancelled the import's statement: nothing was committed.
    if (lease.lost) return { committed: false };
    throw err;
  } finally {
    await lease.stop();
    // A client whose ROLLBACK failed is in an unknown state: pg closes it instead of pooling it.
    client.release(broken);
  }
}
