/**
 * Asking a running import to stop, when the asker cannot write to the database meanwhile.
 *
 * On SQLite an import holds the write lock from its first record to its commit, so a cancel's UPDATE
 * waits behind it for as long as the import takes (and then finds it Completed). Instead the cancel
 * raises a flag the import can read without the database: a small file beside the database file,
 * named after the work and holding the claim it stops (lease owner and start), so a stale flag never
 * stops a later claim of the same request. The import asks between batches (a `stat`, a few
 * microseconds), throws, rolls back and releases the lock; then it waits until the flag is lowered
 * (the cancel has written its status) before it claims anything else, so the cancel is not starved by
 * the next import. A file serves the threads of one process and `ifw serve --no-workers` beside
 * `ifw worker` alike.
 *
 * PostgreSQL needs no board: an import there holds no lock on its request's row, the cancel writes at
 * once, and the import's lease watch (postgres/lease-keeper.ts) sees the lease gone within a moment.
 * An in-memory SQLite database (tests) has no file beside it: no board, and a cancel waits as before.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from './db.js';

export interface AbortBoard {
  /** Asks the import of `key` (`request-<id>`, `run-<id>`) under `claim` to stop. */
  raise(key: string, claim: string): void;
  /** Lowers the flag: the status the abort was for is written (or the attempt gave up). */
  lower(key: string): void;
  /** Whether the import of `key` under `claim` was asked to stop; synchronous and cheap. */
  raised(key: string, claim: string): boolean;
  /** Waits until the flag of `key` is lowered, at most `maxMs`. */
  waitLowered(key: string, maxMs: number): Promise<void>;
}

/** The claim an abort names: the lease owner and when it claimed (a reset and a new claim differ). */
export const claimOf = (owner: string | null | undefined, startedAt: string | null | undefined): string =>
  `${owner ?? ''} ${startedAt ?? ''}`;

/**
 * The claim of a flag raised for work that was not claimed yet when the cancel read it (Pending, Queued):
 * it stops whichever claim is made meanwhile. Only a cancel raises it, and cancelled work is never
 * claimed again, so it cannot stop a later claim.
 */
export const ANY_CLAIM = '*';

/** The board of a database, or undefined where none is needed (PostgreSQL) or possible (in memory). */
export function abortBoard(db: Db): AbortBoard | undefined {
  if (db.dialect !== 'sqlite') return undefined;
  const file = (db as Db & { readonly sqlite?: { readonly name: string; readonly memory: boolean } }).sqlite;
  if (file === undefined || file.memory || file.name === '' || file.name === ':memory:') return undefined;
  return fileBoard(`${file.name}-aborts`);
}

/** Safe file names only: the keys are built from ids the service made (uuid). */
const fileOf = (dir: string, key: string): string => path.join(dir, key.replace(/[^A-Za-z0-9_-]/g, '_'));

export function fileBoard(dir: string): AbortBoard {
  return {
    raise(key, claim) {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(fileOf(dir, key), claim);
    },
    lower(key) {
      fs.rmSync(fileOf(dir, key), { force: true });
    },
    raised(key, claim) {
      const file = fileOf(dir, key);
      if (!fs.existsSync(file)) return false;
      try {
        const flagged = fs.readFileSync(file, 'utf8');
        return flagged === claim || flagged === ANY_CLAIM;
      } catch {
        return false;
      }
    },
    async waitLowered(key, maxMs) {
      const file = fileOf(dir, key);
      const until = Date.now() + maxMs;
      while (fs.existsSync(file) && Date.now() < until) await sleep(5);
    },
  };
}

/**
 * Runs `write` with `key` raised for `claim` on the database's board (none on a database without one),
 * lowered again whatever `write` does: how a cancel stops a running import while its status write
 * waits for the lock that import holds.
 */
export async function whileRaised<T>(db: Db, key: string, claim: string, write: () => Promise<T>): Promise<T> {
  const board = abortBoard(db);
  if (board === undefined) return write();
  board.raise(key, claim);
  try {
    return await write();
  } finally {
    board.lower(key);
  }
}
