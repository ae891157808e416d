/**
 * The PostgreSQL connection pool behind Kysely's stock PostgresDialect. Two things differ from pg's
 * defaults, both so that query code reads the same values on both dialects:
 *
 * - Type parsers are this pool's own (never pg's process-wide registry, which other code may share):
 *   int8 (`count(*)`, BIGINT target columns) and numeric (DECIMAL target columns) come back as JS
 *   numbers, as SQLite returns them; date and timestamp types stay the server's text, like the ISO
 *   strings the service stores (it stores no native timestamps, but an expression such as `now()`
 *   must not turn into a Date object where the code expects a string).
 * - `schema` (from `?schema=name`) becomes the connections' search_path, so the service's tables and
 *   its target tables live in that schema; `migrate` creates it when missing.
 */
import pg from 'pg';
import type { PostgresTarget } from '../../core/config.js';

const { Pool, types } = pg;

const OID = { int8: 20, numeric: 1700, date: 1082, timestamp: 1114, timestamptz: 1184 } as const;

/** int8 beyond 2^53 cannot be a JS number without changing its value: say so instead of rounding. */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n))
    throw new RangeError(`PostgreSQL returned the integer ${text}, beyond what the service handles exactly (±2^53)`);
  return n;
}

const identity = (text: string): string => text;

function getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (format === undefined || format === 'text') {
    switch (oid) {
      case OID.int8:
        return parseInt8;
      case OID.numeric:
        return Number;
      case OID.date:
      case OID.timestamp:
      case OID.timestamptz:
        return identity;
    }
  }
  return types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown;
}

/** pg's `options` carries server settings per connection; the schema name was validated by the config. */
const searchPathOption = (schema: string): string => `-c search_path=${schema}`;

export interface PoolOptions {
  /** A pooled connection failed while idle (server restart, network): pg drops it and opens another when needed. */
  readonly onIdleClientError?: (err: Error) => void;
}

export function openPostgresPool(target: PostgresTarget, options: PoolOptions = {}): pg.Pool {
  const pool = new Pool({
    connectionString: target.url,
    max: target.poolSize,
    ...(target.schema === undefined ? {} : { options: searchPathOption(target.schema) }),
    types: { getTypeParser: getTypeParser as typeof types.getTypeParser },
  });
  // Without a listener an idle connection's error would be an unhandled 'error' event and end the process.
  pool.on('error', (err) => options.onIdleClientError?.(err));
  return pool;
}
