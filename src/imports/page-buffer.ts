/**
 * Batched staging. A commit costs several times the insert of a page, so fetched pages wait in a
 * small buffer and are staged several per transaction. The buffer keeps what the run promised:
 *
 * - memory stays flat: it holds at most `maxPages` pages and about `maxBytes` of serialised records;
 * - progress stays visible: no page waits longer than `maxDelayMs` before it is staged (and counted in
 *   pagesFetched). A timer writes a buffer that has waited that long, and a page that arrives
 *   `maxDelayMs` or more after the last write is written at once: against a slow API every page is
 *   staged as soon as it arrives, exactly as without a buffer.
 *
 * The caller writes what is left (`flush`) before it records the run's end, Completed or Failed.
 */
import type { FetchedRecords, SerialisedPage } from './stage-page.js';
import { serialisePage } from './stage-page.js';

export interface StagingLimits {
  /** Pages staged in one transaction at most. */
  readonly maxPages: number;
  /** Characters of serialised records in one transaction at most (a page larger than that is staged alone). */
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
  buffered.pages > 0 && (buffered.pages >= limits.maxPages || buffered.bytes >= limits.maxBytes || buffered.sinceWriteMs >= limits.maxDelayMs);

/** Writes pages in one transaction; false when the run's lease is no longer this worker's. */
export type WritePages = (pages: readonly SerialisedPage[]) => boolean;

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

export function createPageBuffer(write: WritePages, limits: StagingLimits = DEFAULT_STAGING_LIMITS, now: () => number = () => performance.now()): PageBuffer {
  let pages: SerialisedPage[] = [];
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
      const serialised = serialisePage(page);
      pages.push(serialised);
      bytes += serialised.json.length;
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
