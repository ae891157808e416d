/** What the queue host and its worker thread say to each other. */
import type { Config } from '../core/config.js';
import type { JobKind } from './model.js';

export interface WorkerData {
  readonly config: Config;
  /** The job kinds this thread runs (its lane). */
  readonly kinds: readonly JobKind[];
}

export type HostMessage = { readonly type: 'wake' } | { readonly type: 'stop' };

export type WorkerMessage = { readonly type: 'ready' } | { readonly type: 'stopped' };
