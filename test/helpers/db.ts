/** A migrated database on a real SQLite file in a fresh temp directory. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate, openDatabase, type SqliteDatabase } from '../../src/storage/database.js';

export interface TestDatabase {
  readonly db: SqliteDatabase;
  readonly file: string;
  readonly dir: string;
  cleanup(): Promise<void>;
}

export async function openTestDatabase(): Promise<TestDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-db-'));
  const file = path.join(dir, 'ifw.db');
  const db = openDatabase({ kind: 'sqlite', file });
  await migrate(db);
  return {
    db,
    file,
    dir,
    async cleanup() {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
