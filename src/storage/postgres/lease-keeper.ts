/**
 * Keeping a lease during a long PostgreSQL import transaction (a bulk request's, or an import run's
 * final one). The import's own client is busy with the import, so the lease is renewed on another
 * pooled connection every `everyMs`. When a renewal finds the lease lost (cancelled, reset, or taken
 * over after expiry), the import's running statement is cancelled, so the transaction rolls back at
 * once instead of importing to the end for nothing; and cancelled again at each tick until the keeper
 * stops, should the import have been between statements. Without renewals, an import longer than the
 * lease could be taken over by another worker's reaper and started again, every time.
 */
import { sql } from 'kysely';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { PostgresDatabase } from '../database.js';

export interface LeaseKeeperOptions {
  /** Renews the lease; false when it is no longer this worker's. */
  readonly renew: () => Promise<boolean>;
  readonly everyMs: number;
  /**
   * Asks whether the lease is still this worker's, reading only (cheaper than a renewal, so asked more
   * often): an administrator's cancel or reset then stops the import within `watchMs`, not a heartbeat.
   */
  readonly held?: () => Promise<boolean>;
  readonly watchMs?: number;
  /** Cancels the import's running statement (pg_cancel_backend of its client's server process). */
  readonly cancel: () => Promise<void>;
  readonly log: Logger;
}

export interface LeaseKeeper {
  readonly lost: boolean;
  /**
   * The fenced finish has begun (finish's own write is the check now), or the import has ended: no
   * renewal or cancel is started any more.
   */
  finishing(): void;
  stop(): Promise<void>;
}

/** How often the lease is read back while importing, when a `held` check is given. */
export const DEFAULT_WATCH_MS = 250;

/** The renewal interval when none is configured: three chances before the lease runs out. */
export const defaultHeartbeatMs = (leaseMs: number): number => Math.max(1, Math.floor(leaseMs / 3));

/**
 * Starts renewing. A renewal that may wait on finish's row lock only resolves after COMMIT: by then
 * `finishing` says to ignore it.
 */
export function keepLease({ renew, everyMs, held, watchMs, cancel, log }: LeaseKeeperOptions): LeaseKeeper {
  let lost = false;
  let finishing = false;
  let inFlight: Promise<void> | undefined;
  const checkOnce = async (ask: () => Promise<boolean>): Promise<void> => {
    const stillHeld = await ask();
    if (stillHeld || finishing || lost) return;
    lost = true;
    log.warn('lease lost while importing (cancelled, reset or taken over); cancelling the import');
    await cancel();
  };
  // Once the lease is lost, every tick cancels again until the keeper stops: a cancel reaches only the
  // statement running then, and one the import begins after it (it was between statements) must stop too.
  const every = (ms: number, ask: () => Promise<boolean>) =>
    setInterval(() => {
      if (inFlight !== undefined || finishing) return;
      inFlight = (lost ? cancel() : checkOnce(ask))
        .catch((err: unknown) =>
          log.warn({ err }, `${lost ? 'cancelling the import' : 'renewing the lease'} failed; tried again at the next tick`),
        )
        .finally(() => {
          inFlight = undefined;
        });
    }, ms);
  const timers = [every(everyMs, renew)];
  if (held !== undefined) timers.push(every(watchMs ?? DEFAULT_WATCH_MS, held));
  return {
    get lost() {
      return lost;
    },
    finishing() {
      finishing = true;
    },
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await inFlight;
    },
  };
}

/** The server process of a pg client (pg sets it at connect; its type declarations omit it). */
export const backendPid = (client: pg.PoolClient): number | undefined =>
  (client as pg.PoolClient & { processID?: number | null }).processID ?? undefined;

/** Cancels what a pg client's server process is running, if its process is known. */
export const cancelBackend = (db: PostgresDatabase, pid: number | undefined) => async (): Promise<void> => {
  if (pid !== undefined) await sql`select pg_cancel_backend(${pid})`.execute(db.kysely);
};
