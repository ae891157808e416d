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
 * SQLite writes synchronously on the worker's thread (`createPageBuffer`); PostgreSQL's writes are
 * round trips (`createAsyncPageBuffer`, same rules, writes one after another).
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

/** Writes pages in one transaction; false when the run's lease is no longer this worker's. */
export type WritePages<P extends PreparedPage> = (pages: readonly P[]) => boolean;

export interface PageBuffer {
  /**
   * Buffers a page and writes the buffer when it is due. False once the lease is lost (stop fetching);
   * throws what a write on the timer threw.
   */
  add(page: FetchedRecords): boolean;
  /** Writes the buffered pages now. False when the lease is lost. */
  flush(): boolean;
  /** Stops the timer. Pages still buffered are dropped: call it when the run goes no further. */
  close(): void;
}

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

  const stopTimer = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };

  const flush = (): boolean => {
    if (failure !== undefined) throw failure.error;
    stopTimer();
    if (lost) return false;
    if (pages.length === 0) return true;
    const writing = pages;
    pages = [];
    bytes = 0;
    lost = !write(writing);
    lastWriteAt = now();
    return !lost;
  };

  const onTimer = (): void => {
    timer = undefined;
    try {
      flush();
    } catch (error) {
      failure = { error };
    }
  };

  return {
    add(page) {
      if (failure !== undefined) throw failure.error;
      if (lost) return false;
      const prepared = prepare(page);
      pages.push(prepared);
      bytes += prepared.bytes;
      if (flushDue({ pages: pages.length, bytes, sinceWriteMs: now() - lastWriteAt }, limits)) return flush();
      timer ??= setTimeout(onTimer, Math.max(0, lastWriteAt + limits.maxDelayMs - now()));
      return true;
    },
    flush,
    close() {
      stopTimer();
      pages = [];
      bytes = 0;
    },
  };
}

/** Writes pages in one transaction (PostgreSQL); false when the run's lease is no longer this worker's. */
export type WritePagesAsync<P extends PreparedPage> = (pages: readonly P[]) => Promise<boolean>;

/** As PageBuffer, for writes that take a round trip. */
export interface AsyncPageBuffer {
  /** Resolves once the page is buffered, or, when a write was due, once it is written. */
  add(page: FetchedRecords): Promise<boolean>;
  flush(): Promise<boolean>;
  /** Stops the timer, drops what is buffered, and waits for a write in flight (the connection is then free). */
  close(): Promise<void>;
}

/**
 * The same buffer when a write is asynchronous. Writes never overlap: each waits for the one before
 * (a write on the timer may still be in flight when the next is due), and a caller that hands in a
 * page when a write is due waits for that write, so a fast API cannot outrun the database.
 */
export function createAsyncPageBuffer<P extends PreparedPage>(
  prepare: PreparePage<P>,
  write: WritePagesAsync<P>,
  limits: StagingLimits = DEFAULT_STAGING_LIMITS,
  now: () => number = () => performance.now(),
): AsyncPageBuffer {
  let pages: P[] = [];
  let bytes = 0;
  let lastWriteAt = now();
  let timer: NodeJS.Timeout | undefined;
  let lost = false;
  let failure: { readonly error: unknown } | undefined;
  // The last write started; it never rejects (its error is kept in `failure`).
  let writing: Promise<void> = Promise.resolve();

  const stopTimer = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };

  const outcome = (): boolean => {
    if (failure !== undefined) throw failure.error;
    return !lost;
  };

  const writeBuffered = async (): Promise<boolean> => {
    stopTimer();
    const batch = pages;
    pages = [];
    bytes = 0;
    writing = writing.then(async () => {
      if (failure !== undefined || lost || batch.length === 0) return;
      try {
        lost = !(await write(batch));
      } catch (error) {
        failure = { error };
      }
      lastWriteAt = now();
    });
    await writing;
    return outcome();
  };

  const onTimer = (): void => {
    timer = undefined;
    // Its error, if any, is thrown by the next add or flush.
    writeBuffered().catch(() => undefined);
  };

  return {
    async add(page) {
      if (!outcome()) return false;
      const prepared = prepare(page);
      pages.push(prepared);
      bytes += prepared.bytes;
      if (flushDue({ pages: pages.length, bytes, sinceWriteMs: now() - lastWriteAt }, limits)) return writeBuffered();
      timer ??= setTimeout(onTimer, Math.max(0, lastWriteAt + limits.maxDelayMs - now()));
      return true;
    },
    async flush() {
      outcome();
      return writeBuffered();
    },
    async close() {
      stopTimer();
      pages = [];
      bytes = 0;
      await writing;
    },
  };
}
