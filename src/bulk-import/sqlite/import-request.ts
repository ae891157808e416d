/**
 * A request's import transaction on SQLite: the synchronous importer on the worker thread's own
 * connection, with the fenced finish inside its transaction. No lease renewal is possible meanwhile
 * (the thread is busy), nor needed: SQLite has one writer, and the finish is fenced all the same. An
 * administrator's cancel or reset cannot write meanwhile: it raises the request's flag on the abort
 * board (storage/abort-board.ts), which the import reads between batches.
 */
import { abortBoard, claimOf } from '../../storage/abort-board.js';
import type { SqliteDatabase } from '../../storage/database.js';
import { requestAbortKey } from '../abort-import.js';
import { importPayload } from '../../table-writer/sqlite/importer.js';
import { finishRequest } from '../finish-request.js';
import { sqliteChunks } from '../payload-chunks.js';
import type { ImportFn, ImportJob, Imported } from '../import-job.js';

export function importRequestOnSqlite(db: SqliteDatabase, job: ImportJob, importer: ImportFn = importPayload): Imported {
  const { requestId, owner, time } = job;
  const board = abortBoard(db);
  const claim = claimOf(owner, job.startedAt);
  const key = requestAbortKey(requestId);
  const aborted = board === undefined ? {} : { aborted: () => board.raised(key, claim) };
  const input =
    job.payloadChunks === 0
      ? { ...job.input, ...aborted }
      : {
          ...job.input,
          ...aborted,
          payload: { bytes: 0, chunks: sqliteChunks({ dialect: 'sqlite', sqlite: db.sqlite }, requestId, job.payloadChunks) },
        };
  return importer(db.sqlite, input, (outcome) => finishRequest(db, { requestId, owner, now: time(), outcome }));
}
