/** What the thread host and a lane's worker thread say to each other. */
import type { Config } from '../../core/config.js';

export interface WorkerData {
  readonly config: Config;
  /** The lane this thread runs. */
  readonly lane: string;
}

export type HostMessage = { readonly type: 'wake' } | { readonly type: 'stop' };

export type WorkerMessage = { readonly type: 'ready' } | { readonly type: 'stopped' };
