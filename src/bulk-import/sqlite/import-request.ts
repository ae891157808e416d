/**
 * A request's import transaction on SQLite: the synchronous importer on the worker thread's own
 * connection, with the fenced finish inside its transaction. No lease renewal is possible meanwhile
 * (the thread is busy), nor needed: SQLite has one writer, and the finish is fenced all the same.
 */
import type { SqliteDatabase } from '../../storage/database.js';
import { importPayload } from '../../table-writer/sqlite/importer.js';
import { finishRequest } from '../finish-request.js';
import { sqliteChunks } from '../payload-chunks.js';
import type { ImportFn, ImportJob, Imported } from '../import-job.js';

export function importRequestOnSqlite(db: SqliteDatabase, job: ImportJob, importer: ImportFn = importPayload): Imported {
  const { requestId, owner, time } = job;
  const input =
    job.payloadChunks === 0
      ? job.input
      : {
          ...job.input,
          payload: { bytes: 0, chunks: sqliteChunks({ dialect: 'sqlite', sqlite: db.sqlite }, requestId, job.payloadChunks) },
        };
  return importer(db.sqlite, input, (outcome) => finishRequest(db, { requestId, owner, now: time(), outcome }));
}
