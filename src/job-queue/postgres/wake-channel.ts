/**
 * PostgreSQL LISTEN/NOTIFY: the wake-up between processes. The submit path (and every other `wake`)
 * NOTIFYs after its commit; each worker process LISTENs on one dedicated connection (never a pooled
 * one: a pooled client goes back to the pool and would stop listening) and wakes its loops. Channels are
 * database-wide, so the channel name carries the schema: services in different schemas of one
 * database do not wake each other. The scheduler tick stays the fallback for a lost notification (a
 * listener reconnecting, a NOTIFY that failed).
 */
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { PostgresTarget } from '../../core/config.js';
import { execute, onClient } from '../../storage/connection.js';
import type { PostgresDatabase } from '../../storage/database.js';

export const wakeChannel = (schema: string | undefined): string => (schema === undefined ? 'ifw_wake' : `ifw_wake_${schema}`);

/**
 * NOTIFYs the workers of every process. Calls while one NOTIFY is on its way coalesce into one more
 * after it: a burst of commits wakes the workers, not once per commit. Never throws (logged).
 */
export function createNotifier(db: PostgresDatabase, logger: Logger): () => void {
  const channel = wakeChannel(db.schemaName);
  let sending = false;
  let again = false;
  const send = (): void => {
    sending = true;
    again = false;
    sql`select pg_notify(${channel}, '')`
      .execute(db.kysely)
      .catch((err: unknown) => logger.warn({ err }, 'NOTIFY to wake the workers failed; they start at their next scheduler tick'))
      .finally(() => {
        sending = false;
        if (again) send();
      });
  };
  return () => {
    if (sending) again = true;
    else send();
  };
}

export interface WakeListener {
  /** True while the LISTEN connection is up. */
  readonly listening: boolean;
  /** UNLISTEN and close the connection. */
  close(): Promise<void>;
}

const RECONNECT_MS = [100, 500, 1000, 2000, 5000];

/** LISTENs on its own connection and calls `onWake` for every notification; reconnects with backoff when the connection drops. */
export async function listenForWakes(target: PostgresTarget, onWake: () => void, logger: Logger): Promise<WakeListener> {
  const channel = wakeChannel(target.schema);
  let client: pg.Client | undefined;
  let closing = false;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: target.url });
    c.on('notification', (n) => {
      if (n.channel === channel) onWake();
    });
    c.on('error', (err) => {
      logger.warn({ err }, 'the LISTEN connection failed; reconnecting (meanwhile workers start at their scheduler tick)');
      if (client === c) client = undefined;
      c.end().catch(() => undefined);
      scheduleReconnect();
    });
    await c.connect();
    await execute(onClient(c), sql`LISTEN ${sql.id(channel)}`);
    if (closing) {
      await c.end();
      return;
    }
    client = c;
    failures = 0;
    // Whatever was submitted while no one listened: look now.
    onWake();
  }

  function scheduleReconnect(): void {
    if (closing || retry !== undefined) return;
    const delay = RECONNECT_MS[Math.min(failures, RECONNECT_MS.length - 1)] ?? 5000;
    failures += 1;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch((err: unknown) => {
        logger.warn({ err }, 'reconnecting the LISTEN connection failed; retrying');
        scheduleReconnect();
      });
    }, delay);
  }

  await connect();
  return {
    get listening() {
      return client !== undefined;
    },
    async close() {
      closing = true;
      if (retry !== undefined) clearTimeout(retry);
      const c = client;
      client = undefined;
      if (c === undefined) return;
      await execute(onClient(c), sql`UNLISTEN ${sql.id(channel)}`).catch(() => undefined);
      await c.end().catch(() => undefined);
    },
  };
}
