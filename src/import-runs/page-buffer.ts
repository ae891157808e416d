/**
 * Batched staging. A commit costs several times the insert of a page, so fetched pages wait in a
 * small buffer and are staged several per transaction. The buffer keeps what the run promised:
 *
 * - memory stays flat: it holds at most `maxPages` pages and about `maxBytes` of prepared records
 *   (serialised, or mapped to rows: see stage-page.ts);
 * - progress stays visible: no page waits longer than `maxDelayMs` before it is staged (and counted in
 *   pagesFetched). A timer writes a buffer that has waited that long, and a page that arrives
 *   `maxDelayMs` or more after the last write is written at once: against a slow API every page is
 *   staged as soon as it arrives, exactly as without a buffer.
 *
 * The caller writes what is left (`flush`) before it records the run's end, Completed or Failed.
 * One implementation serves both dialects: SQLite writes synchronously on the worker's thread, and the
 * buffer then answers at once (no promise per page on the hot path); PostgreSQL's writes are round
 * trips, which never overlap: each waits for the one before (a write on the timer may still be in
 * flight when the next is due), and a caller that hands in a page when a write is due waits for that
 * write, so a fast API cannot outrun the database.
 */
import type { FetchedRecords, PreparedPage } from './stage-page.js';

export interface StagingLimits {
  /** Pages staged in one transaction at most. */
  readonly maxPages: number;
  /** Bytes of prepared records in one transaction at most, about (a page larger than that is staged alone). */
  readonly maxBytes: number;
  /** How long a fetched page may wait before it is staged. */
  readonly maxDelayMs: number;
}

/**
 * Against a fast API up to 256 pages share a commit: fewer commits also mean fewer pages rewritten in
 * the write-ahead log and less for the final commit to fsync (measured faster than 64, and 16 slower
 * still). 1 MB bounds the memory whatever the page size; 50 ms keeps a poller's view of a run fresh.
 */
export const DEFAULT_STAGING_LIMITS: StagingLimits = { maxPages: 256, maxBytes: 1 << 20, maxDelayMs: 50 };

export interface Buffered {
  readonly pages: number;
  readonly bytes: number;
  /** Since the last write (or since the buffer was created). */
  readonly sinceWriteMs: number;
}

/** Whether the buffered pages are to be written now. */
export const flushDue = (buffered: Buffered, limits: StagingLimits): boolean =>
  buffered.pages > 0 &&
  (buffered.pages >= limits.maxPages || buffered.bytes >= limits.maxBytes || buffered.sinceWriteMs >= limits.maxDelayMs);

/** Turns a fetched page into what is written (its records serialised or mapped), so that the parsed response can go. */
export type PreparePage<P extends PreparedPage> = (page: FetchedRecords) => P;

/** Writes pages in one transaction: false when the run's lease is no longer this worker's. */
export type WritePages<P extends PreparedPage> = (pages: readonly P[]) => boolean | Promise<boolean>;

type MaybePromise<T> = T | Promise<T>;

export interface PageBuffer<R extends MaybePromise<boolean> = MaybePromise<boolean>> {
  /**
   * Buffers a page and writes the buffer when it is due. False once the lease is lost (stop fetching);
   * throws what a write on the timer threw.
   */
  add(page: FetchedRecords): R;
  /** Writes the buffered pages now. False when the lease is lost. */
  flush(): R;
  /** Stops the timer and drops what is buffered (call it when the run goes no further); waits for a write in flight. */
  close(): R extends boolean ? void : Promise<void>;
}

/** With synchronous writes every answer is immediate. */
export function createPageBuffer<P extends PreparedPage>(
  prepare: PreparePage<P>,
  write: (pages: readonly P[]) => boolean,
  limits?: StagingLimits,
  now?: () => number,
): PageBuffer<boolean>;
export function createPageBuffer<P extends PreparedPage>(
  prepare: PreparePage<P>,
  write: WritePages<P>,
  limits?: StagingLimits,
  now?: () => number,
): PageBuffer;
export function createPageBuffer<P extends PreparedPage>(
  prepare: PreparePage<P>,
  write: WritePages<P>,
  limits: StagingLimits = DEFAULT_STAGING_LIMITS,
  now: () => number = () => performance.now(),
): PageBuffer {
  let pages: P[] = [];
  let bytes = 0;
  let lastWriteAt = now();
  let timer: NodeJS.Timeout | undefined;
  let lost = false;
  // A write on the timer has no caller to throw to: its error is thrown by the next add or flush.
  let failure: { readonly error: unknown } | undefined;
  // Settles when the last asynchronous write has; undefined when none is in flight.
  let tail: Promise<void> | undefined;

  const stopTimer = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };

  const outcome = (): boolean => {
    if (failure !== undefined) throw failure.error;
    return !lost;
  };

  const runWrite = (batch: P[]): MaybePromise<void> => {
    if (failure !== undefined || lost || batch.length === 0) return;
    let result: MaybePromise<boolean>;
    try {
      result = write(batch);
    } catch (error) {
      failure = { error };
      return;
    }
    if (typeof result === 'boolean') {
      lost = !result;
      lastWriteAt = now();
      return;
    }
    return result.then(
      (ok) => {
        lost = !ok;
        lastWriteAt = now();
      },
      (error: unknown) => {
        failure = { error };
      },
    );
  };

  const writeBuffered = (): MaybePromise<boolean> => {
    stopTimer();
    const batch = pages;
    pages = [];
    bytes = 0;
    const written = tail === undefined ? runWrite(batch) : tail.then(() => runWrite(batch));
    if (written === undefined) return outcome();
    const settled: Promise<void> = written.then(() => {
      if (tail === settled) tail = undefined;
    });
    tail = settled;
    return settled.then(outcome);
  };

  const onTimer = (): void => {
    timer = undefined;
    try {
      const written = writeBuffered();
      // Its error, if any, is kept for the next add or flush.
      if (typeof written !== 'boolean') written.catch(() => undefined);
    } catch {
      // Kept in `failure` by runWrite.
    }
  };

  return {
    add(page) {
      if (!outcome()) return false;
      const prepared = prepare(page);
      pages.push(prepared);
      bytes += prepared.bytes;
      if (flushDue({ pages: pages.length, bytes, sinceWriteMs: now() - lastWriteAt }, limits)) return writeBuffered();
      timer ??= setTimeout(onTimer, Math.max(0, lastWriteAt + limits.maxDelayMs - now()));
      return true;
    },
    flush() {
      outcome();
      return writeBuffered();
    },
    close() {
      stopTimer();
      pages = [];
      bytes = 0;
      return tail;
    },
  };
}

/** The same buffer with every answer a promise, as callers of asynchronous writes await them. */
export function createAsyncPageBuffer<P extends PreparedPage>(
  prepare: PreparePage<P>,
  write: (pages: readonly P[]) => Promise<boolean>,
  limits: StagingLimits = DEFAULT_STAGING_LIMITS,
  now: () => number = () => performance.now(),
): PageBuffer<Promise<boolean>> {
  const buffer = createPageBuffer(prepare, write as WritePages<P>, limits, now);
  return {
    add: async (page) => buffer.add(page),
    flush: async () => buffer.flush(),
    close: async () => {
      await buffer.close();
    },
  };
}
