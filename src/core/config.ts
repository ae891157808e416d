/**
 * The one typed configuration: environment variables, overridden by command-line flags, parsed and
 * validated once at start, then frozen. Every option and its default is listed in docs/configuration.md.
 */
import path from 'node:path';
import { parseAddressRange, type AddressRange, type OutboundPolicy } from './address-range.js';

/** An OAuth 2.0 / OIDC issuer whose access tokens the service accepts (IFW_OAUTH_ISSUERS). */
export interface TokenIssuerSetting {
  readonly issuer: string;
  readonly audience: string | readonly string[];
  readonly jwksUrl: string;
}

export interface SqliteTarget {
  readonly kind: 'sqlite';
  readonly file: string;
}

export interface PostgresTarget {
  readonly kind: 'postgres';
  /** The connection URL without the `schema` parameter (which is not libpq's). */
  readonly url: string;
  /** `?schema=name` in IFW_DATABASE_URL: the service's tables live there (created if missing); undefined: the server's default search_path. */
  readonly schema: string | undefined;
  /** Connections in this process's pool (IFW_DATABASE_POOL_SIZE). */
  readonly poolSize: number;
}

export type DatabaseTarget = SqliteTarget | PostgresTarget;

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly database: DatabaseTarget;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Run the job queue (Bulk Import Processor, retention cleanup) in this process. */
  readonly workers: boolean;
  /**
   * Concurrent bulk import claim loops of this process's workers (IFW_WORKER_CONCURRENCY, `--concurrency`).
   * PostgreSQL: that many requests import at once, each on its own connection. SQLite has one writer:
   * more than 1 changes nothing there (a warning says so).
   */
  readonly workerConcurrency: number;
  /** Largest HTTP request body accepted at all, in bytes (per-integration Max Payload Size is checked too). */
  readonly bodyLimitBytes: number;
  /** How long a worker's claim on a request lasts before another worker may take it over. */
  readonly leaseSeconds: number;
  /** How many times a request is claimed before an expired lease fails it for good. */
  readonly maxAttempts: number;
  /** Days after which Completed, Failed and Cancelled requests are deleted. */
  readonly retentionDays: number;
  /** Days after which Completed, Failed and Cancelled import runs are deleted, with their pages and errors. */
  readonly runRetentionDays: number;
  /** How long a submission's Idempotency-Key holds. */
  readonly idempotencyHours: number;
  /** Largest page of a list answer; more results come through `@odata.nextLink`. */
  readonly maxPageSize: number;
  /** How often the job queue scheduler looks for due entries, in milliseconds. */
  readonly schedulerTickMs: number;
  /** How often a process that runs workers writes its heartbeat to the workers list (IFW_WORKER_HEARTBEAT_SECONDS). */
  readonly workerHeartbeatSeconds: number;
  /** A worker whose last heartbeat is older than this is shown dead (IFW_WORKER_DEAD_SECONDS). */
  readonly workerDeadSeconds: number;
  /** A dead worker is removed from the list this many hours after its last heartbeat (IFW_WORKER_FORGET_HOURS). */
  readonly workerForgetHours: number;
  /**
   * A Pending request older than this many seconds while no live worker runs bulk imports raises the
   * "job queue processor not running" alarm (IFW_PENDING_ALARM_SECONDS).
   */
  readonly pendingAlarmSeconds: number;
  /**
   * Count requests, records, runs and HTTP answers for `/metrics` (IFW_METRICS). Off: `/metrics` answers
   * only the figures it reads from the database (queue, entries, workers, alarms).
   */
  readonly metrics: boolean;
  /**
   * How long users and applications are remembered for authentication, in milliseconds: changes made
   * by another process (the CLI, another node) reach this one within that time (IFW_DIRECTORY_CACHE_MS).
   */
  readonly directoryCacheMs: number;
  /** Admin console: a session ends after this many minutes without a request (IFW_CONSOLE_IDLE_MINUTES). */
  readonly consoleIdleMinutes: number;
  /** Admin console: a session ends this many hours after sign-in, however active (IFW_CONSOLE_SESSION_HOURS). */
  readonly consoleSessionHours: number;
  /** Admin console: live sessions per user; signing in once more ends the oldest (IFW_CONSOLE_MAX_SESSIONS). */
  readonly consoleMaxSessions: number;
  /** A request, headers and body, must have arrived within this many seconds (IFW_REQUEST_TIMEOUT_SECONDS). */
  readonly requestTimeoutSeconds: number;
  /**
   * A connection that sends nothing for this many seconds while a request is arriving, or before the
   * first one, is closed (IFW_IDLE_TIMEOUT_SECONDS). While the service works on an answer it waits.
   */
  readonly idleTimeoutSeconds: number;
  /** An idle keep-alive connection is closed after this many seconds (IFW_KEEP_ALIVE_TIMEOUT_SECONDS). */
  readonly keepAliveTimeoutSeconds: number;
  /** Open connections at most; further ones are closed at once (IFW_MAX_CONNECTIONS). */
  readonly maxConnections: number;
  /**
   * The reverse proxies whose X-Forwarded-For, -Proto and -Host are believed (IFW_TRUST_PROXY): their
   * addresses or CIDR ranges (or `loopback`, `linklocal`, `uniquelocal`), or a number of hops; false: none.
   */
  readonly trustProxy: false | number | readonly string[];
  /** Where REST imports may connect beside the built-in rules (IFW_OUTBOUND_DENY, IFW_OUTBOUND_ALLOW). */
  readonly outbound: OutboundPolicy;
  /**
   * Key that encrypts stored secrets (IFW_SECRET_KEY); undefined: a key generated on first start is
   * kept in `<dataDir>/secret.key`.
   */
  readonly secretKey: string | undefined;
  /** A production deployment: refuses settings meant for development (the development token issuer). */
  readonly production: boolean;
  /** Basic authentication with service users (IFW_BASIC_AUTH); switch it off in production. */
  readonly basicAuth: boolean;
  /** Issuers of accepted OAuth 2.0 access tokens (IFW_OAUTH_ISSUERS, a JSON array). */
  readonly tokenIssuers: readonly TokenIssuerSetting[];
  /** Allowed clock difference for token `exp` and `nbf`, in seconds. */
  readonly tokenClockSkewSeconds: number;
  /** The local development token issuer (IFW_DEV_TOKEN_ISSUER); never together with `production`. */
  readonly devTokenIssuer: boolean;
  /** Name of the SUPER user created on the first start with an empty database. */
  readonly adminUser: string;
  /** Its password (IFW_ADMIN_PASSWORD); undefined: a password is generated and printed once. */
  readonly adminPassword: string | undefined;
}

