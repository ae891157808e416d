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

const THREAD_ENTRIES = {
  'queue-thread': 'src/main/queue-thread.ts',
  'writer-thread': 'src/bulk-import/sqlite/writer-thread.ts',
  'map-thread': 'src/table-writer/map-thread.ts',
};

/**
 * What a thread starts from, `<name>.mjs`: it runs the CommonJS bundle `<name>.cjs` as Node runs a
 * CommonJS module, but through a `vm.Script` given V8's code cache of it (`<name>.cjs.cache`), which
 * the first thread to run the bundle writes once its top level has run, so that it also holds the
 * functions that running compiled. Node 20 keeps no compile cache of its own, and compiling the
 * queue thread's 3 MB afresh was about a third of each thread start's CPU.
 */
function bundleLoader(bundle: string): string {
  return `import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
const file = ${JSON.stringify(bundle)};
const cacheFile = file + '.cache';
let cachedData;
try {
  cachedData = fs.readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
const source = "(function (exports, require, module, __filename, __dirname) {'use strict';" + fs.readFileSync(file, 'utf8') + '\\n})';
const script = new vm.Script(source, { filename: file, cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(file), module, file, path.dirname(file));
if (cachedData === undefined || script.cachedDataRejected) {
  const written = cacheFile + '.' + process.pid + '.' + Math.random().toString(36).slice(2);
  fs.writeFileSync(written, script.createCachedData());
  fs.renameSync(written, cacheFile);
}
`;
}

/** The thread entries bundled into a fresh directory; the threads read its name from the environment. */
async function bundleThreadEntries(): Promise<string> {
  const cache = path.join(ROOT, 'node_modules', '.cache');
  fs.mkdirSync(cache, { recursive: true });
  const outdir = fs.mkdtempSync(path.join(cache, 'ifw-threads-'));
  await build({
    entryPoints: Object.fromEntries(Object.entries(THREAD_ENTRIES).map(([name, file]) => [name, path.join(ROOT, file)])),
    outdir,
    outExtension: { '.js': '.cjs' },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    // The packages too, but for the native ones: a thread then loads one file instead of some thousand
    // modules (TypeBox alone is hundreds), about 0.15 s of CPU instead of 0.7 s a thread.
    external: ['better-sqlite3', 'pg-native', '@node-rs/argon2'],
    // The sources ask for their own URL (to find the next thread's entry): the bundle's.
    define: { 'import.meta.url': '__ifwModuleUrl' },
    banner: { js: "const __ifwModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
    logLevel: 'warning',
  });
  for (const name of Object.keys(THREAD_ENTRIES))
    fs.writeFileSync(path.join(outdir, `${name}.mjs`), bundleLoader(path.join(outdir, `${name}.cjs`)));
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
