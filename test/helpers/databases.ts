/**
 * Fresh databases for the contract tests, one per backend: a SQLite file in a temp directory, or a
 * PostgreSQL database `ifw_test_<random>` created through the `postgres` maintenance database and
 * dropped afterwards, so no run depends on (or leaves) anything. `fresh()` answers one already
 * migrated, copied from the run's template (global-setup.ts): a file copy, or `CREATE DATABASE …
 * TEMPLATE`; `empty()` one with no table at all, for the tests of the migrations themselves.
 * On PostgreSQL a migrated database a test gives back (`cleanup()`) is kept by its test process and
 * put back into the template's state for the next test that asks (postgres-reset.ts): a `CREATE
 * DATABASE … TEMPLATE` costs the server about 0.35 s of CPU, a reset about 0.03 s. The global
 * teardown drops the kept ones.
 *
 * PostgreSQL is expected at IFW_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres)
 * and the tests behave the same everywhere: when it cannot be reached, the PostgreSQL tests run and
 * fail, saying why (`.ci/run` starts the server first). Only a developer who asks for it, with
 * IFW_TEST_SKIP_POSTGRES=1 on a machine without PostgreSQL, skips that half, with a printed notice.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { resettable, type ResettableDatabase } from './postgres-reset.js';

export type BackendName = 'sqlite' | 'postgres';

export interface FreshDatabase {
  /** IFW_DATABASE_URL for it. */
  readonly url: string;
  /** Removes the file or drops the database; a migrated PostgreSQL database goes back to its test process's pool. */
  cleanup(): Promise<void>;
}

export interface Backend {
  readonly name: BackendName;
  /** True only when IFW_TEST_SKIP_POSTGRES=1 asks to skip PostgreSQL: the suite is skipped, with a printed notice. */
  readonly skip: boolean;
  /** A migrated database of its own, in the template's state (on PostgreSQL maybe a reset one from the pool). */
  fresh(): Promise<FreshDatabase>;
  /** A database of its own with nothing in it, not even the migrations' table. */
  empty(): Promise<FreshDatabase>;
}

export const POSTGRES_ADMIN_URL = process.env.IFW_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** IFW_TEST_SKIP_POSTGRES=1: skip every PostgreSQL test (a machine without the server). */
export const SKIP_POSTGRES = process.env.IFW_TEST_SKIP_POSTGRES === '1';

/** Why the maintenance database cannot be used, or undefined when it can. */
export async function postgresProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function adminQuery(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The URL of database `name` on the test server. */
export function postgresUrlOf(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Copies the run's migrated SQLite template (global-setup.ts) to `file`. The template is closed
 * (checkpointed, no WAL beside it), so the copy is the whole database.
 */
export function copySqliteTemplate(file: string): void {
  fs.copyFileSync(inject('sqliteTemplate'), file);
}

function sqliteIn(migrated: boolean): Promise<FreshDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-contract-'));
  const file = path.join(dir, 'ifw.db');
  if (migrated) copySqliteTemplate(file);
  return Promise.resolve({
    url: `sqlite:${file}`,
    cleanup: () => Promise.resolve(fs.rmSync(dir, { recursive: true, force: true })),
  });
}

function unreachable(problem: string): Error {
  return new Error(
    `PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL} (${problem}); start it, or set IFW_TEST_SKIP_POSTGRES=1 to skip the PostgreSQL tests on this machine`,
  );
}

/** The run's migrated template (global-setup.ts). */
function postgresTemplate(): string {
  const template = inject('postgresTemplate');
  if (template === '') throw new Error('no PostgreSQL template database: the global setup (test/helpers/global-setup.ts) did not make one');
  return template;
}

/** What the pool's databases are called: the template's name with `test` for `template`, then a random part. */
export const pooledDatabasePrefix = (template: string): string => `${template.replace(/^ifw_template_/, 'ifw_test_')}_`;

interface Pooled {
  readonly url: string;
  readonly state: ResettableDatabase;
}

/** Migrated databases given back by this test process's tests, each reset before it is handed out again. */
const pool: Pooled[] = [];

async function migratedPostgres(problem: string | undefined): Promise<FreshDatabase> {
  if (problem !== undefined) throw unreachable(problem);
  const template = postgresTemplate();
  let taken = pool.pop();
  if (taken !== undefined) await taken.state.reset();
  else {
    const name = `${pooledDatabasePrefix(template)}${randomBytes(6).toString('hex')}`;
    const remake = async (): Promise<void> => {
      await adminQuery(`drop database if exists ${name} with (force)`);
      await adminQuery(`create database ${name} template ${template}`);
    };
    await adminQuery(`create database ${name} template ${template}`);
    const url = postgresUrlOf(name);
    taken = { url, state: await resettable(url, remake) };
  }
  const database = taken;
  let given = false;
  return {
    url: database.url,
    cleanup: () => {
      if (!given) pool.push(database);
      given = true;
      return Promise.resolve();
    },
  };
}

/** A database with nothing in it, dropped by `cleanup()`. */
async function emptyPostgres(problem: string | undefined): Promise<FreshDatabase> {
  if (problem !== undefined) throw unreachable(problem);
  const name = `ifw_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  return {
    url: postgresUrlOf(name),
    // FORCE: a connection the test forgot (or a pool still closing) must not keep the database alive.
    cleanup: () => adminQuery(`drop database if exists ${name} with (force)`),
  };
}

const problem = SKIP_POSTGRES ? undefined : await postgresProblem();
if (SKIP_POSTGRES) console.warn('IFW_TEST_SKIP_POSTGRES=1: the PostgreSQL tests are skipped.');
else if (problem !== undefined)
  console.warn(`PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL} (${problem}): the PostgreSQL tests will fail.`);

/** Both backends, for `describe.each`. */
export const BACKENDS: readonly Backend[] = [
  {
    name: 'sqlite',
    skip: false,
    fresh: () => sqliteIn(true),
    empty: () => sqliteIn(false),
  },
  {
    name: 'postgres',
    skip: SKIP_POSTGRES,
    fresh: () => migratedPostgres(problem),
    empty: () => emptyPostgres(problem),
  },
];

/** An advisory lock that another session holds until the test releases it. */
export interface HeldLock {
  /** The statement to run where the code under test should block, e.g. in a trigger: `perform <waitSql>`. */
  readonly waitSql: string;
  /** Whether some session of `url`'s database is blocked waiting for this lock. */
  waited(): Promise<boolean>;
  /** Releases the lock (once; later calls do nothing) and closes the holding session. */
  release(): Promise<void>;
}

/**
 * Takes an advisory lock in a session of its own on the PostgreSQL database at `url`: a statement that
 * asks for the same lock (`waitSql`) blocks, as behind a stuck lock holder, until `release()`, instead
 * of sleeping for a guessed time. Cancelling the blocked statement (pg_cancel_backend) ends its wait.
 */
export async function holdAdvisoryLock(url: string, key = 4_242_001): Promise<HeldLock> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  await holder.query('select pg_advisory_lock($1)', [key]);
  let released: Promise<void> | undefined;
  return {
    waitSql: `pg_advisory_xact_lock(${key})`,
    async waited() {
      const { rows } = await holder.query<{ n: number }>(
        `select count(*)::integer as n from pg_locks
          where locktype = 'advisory' and not granted and objid = $1 and database = (select oid from pg_database where datname = current_database())`,
        [key],
      );
      return rows[0]!.n > 0;
    },
    release() {
      released ??= (async () => {
        try {
          await holder.query('select pg_advisory_unlock($1)', [key]);
        } finally {
          await holder.end();
        }
      })();
      return released;
    },
  };
}