export type ConfigOverrides = Partial<{ -readonly [K in keyof Config]: Config[K] }> & { databaseUrl?: string };

const DEFAULT_POOL_SIZE = 10;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * A PostgreSQL URL, with the one parameter of our own taken out: `schema` puts the service's tables in
 * that schema (its search_path), so several services or test runs can share one database.
 */
function postgresTarget(url: string, poolSize: number): PostgresTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('IFW_DATABASE_URL is not a valid URL: expected postgres://user:password@host:port/database[?schema=name]');
  }
  const schema = parsed.searchParams.get('schema') ?? undefined;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new ConfigError(
      `IFW_DATABASE_URL: schema must be 1 to 63 lower-case letters, digits or "_", not starting with a digit, got "${schema}"`,
    );
  }
  // The schema becomes the connections' `options` (search_path); pg would let the URL's own `options` win silently.
  if (schema !== undefined && parsed.searchParams.has('options')) {
    throw new ConfigError(
      'IFW_DATABASE_URL: use either ?schema= or ?options=, not both (the schema is set through the connection options)',
    );
  }
  parsed.searchParams.delete('schema');
  return { kind: 'postgres', url: parsed.toString(), schema, poolSize };
}

export function parseDatabaseUrl(url: string | undefined, dataDir: string, poolSize = DEFAULT_POOL_SIZE): DatabaseTarget {
  if (url === undefined || url.trim() === '') return { kind: 'sqlite', file: path.join(dataDir, 'ifw.db') };
  const u = url.trim();
  if (u.startsWith('postgres://') || u.startsWith('postgresql://')) return postgresTarget(u, poolSize);
  if (u.startsWith('sqlite:')) return { kind: 'sqlite', file: path.resolve(u.slice('sqlite:'.length).replace(/^\/\//, '')) };
  if (u.endsWith('.db') || u.endsWith('.sqlite') || u.includes('/')) return { kind: 'sqlite', file: path.resolve(u) };
  throw new ConfigError(`IFW_DATABASE_URL must be postgres://…, sqlite:<file> or a file path, got "${u}"`);
}

function tokenIssuers(env: NodeJS.ProcessEnv): TokenIssuerSetting[] {
  const raw = env.IFW_OAUTH_ISSUERS;
  if (raw === undefined || raw.trim() === '') return [];
  const problem = 'IFW_OAUTH_ISSUERS must be a JSON array of {"issuer","audience","jwksUrl"}';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(`${problem}; it is not valid JSON`);
  }
  if (!Array.isArray(parsed)) throw new ConfigError(problem);
  return parsed.map((item: unknown, i) => {
    const { issuer, audience, jwksUrl } = (item ?? {}) as Record<string, unknown>;
    const audienceOk = typeof audience === 'string' || (Array.isArray(audience) && audience.every((a) => typeof a === 'string'));
    if (typeof issuer !== 'string' || typeof jwksUrl !== 'string' || !audienceOk) {
      throw new ConfigError(`${problem}; entry ${i + 1} lacks a string issuer, audience or jwksUrl`);
    }
    return { issuer, audience: audience, jwksUrl };
  });
}

const optional = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);

const list = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

function addressRanges(env: NodeJS.ProcessEnv, name: string): AddressRange[] {
  return list(env[name]).map((item) => {
    try {
      return parseAddressRange(item);
    } catch (err) {
      throw new ConfigError(`${name}: ${(err as Error).message}`);
    }
  });
}

/** proxy-addr's names for address ranges, accepted in IFW_TRUST_PROXY. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function trustProxy(env: NodeJS.ProcessEnv): Config['trustProxy'] {
  const raw = env.IFW_TRUST_PROXY?.trim() ?? '';
  if (raw === '' || ['false', 'no', 'off', '0'].includes(raw.toLowerCase())) return false;
  if (/^\d+$/.test(raw)) return int(env, 'IFW_TRUST_PROXY', 0, 1, 10);
  if (['true', 'yes', 'on', '*'].includes(raw.toLowerCase()))
    throw new ConfigError(
      'IFW_TRUST_PROXY must name the proxies (addresses or CIDR ranges such as 127.0.0.1 or 10.0.0.0/8, or loopback), or a number of hops: trusting every address would let any client claim any address',
    );
  return list(raw).map((item) => {
    if (PROXY_RANGE_NAMES.includes(item)) return item;
    try {
      parseAddressRange(item);
    } catch (err) {
      throw new ConfigError(`IFW_TRUST_PROXY: ${(err as Error).message}, nor one of ${PROXY_RANGE_NAMES.join(', ')}`);
    }
    return item;
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): Config {
  const dataDir = path.resolve(overrides.dataDir ?? env.IFW_DATA_DIR ?? './data');
  const logLevel = overrides.logLevel ?? env.IFW_LOG_LEVEL ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`IFW_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const { databaseUrl, ...rest } = overrides;
  const config: Config = {
    host: env.IFW_HOST ?? '127.0.0.1',
    port: int(env, 'IFW_PORT', 8080, 0, 65535),
    dataDir,
    database: parseDatabaseUrl(
      databaseUrl ?? env.IFW_DATABASE_URL,
      dataDir,
      int(env, 'IFW_DATABASE_POOL_SIZE', DEFAULT_POOL_SIZE, 1, 1000),
    ),
    logLevel: logLevel as Config['logLevel'],
    workers: bool(env, 'IFW_WORKERS', true),
    workerConcurrency: int(env, 'IFW_WORKER_CONCURRENCY', 1, 1, 256),
    bodyLimitBytes: int(env, 'IFW_BODY_LIMIT_MB', 150, 1, 1024) * 1024 * 1024,
    leaseSeconds: int(env, 'IFW_LEASE_SECONDS', 300, 1, 86_400),
    maxAttempts: int(env, 'IFW_MAX_ATTEMPTS', 3, 1, 100),
    retentionDays: int(env, 'IFW_RETENTION_DAYS', 30, 1, 36_500),
    runRetentionDays: int(env, 'IFW_RUN_RETENTION_DAYS', 30, 1, 36_500),
    idempotencyHours: int(env, 'IFW_IDEMPOTENCY_HOURS', 24, 1, 720),
    maxPageSize: int(env, 'IFW_MAX_PAGE_SIZE', 100, 1, 10_000),
    schedulerTickMs: int(env, 'IFW_SCHEDULER_TICK_MS', 1000, 10, 60_000),
    workerHeartbeatSeconds: int(env, 'IFW_WORKER_HEARTBEAT_SECONDS', 10, 1, 3600),
    workerDeadSeconds: int(env, 'IFW_WORKER_DEAD_SECONDS', 60, 2, 86_400),
    workerForgetHours: int(env, 'IFW_WORKER_FORGET_HOURS', 24, 1, 8760),
    pendingAlarmSeconds: int(env, 'IFW_PENDING_ALARM_SECONDS', 120, 1, 86_400),
    metrics: bool(env, 'IFW_METRICS', true),
    directoryCacheMs: int(env, 'IFW_DIRECTORY_CACHE_MS', 5_000, 0, 600_000),
    consoleIdleMinutes: int(env, 'IFW_CONSOLE_IDLE_MINUTES', 30, 1, 1440),
    consoleSessionHours: int(env, 'IFW_CONSOLE_SESSION_HOURS', 12, 1, 720),
    consoleMaxSessions: int(env, 'IFW_CONSOLE_MAX_SESSIONS', 10, 1, 1000),
    requestTimeoutSeconds: int(env, 'IFW_REQUEST_TIMEOUT_SECONDS', 300, 1, 86_400),
    idleTimeoutSeconds: int(env, 'IFW_IDLE_TIMEOUT_SECONDS', 30, 1, 3600),
    keepAliveTimeoutSeconds: int(env, 'IFW_KEEP_ALIVE_TIMEOUT_SECONDS', 72, 1, 3600),
    maxConnections: int(env, 'IFW_MAX_CONNECTIONS', 1000, 1, 1_000_000),
    trustProxy: trustProxy(env),
    outbound: { deny: addressRanges(env, 'IFW_OUTBOUND_DENY'), allow: addressRanges(env, 'IFW_OUTBOUND_ALLOW') },
    secretKey: optional(env.IFW_SECRET_KEY),
    production: bool(env, 'IFW_PRODUCTION', false),
    basicAuth: bool(env, 'IFW_BASIC_AUTH', true),
    tokenIssuers: tokenIssuers(env),
    tokenClockSkewSeconds: int(env, 'IFW_OAUTH_CLOCK_SKEW_SECONDS', 60, 0, 600),
    devTokenIssuer: bool(env, 'IFW_DEV_TOKEN_ISSUER', false),
    adminUser: env.IFW_ADMIN_USER ?? 'admin',
    adminPassword: optional(env.IFW_ADMIN_PASSWORD),
    ...rest,
    ...(overrides.dataDir !== undefined ? { dataDir } : {}),
  };
  if (config.production && config.devTokenIssuer) {
    throw new ConfigError(
      'IFW_DEV_TOKEN_ISSUER cannot be used with IFW_PRODUCTION=true: the development token issuer signs tokens with a key kept in the data directory',
    );
  }
  return Object.freeze(config);
}
