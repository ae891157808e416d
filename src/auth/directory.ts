/**
 * The users and applications authentication looks up on every request, remembered for a few
 * seconds so that a request costs a map lookup, not a query. Changes made through this process
 * (admin API) clear it at once; changes made by another process (the CLI, another node) are seen
 * within `ttlMs` (the service's IFW_DIRECTORY_CACHE_MS). Unknown names are remembered too, in a bounded map.
 * A name that no user or application can have (longer than its limit, or with characters it may not
 * hold) is not looked up and not remembered: a caller cannot fill the map with 16 KB names.
 */
import type { Clock } from '../core/clock.js';
import { CLIENT_ID_PATTERN, USER_NAME_PATTERN, type Application, type UserCredentials } from './model.js';
import { findApplication, findUser } from './store.js';
import type { Db } from '../storage/db.js';

export interface Directory {
  user(userName: string): Promise<UserCredentials | undefined>;
  application(clientId: string): Promise<Application | undefined>;
  /** Forgets everything remembered. */
  invalidate(): void;
}

/** The default of IFW_DIRECTORY_CACHE_MS. */
export const DIRECTORY_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  readonly value: T | undefined;
  readonly until: number;
}

function cached<T>(clock: Clock, ttlMs: number, valid: RegExp, load: (key: string) => Promise<T | undefined>) {
  const entries = new Map<string, Entry<T>>();
  // Bumped by clear(): a load that started before a change may have read the old row, so its
  // result answers the request that asked for it but is not remembered.
  let generation = 0;
  return {
    async get(key: string): Promise<T | undefined> {
      if (!valid.test(key)) return undefined;
      const at = clock().getTime();
      const hit = entries.get(key);
      if (hit !== undefined && hit.until > at) return hit.value;
      const started = generation;
      const value = await load(key);
      if (started !== generation) return value;
      if (entries.size >= MAX_ENTRIES) entries.clear();
      entries.set(key, { value, until: at + ttlMs });
      return value;
    },
    clear: () => {
      generation += 1;
      entries.clear();
    },
  };
}

export function createDirectory(db: Db, clock: Clock, ttlMs = DIRECTORY_TTL_MS): Directory {
  const users = cached(clock, ttlMs, USER_NAME_PATTERN, (name) => findUser(db, name));
  const applications = cached(clock, ttlMs, CLIENT_ID_PATTERN, (clientId) => findApplication(db, clientId));
  return {
    user: (name) => users.get(name),
    application: (clientId) => applications.get(clientId),
    invalidate() {
      users.clear();
      applications.clear();
    },
  };
}
