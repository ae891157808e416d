/**
 * Where a run stages its pages and ends: the dialect seam of the run orchestrator (run-imports.ts).
 * The transitions are the shared ones (complete-run.ts, fail-run.ts, one statement text for both
 * dialects); what differs is the connection they run on and how a transaction is held:
 *
 * - SQLite (sqlite/run-store.ts): the worker thread's own connection; records are mapped as their page
 *   arrives and staged as rows; staging writes are synchronous, and their commits skip the fsync; the
 *   import is one better-sqlite3 transaction over the staged rows.
 * - PostgreSQL (postgres/run-store.ts): a pool client the run holds from its first page to its end,
 *   because the staged records live in that session's TEMP table. Staging statements commit with
 *   synchronous_commit off; the import is one leased transaction on that client, its last write the
 *   fenced status.
 *
 * Either way every staging write and the final status are fenced by the run's lease, and the staged
 * records are cleared when the run ends, however it ends.
 */
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { CompiledMapping } from '../mapping/engine.js';
import type { ImportOutcome, ImportResult, ImportTarget } from '../table-writer/model.js';
import type { CompleteRunArgs } from './complete-run.js';
import type { FailRunArgs } from './fail-run.js';
import type { PageBuffer, StagingLimits } from './page-buffer.js';

/** How the import transaction ends: the run Completed or Failed (both fenced by the lease). */
export type RunEnd = { readonly complete: CompleteRunArgs } | { readonly fail: FailRunArgs };

export interface RunStore {
  /** Drops what an interrupted earlier attempt of this run staged. */
  discardStaged(): Promise<void>;
  /** Stages the run's pages (an earlier attempt's staged records are gone first); `mapping` is the import's. */
  pageBuffer(limits: StagingLimits, mapping: CompiledMapping): PageBuffer;
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
  /** When this claim started: with the owner, the claim a cancel names (storage/abort-board.ts). */
  readonly startedAt?: string;
  readonly clock: Clock;
  readonly log: Logger;
  /** How often the lease is renewed during PostgreSQL's import transaction; default a third of the lease. */
  readonly heartbeatMs?: number;
}
