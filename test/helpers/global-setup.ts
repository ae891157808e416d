/**
 * Once per test run: a migrated SQLite file and a migrated PostgreSQL database, the templates that
 * `openTestDatabase`, `startTestService` and `backend.fresh()` copy, so that a test gets a migrated
 * database of its own without running every migration again (a file copy, or PostgreSQL's `CREATE
 * DATABASE … TEMPLATE`). Both are made from the migrations of this checkout and removed at the end.
 *
 * Also once per run: the worker threads' entries (job queue, submission writer, mapping thread)
 * bundled from this checkout's sources and the packages they use with esbuild, named to the threads by
 * THREAD_ENTRY_BUNDLES (src/core/threads.ts), so that a thread started from sources neither compiles
 * TypeScript again nor loads each package module by module. The native packages stay outside; the
 * bundle lives under node_modules/.cache so that its imports of them resolve as the sources' do. The
 * threads of `ifw` as users run it (dist/, module by module) are what the slow project's spawned
 * processes start.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate, openDatabase } from '../../src/storage/database.js';
import { parseDatabaseUrl } from '../../src/core/config.js';
import { adminQuery, POSTGRES_ADMIN_URL, pooledDatabasePrefix, postgresProblem, postgresUrlOf, SKIP_POSTGRES } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated SQLite template file. */
    sqliteTemplate: string;
    /** The migrated PostgreSQL template database, or '' when PostgreSQL is skipped or unreachable. */
    postgresTemplate: string;
  }
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The thread entries bundled into a fresh directory; the threads read its name from the environment. */
async function bundleThreadEntries(): Promise<string> {
  const cache = path.join(ROOT, 'node_modules', '.cache');
  fs.mkdirSync(cache, { recursive: true });
  const outdir = fs.mkdtempSync(path.join(cache, 'ifw-threads-'));
  await build({
    entryPoints: {
      'queue-thread': path.join(ROOT, 'src/main/queue-thread.ts'),
      'writer-thread': path.join(ROOT, 'src/bulk-import/sqlite/writer-thread.ts'),
      'map-thread': path.join(ROOT, 'src/table-writer/map-thread.ts'),
    },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // The packages too, but for the native ones: a thread then loads one file instead of some thousand
    // modules (TypeBox alone is hundreds), about 0.15 s of CPU instead of 0.7 s a thread. The CommonJS
    // among them ask for `require`, which an ES module bundle has to be given.
    external: ['better-sqlite3', 'pg-native', '@node-rs/argon2'],
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  return outdir;
}

/** A migrated SQLite file in `dir`. */
async function sqliteTemplate(dir: string): Promise<string> {
  const file = path.join(dir, 'ifw.db');
  const sqlite = openDatabase({ kind: 'sqlite', file });
  await migrate(sqlite);
  await sqlite.close();
  return file;
}

/** A migrated PostgreSQL database's name, or '' when PostgreSQL is skipped or unreachable. */
async function postgresTemplateDatabase(dir: string): Promise<string> {
  if (SKIP_POSTGRES || (await postgresProblem()) !== undefined) return '';
  const name = `ifw_template_${process.pid}_${Date.now().toString(36)}`;
  await adminQuery(`create database ${name}`);
  const db = openDatabase(parseDatabaseUrl(postgresUrlOf(name), dir));
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  return name;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-template-'));
  // The three are independent: bundled (esbuild, its own process) while both databases migrate.
  const [threads, file, postgresTemplate] = await Promise.all([bundleThreadEntries(), sqliteTemplate(dir), postgresTemplateDatabase(dir)]);
  process.env.THREAD_ENTRY_BUNDLES = threads;
  project.provide('sqliteTemplate', file);
  project.provide('postgresTemplate', postgresTemplate);

  return async () => {
    fs.rmSync(threads, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
    if (postgresTemplate === '') return;
    // The pooled databases the test processes kept (databases.ts), then the template.
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await client.connect();
    try {
      const prefix = pooledDatabasePrefix(postgresTemplate);
      const { rows } = await client.query<{ datname: string }>('select datname from pg_database where starts_with(datname, $1)', [prefix]);
      for (const { datname } of rows) await client.query(`drop database if exists ${datname} with (force)`);
      await client.query(`drop database if exists ${postgresTemplate} with (force)`);
    } finally {
      await client.end();
    }
  };
}
