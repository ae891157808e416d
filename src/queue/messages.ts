/** What the queue host and its worker thread say to each other. */
import type { Config } from '../config.js';

export interface WorkerData {
  readonly config: Config;
}

export type HostMessage = { readonly type: 'wake' } | { readonly type: 'stop' };

export type WorkerMessage = { readonly type: 'ready' } | { readonly type: 'stopped' };
