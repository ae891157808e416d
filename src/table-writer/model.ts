/** What an import is given and what it reports. */
import type { IntegrationPlan } from '../integrations/model.js';
import type { RecordError } from '../mapping/messages.js';
import type { TargetTable } from '../tables/model.js';

export type { RecordError } from '../mapping/messages.js';

export interface ImportTarget {
  readonly plan: IntegrationPlan;
  /** The target table and its related tables (from getTableWithRelations()). */
  readonly tables: ReadonlyMap<string, TargetTable>;
  /**
   * Asked between batches of records (about every 1 000 on SQLite, every chunk on PostgreSQL): true
   * stops the import there with ImportAborted, and its transaction rolls back (an administrator
   * cancelled or reset the request or run; see storage/abort-board.ts). Must be cheap.
   */
  readonly aborted?: () => boolean;
}

/** Thrown inside an import's transaction when `aborted()` said so: nothing of the import remains. */
export class ImportAborted extends Error {
  constructor() {
    super('the import was aborted by an administrator');
  }
}

export interface ImportInput extends ImportTarget {
  /** The JSON text, whole, or its stored chunks read as the import goes. */
  readonly payload: string | ChunkedPayload;
  /**
   * Whether the records are parsed and mapped on the mapping thread (mapped-batches.ts) where that is
   * possible; unset, a chunked payload and a text of 1 MB or more are.
   */
  readonly mapInThread?: boolean;
}

/**
 * A payload stored in chunks (its UTF-8 bytes in order). `chunks()` reads them from the start; it is
 * called a second time only when no record was found, to tell an empty array from a wrong records path.
 * SQLite's importer needs a synchronous reader (it runs inside a synchronous transaction).
 */
export interface ChunkedPayload {
  /** The payload's size in bytes. */
  readonly bytes: number;
  readonly chunks: () => Iterable<Uint8Array> | AsyncIterable<Uint8Array>;
}

/**
 * Records that are already parsed, in batches (the pages of a REST API run). The integration's records
 * path is not applied: each batch is a record array. The iterable is consumed once, inside the import's
 * transaction, so a lazy one (reading staged pages from the database) keeps one batch in memory at a time.
 */
export interface RecordBatchesInput extends ImportTarget {
  readonly batches: Iterable<readonly unknown[]>;
}

export interface ImportOutcome {
  /** True: data committed (possibly with skipped records). */
  readonly ok: boolean;
  /** Records written: inserted + updated. */
  readonly recordCount: number;
  readonly inserted: number;
  readonly updated: number;
  /** Records left out because of an error (skip mode only; a failed import writes and skips nothing). */
  readonly skipped: number;
  /** The first MAX_KEPT_ERRORS errors, in record order. */
  readonly errors: readonly RecordError[];
  /** All errors, including those not kept. */
  readonly errorCount: number;
  /** '' when there is no error. */
  readonly errorMessage: string;
}

export const MAX_KEPT_ERRORS = 1000;

/**
 * Runs inside the import's transaction after the data is written (or rolled back, on failure), and
 * says whether the caller still owns the work (its lease-fenced status write changed a row). False
 * undoes the import's data and finish's own writes.
 */
export type ImportFinish = (outcome: ImportOutcome) => boolean;

export interface ImportResult {
  /** False: finish returned false, and nothing of the import (nor of finish) remains. */
  committed: boolean;
  outcome: ImportOutcome;
}
