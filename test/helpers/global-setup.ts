/**
 * Once per test run: a migrated SQLite file and a migrated PostgreSQL database, the templates that
 * `openTestDatabase`, `startTestService` and `backend.fresh()` copy, so that a test gets a migrated
 * database of its own without running every migration again (a file copy, or PostgreSQL's `CREATE
 * DATABASE … TEMPLATE`). Both are made from the migrations of this checkout and removed at the end.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { migrate, openDatabase } from '../../src/storage/database.js';
import { parseDatabaseUrl } from '../../src/core/config.js';
import { adminQuery, postgresProblem, postgresUrlOf, SKIP_POSTGRES } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated SQLite template file. */
    sqliteTemplate: string;
    /** The migrated PostgreSQL template database, or '' when PostgreSQL is skipped or unreachable. */
    postgresTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-template-'));
  const file = path.join(dir, 'ifw.db');
  const sqlite = openDatabase({ kind: 'sqlite', file });
  await migrate(sqlite);
  await sqlite.close();
  project.provide('sqliteTemplate', file);

  let postgresTemplate = '';
  if (!SKIP_POSTGRES && (await postgresProblem()) === undefined) {
    postgresTemplate = `ifw_template_${process.pid}_${Date.now().toString(36)}`;
    await adminQuery(`create database ${postgresTemplate}`);
    const db = openDatabase(parseDatabaseUrl(postgresUrlOf(postgresTemplate), dir));
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
  }
  project.provide('postgresTemplate', postgresTemplate);

  return async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    if (postgresTemplate !== '') await adminQuery(`drop database if exists ${postgresTemplate} with (force)`);
  };
}
