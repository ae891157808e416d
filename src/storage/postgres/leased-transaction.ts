/**
 * A transaction held under a lease on PostgreSQL: the one way a worker's import transaction is held,
 * for a bulk request's import and for an import run's final one alike.
 *
 * The import's own client is busy with the import, so the lease is renewed on another pooled
 * connection meanwhile (lease-keeper.ts); a renewal that finds the lease lost cancels the import's
 * running statement, so the transaction rolls back at once instead of importing to the end for
 * nothing. The body's last write is its fenced finish: it calls `finishing()` first, and writes only
 * if that says the lease is still held. The transaction commits only when the body says so, and a
 * COMMIT that PostgreSQL answers with ROLLBACK (the transaction was aborted) is an error, never a
 * commit.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import type { PostgresDatabase } from '../database.js';
import { backendPid, cancelBackend, defaultHeartbeatMs, keepLease } from './lease-keeper.js';

export interface LeaseRenewal {
  /** Renews the lease on another connection; false when it is no longer this worker's. */
  readonly renew: () => Promise<boolean>;
  readonly leaseMs: number;
  /** How often to renew (default: a third of the lease). */
  readonly heartbeatMs?: number | undefined;
  /** Reads whether the lease is still this worker's (see lease-keeper.ts `held`). */
  readonly held?: (() => Promise<boolean>) | undefined;
  readonly log: Logger;
}

/** What the body answers: whether to commit, and its result. */
export interface Committing {
  readonly committed: boolean;
}

/** The lease was lost during the transaction: nothing was committed. */
export const LEASE_LOST = 'lease lost';

/**
 * `onBroken` hears of a client whose ROLLBACK failed: its state is unknown and it must not go back to
 * the pool as it is.
 */
export async function inLeasedTransaction<T extends Committing>(
  db: PostgresDatabase,
  client: pg.PoolClient,
  renewal: LeaseRenewal,
  body: (finishing: () => boolean, lost: () => boolean) => Promise<T>,
  onBroken: (err: Error) => void,
): Promise<T | typeof LEASE_LOST> {
  const lease = keepLease({
    renew: renewal.renew,
    everyMs: renewal.heartbeatMs ?? defaultHeartbeatMs(renewal.leaseMs),
    cancel: cancelBackend(db, backendPid(client)),
    log: renewal.log,
    ...(renewal.held === undefined ? {} : { held: renewal.held }),
  });
  const finishing = (): boolean => {
    lease.finishing();
    return !lease.lost;
  };
  try {
    await client.query('begin');
    let result: T;
    try {
      result = await body(finishing, () => lease.lost);
    } finally {
      // The body has ended: no renewal or cancel is started from here on, so none hits the COMMIT or
      // ROLLBACK. (Not stop(): a renewal in flight may wait on the finish's row lock until COMMIT.)
      lease.finishing();
    }
    if (!result.committed) {
      await client.query('rollback');
      return result;
    }
    const { command } = await client.query('commit');
    if (command !== 'COMMIT') throw new Error(`the transaction did not commit (PostgreSQL answered ${command})`);
    return result;
  } catch (err) {
    await client.query('rollback').catch((rollbackErr: unknown) => {
      onBroken(rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr)));
    });
    // The renewal found the lease lost and cancelled the statement: nothing was committed.
    if (lease.lost) return LEASE_LOST;
    throw err;
  } finally {
    await lease.stop();
  }
}
