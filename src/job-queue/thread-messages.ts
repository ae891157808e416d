/** What the thread host and a job queue worker thread say to each other. */
import type { Config } from '../core/config.js';

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

export type HostMessage = { readonly type: 'wake' } | { readonly type: 'stop' };

export type WorkerMessage = { readonly type: 'ready' } | { readonly type: 'stopped' };
