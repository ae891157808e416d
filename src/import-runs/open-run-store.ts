/** The run store of the database's dialect (run-store.ts), and failing a run that could not get one. */
import type { Database } from '../storage/database.js';
import { failRun, type FailRunArgs } from './fail-run.js';
import { failRunAlone, postgresRunStore } from './postgres/run-store.js';
import type { RunStore, RunStoreArgs } from './run-store.js';
import { sqliteRunStore } from './sqlite/run-store.js';

export async function openRunStore(db: Database, args: RunStoreArgs): Promise<RunStore> {
  return db.dialect === 'sqlite' ? sqliteRunStore(db, args) : await postgresRunStore(db, args);
}

/** Fails a run that got no store (openRunStore threw): the Failed status alone. */
export async function failRunWithoutStore(db: Database, args: FailRunArgs): Promise<boolean> {
  return db.dialect === 'sqlite' ? failRun(db, args) : await failRunAlone(db, args);
}
