/**
 * A running job queue, as the rest of the process sees it: wake it, ask whether it is healthy, close
 * it. Two hosts implement it: worker threads (thread-host.ts: on SQLite one per lane, on PostgreSQL one for every lane), and async
 * loops in this event loop (loop-host.ts; on PostgreSQL with its LISTEN connection, postgres/in-process-host.ts). The composition
 * root picks one.
 */
import type { MetricsJson } from '../core/metrics.js';
import type { LaneActivity } from './activity.js';

export interface QueueHost {
  /** Asks the workers to run now the entries that work waits for (the kinds' `wakes`), if they are Ready. */
  wake(): void;
  readonly healthy: boolean;
  /**
   * PostgreSQL: whether the LISTEN connection that brings wake-ups from other processes is up (while it
   * reconnects, workers start at their scheduler tick). Undefined on SQLite, where wake-ups stay in-process.
   */
  readonly listening?: boolean;
  /** What each lane runs now, as last heard (the workers list). */
  activity(): readonly LaneActivity[];
  /**
   * The figures counted by workers on other threads, to merge into this thread's at a scrape; empty
   * when the workers count into this thread's metrics themselves.
   */
  metrics(): Promise<readonly MetricsJson[]>;
  /** Lets the current work item finish, then stops the workers (giving up on them after the close timeout). */
  close(): Promise<void>;
}
