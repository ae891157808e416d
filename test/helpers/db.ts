/** A migrated database on a real SQLite file in a fresh temp directory (a copy of the run's migrated template). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type SqliteDatabase } from '../../src/storage/database.js';
import { copySqliteTemplate } from './databases.js';

export interface TestDatabase {
  readonly db: SqliteDatabase;
  readonly file: string;
  readonly dir: string;
  cleanup(): Promise<void>;
}

export function openTestDatabase(): Promise<TestDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-db-'));
  const file = path.join(dir, 'ifw.db');
  copySqliteTemplate(file);
  const db = openDatabase({ kind: 'sqlite', file });
  return Promise.resolve({
    db,
    file,
    dir,
    async cleanup() {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  });
}
