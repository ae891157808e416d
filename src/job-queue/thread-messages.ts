/** What the thread host and a job queue worker thread say to each other. */
import type { Config } from '../core/config.js';
import type { MetricsJson } from '../core/metrics.js';
import type { LaneActivity } from './activity.js';

export interface WorkerData {
  readonly config: Config;
  /**
   * The lane this thread runs (SQLite: one thread per lane, each with its own connection), or null:
   * every lane, as async loops over one pool (PostgreSQL; see loop-host.ts).
   */
  readonly lane: string | null;
  /** How long the thread's stop waits for the work under way (PostgreSQL: then it returns the work to its queue). */
  readonly closeTimeoutMs: number;
}

export type HostMessage =
  | { readonly type: 'wake' }
  | { readonly type: 'stop' }
  /** Asks for the thread's metrics, answered with a `metrics` message of the same id. */
  | { readonly type: 'metrics'; readonly id: number };

export type WorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'stopped' }
  /** What the thread's lanes run now; sent after a change, at most every few hundred milliseconds. */
  | { readonly type: 'activity'; readonly lanes: readonly LaneActivity[] }
  | { readonly type: 'metrics'; readonly id: number; readonly json: MetricsJson };
