/**
 * docs/configuration.md against the code: the table of environment variables lists every variable
 * src/core/config.ts reads, with the defaults and allowed ranges loadConfig really applies, and the
 * YAML example of the declarative configuration file applies as written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { ConfigError, loadConfig, type Config } from '../../src/core/config.js';
import { applyConfig } from '../../src/declarative-config/apply.js';
import { getIntegrationPlan } from '../../src/integrations/store.js';
import { getEntry } from '../../src/job-queue/entries.js';
import { createSecretBox } from '../../src/rest-source/secrets.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOC = fs.readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
const CONFIG_SOURCE = fs.readFileSync(path.join(ROOT, 'src/core/config.ts'), 'utf8');

interface Row {
  readonly name: string;
  readonly defaultValue: string;
  readonly allowed: string;
}

/** The rows of the table whose header is `| Variable | Flag | Default | Allowed | Meaning |`. */
function variableRows(): Row[] {
  const lines = DOC.split('\n');
  const header = lines.findIndex((l) => /^\| Variable \| Flag \| Default \| Allowed \| Meaning \|$/.test(l));
  expect(header, 'the variables table').toBeGreaterThanOrEqual(0);
  const rows: Row[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    const name = /^`(IFW_[A-Z_]+)`$/.exec(cells[0]!)?.[1];
    expect(name, line).toBeDefined();
    rows.push({ name: name!, defaultValue: cells[2]!.replace(/`/g, ''), allowed: cells[3]! });
  }
  return rows;
}

const rows = variableRows();
const MB = 1024 * 1024;

/** Where each whole-number variable lands in the configuration (IFW_DATABASE_POOL_SIZE needs PostgreSQL). */
const read: Record<string, { env?: NodeJS.ProcessEnv; value: (c: Config) => number | undefined }> = {
  IFW_PORT: { value: (c) => c.port },
  IFW_DATABASE_POOL_SIZE: {
    env: { IFW_DATABASE_URL: 'postgres://ifw@127.0.0.1:5432/ifw' },
    value: (c) => (c.database.kind === 'postgres' ? c.database.poolSize : undefined),
  },
  IFW_WORKER_CONCURRENCY: { value: (c) => c.workerConcurrency },
  IFW_BODY_LIMIT_MB: { value: (c) => c.bodyLimitBytes / MB },
  IFW_LEASE_SECONDS: { value: (c) => c.leaseSeconds },
  IFW_MAX_ATTEMPTS: { value: (c) => c.maxAttempts },
  IFW_RETENTION_DAYS: { value: (c) => c.retentionDays },
  IFW_RUN_RETENTION_DAYS: { value: (c) => c.runRetentionDays },
  IFW_IDEMPOTENCY_HOURS: { value: (c) => c.idempotencyHours },
  IFW_MAX_PAGE_SIZE: { value: (c) => c.maxPageSize },
  IFW_SCHEDULER_TICK_MS: { value: (c) => c.schedulerTickMs },
  IFW_WORKER_HEARTBEAT_SECONDS: { value: (c) => c.workerHeartbeatSeconds },
  IFW_WORKER_DEAD_SECONDS: { value: (c) => c.workerDeadSeconds },
  IFW_WORKER_FORGET_HOURS: { value: (c) => c.workerForgetHours },
  IFW_PENDING_ALARM_SECONDS: { value: (c) => c.pendingAlarmSeconds },
  IFW_OAUTH_CLOCK_SKEW_SECONDS: { value: (c) => c.tokenClockSkewSeconds },
  IFW_DIRECTORY_CACHE_MS: { value: (c) => c.directoryCacheMs },
  IFW_CONSOLE_IDLE_MINUTES: { value: (c) => c.consoleIdleMinutes },
  IFW_CONSOLE_SESSION_HOURS: { value: (c) => c.consoleSessionHours },
  IFW_CONSOLE_MAX_SESSIONS: { value: (c) => c.consoleMaxSessions },
  IFW_REQUEST_TIMEOUT_SECONDS: { value: (c) => c.requestTimeoutSeconds },
  IFW_IDLE_TIMEOUT_SECONDS: { value: (c) => c.idleTimeoutSeconds },
  IFW_KEEP_ALIVE_TIMEOUT_SECONDS: { value: (c) => c.keepAliveTimeoutSeconds },
  IFW_MAX_CONNECTIONS: { value: (c) => c.maxConnections },
};

function refusal(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

describe('docs/configuration.md: environment variables', () => {
  it('lists every variable src/core/config.ts reads, and no other', () => {
    const read = new Set(CONFIG_SOURCE.match(/IFW_[A-Z_]+/g));
    expect(rows.map((r) => r.name).sort()).toEqual([...read].sort());
  });

  const ranged = rows.flatMap((r) => {
    const m = /^(\d+) to (\d+)$/.exec(r.allowed);
    return m === null ? [] : [{ ...r, min: Number(m[1]), max: Number(m[2]) }];
  });

  it('gives a range for every whole-number variable', () => {
    expect(ranged.map((r) => r.name).sort()).toEqual(Object.keys(read).sort());
  });

  it.each(ranged)(
    '$name: accepts $min to $max, refuses either side, and defaults to the documented value',
    ({ name, min, max, defaultValue }) => {
      const { env = {}, value } = read[name]!;
      expect(value(loadConfig({ ...env })), 'default').toBe(Number(defaultValue));
      expect(value(loadConfig({ ...env, [name]: String(min) }))).toBe(min);
      expect(value(loadConfig({ ...env, [name]: String(max) }))).toBe(max);
      for (const outside of [min - 1, max + 1]) {
        expect(refusal({ ...env, [name]: String(outside) })).toBe(`${name} must be between ${min} and ${max}, got ${outside}`);
      }
      expect(refusal({ ...env, [name]: '1.5' })).toBe(`${name} must be a whole number, got "1.5"`);
    },
  );

  const booleans = rows.filter((r) => r.allowed.startsWith('true or false'));

  it('documents the yes/no variables config.ts reads as true or false', () => {
    expect(booleans.map((r) => r.name).sort()).toEqual([
      'IFW_BASIC_AUTH',
      'IFW_DEV_TOKEN_ISSUER',
      'IFW_METRICS',
      'IFW_PRODUCTION',
      'IFW_WORKERS',
    ]);
  });

  it.each(booleans)('$name: takes true/false, 1/0, yes/no, on/off and refuses anything else', ({ name }) => {
    for (const yes of ['true', '1', 'yes', 'on']) expect(() => loadConfig({ [name]: yes }), yes).not.toThrow();
    for (const no of ['false', '0', 'no', 'off']) expect(() => loadConfig({ [name]: no }), no).not.toThrow();
    expect(refusal({ [name]: 'maybe' })).toBe(`${name} must be true or false, got "maybe"`);
  });

  it('IFW_LOG_LEVEL: takes exactly the documented levels', () => {
    const row = rows.find((r) => r.name === 'IFW_LOG_LEVEL')!;
    const levels = /^one of (.+)$/.exec(row.allowed)![1]!.split(', ');
    expect(levels).toEqual(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
    for (const level of levels) expect(loadConfig({ IFW_LOG_LEVEL: level }).logLevel).toBe(level);
    expect(refusal({ IFW_LOG_LEVEL: 'verbose' })).toContain('IFW_LOG_LEVEL must be one of');
  });

  it('IFW_TRUST_PROXY: off by default; proxy addresses, CIDR ranges or range names, or a hop count; never "every address"', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ IFW_TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,loopback' }).trustProxy).toEqual(['127.0.0.1', '10.0.0.0/8', 'loopback']);
    expect(loadConfig({ IFW_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(refusal({ IFW_TRUST_PROXY: 'true' })).toContain('IFW_TRUST_PROXY must name the proxies');
    expect(refusal({ IFW_TRUST_PROXY: 'proxy.example' })).toContain('IFW_TRUST_PROXY: "proxy.example" is not an IP address or CIDR range');
    expect(refusal({ IFW_TRUST_PROXY: '11' })).toBe('IFW_TRUST_PROXY must be between 1 and 10, got 11');
  });

  it.each(['IFW_OUTBOUND_DENY', 'IFW_OUTBOUND_ALLOW'])('%s: a comma-separated list of addresses and CIDR ranges', (name) => {
    const key = name === 'IFW_OUTBOUND_DENY' ? 'deny' : 'allow';
    expect(loadConfig({}).outbound[key]).toEqual([]);
    expect(loadConfig({ [name]: '169.254.169.254, 10.1.0.0/16,fd00::/8' }).outbound[key]).toEqual([
      { address: '169.254.169.254', prefix: 32, family: 'ipv4' },
      { address: '10.1.0.0', prefix: 16, family: 'ipv4' },
      { address: 'fd00::', prefix: 8, family: 'ipv6' },
    ]);
    expect(refusal({ [name]: '10.0.0.0/33' })).toBe(`${name}: "10.0.0.0/33": the prefix length must be a whole number from 0 to 32`);
    expect(refusal({ [name]: 'intranet.example' })).toContain(`${name}: "intranet.example" is not an IP address or CIDR range`);
  });

  it('IFW_DATABASE_URL: a ?schema= name is 1 to 63 lower-case letters, digits or "_", not starting with a digit', () => {
    const url = (schema: string) => ({ IFW_DATABASE_URL: `postgres://ifw@127.0.0.1:5432/ifw?schema=${schema}` });
    expect(loadConfig(url('a'.repeat(63))).database).toMatchObject({ kind: 'postgres', schema: 'a'.repeat(63) });
    for (const bad of ['a'.repeat(64), '1abc', 'Tenant']) expect(refusal(url(bad))).toContain('schema must be 1 to 63 lower-case letters');
  });
});

describe('docs/configuration.md: the declarative configuration file', () => {
  const clock = manualClock('2025-01-01T00:00:00Z');
  let t: TestDatabase;
  beforeEach(async () => {
    t = await openTestDatabase();
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const blocks = [...DOC.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);

  it('has a YAML example that declares every kind of thing ifw apply takes', () => {
    expect(blocks).toHaveLength(1);
    expect(Object.keys(parse(blocks[0]!) as object)).toEqual([
      'targetTables',
      'integrations',
      'restApiConnections',
      'restApiEndpoints',
      'jobQueueEntries',
    ]);
  });

  it('applies the YAML example as written, and again with nothing changed', async () => {
    const yaml = blocks[0]!;
    const env = Object.fromEntries([...yaml.matchAll(/\$\{ENV:([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => [m[1]!, 'documented-token']));
    const options = { secrets: createSecretBox({ secretKey: 'configuration docs', dataDir: t.dir }), env };

    const first = await applyConfig(t.db, parse(yaml), clock, options);
    expect(first.summary).toEqual({ created: 6, updated: 0, unchanged: 1 });
    expect((await getIntegrationPlan(t.db.kysely, 10))?.mappings).toHaveLength(3);
    expect(await getEntry(t.db, 'endpoint:crm-customers')).toMatchObject({ recurrenceSeconds: 3600 });

    const again = await applyConfig(t.db, parse(yaml), clock, options);
    expect(again.summary).toEqual({ created: 0, updated: 0, unchanged: 7 });
  });
});
