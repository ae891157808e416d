/** A run's store on SQLite (see ../run-store.ts): the worker thread's own connection, synchronous writes. */
import { abortBoard, claimOf } from '../../storage/abort-board.js';
import { withScratchCommits } from '../../storage/connection.js';
import { runAbortKey } from '../cancel-run.js';
import type { SqliteDatabase } from '../../storage/database.js';
import { importStagedRows } from '../../table-writer/sqlite/importer.js';
import { stagedRowsTable } from '../../table-writer/sqlite/staged-rows.js';
import { completeRun } from '../complete-run.js';
import { failRun } from '../fail-run.js';
import { createPageBuffer } from '../page-buffer.js';
import type { RunStore, RunStoreArgs } from '../run-store.js';
import { discardStagedPages } from '../stage-page.js';
import { clearStaged } from '../staged.js';
import { sqliteStaging } from './stage-pages.js';

/** A synchronous call as a promise: a throw becomes a rejection, as for PostgreSQL's round trips. */
const settle = <T>(fn: () => T): Promise<T> => new Promise((resolve) => resolve(fn()));

export function sqliteRunStore(db: SqliteDatabase, { runId, owner, leaseMs, clock, startedAt }: RunStoreArgs): RunStore {
  // An administrator's cancel cannot write while the import holds the lock: it raises this flag instead.
  const board = abortBoard(db);
  const claim = claimOf(owner, startedAt);
  const aborted = board === undefined ? {} : { aborted: () => board.raised(runAbortKey(runId), claim) };
  return {
    discardStaged: () => discardStagedPages(db, { runId, owner }),
    pageBuffer(limits, mapping) {
      const staging = sqliteStaging(db, runId, mapping);
      return createPageBuffer(staging.stageRecords, (pages) => staging.write({ runId, owner, now: clock(), leaseMs }, pages), limits);
    },
    scratch: (fn) => withScratchCommits(db, fn),
    fail: (args) => settle(() => failRun(db, args)),
    importStaged: (target, end) =>
      settle(() =>
        importStagedRows(db.sqlite, { ...target, ...aborted, table: stagedRowsTable(db.sqlite, runId) }, (outcome) => {
          const ending = end(outcome);
          return 'complete' in ending ? completeRun(db, ending.complete) : failRun(db, ending.fail);
        }),
      ),
    clearStaged: () => settle(() => clearStaged(db, runId)),
    close: () => Promise.resolve(),
  };
}
