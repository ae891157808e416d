/**
 * The users and applications authentication looks up on every request, remembered for a few
 * seconds so that a request costs a map lookup, not a query. Changes made through this process
 * (admin API) clear it at once; changes made by another process (the CLI, another node) are seen
 * within `ttlMs`. Unknown names are remembered too, in a bounded map.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { DB } from '../storage/schema.js';
import type { Application, UserCredentials } from './model.js';
import { findApplication, findUser } from './store.js';

export interface Directory {
  user(userName: string): Promise<UserCredentials | undefined>;
  application(clientId: string): Promise<Application | undefined>;
  /** Forgets everything remembered. */
  invalidate(): void;
}

export const DIRECTORY_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  readonly value: T | undefined;
  readonly until: number;
}

function cached<T>(clock: Clock, ttlMs: number, load: (key: string) => Promise<T | undefined>) {
  const entries = new Map<string, Entry<T>>();
  return {
    async get(key: string): Promise<T | undefined> {
      const at = clock().getTime();
      const hit = entries.get(key);
      if (hit !== undefined && hit.until > at) return hit.value;
      const value = await load(key);
      if (entries.size >= MAX_ENTRIES) entries.clear();
      entries.set(key, { value, until: at + ttlMs });
      return value;
    },
    clear: () => entries.clear(),
  };
}

export function createDirectory(db: Kysely<DB>, clock: Clock, ttlMs = DIRECTORY_TTL_MS): Directory {
  const users = cached(clock, ttlMs, (name) => findUser(db, name));
  const applications = cached(clock, ttlMs, (clientId) => findApplication(db, clientId));
  return {
    user: (name) => users.get(name),
    application: (clientId) => applications.get(clientId),
    invalidate() {
      users.clear();
      applications.clear();
    },
  };
}
