/**
 * Queued or Running → Cancelled, by an administrator, in one statement (with the run's webhook events). Cancelling a Running run clears
 * its lease, so the worker that holds it can no longer stage a page or end it: its next fenced write
 * finds no row, it stops fetching, and an import under way rolls back. On SQLite the final import holds
 * the write lock: it is asked first to stop at its next batch through the abort board
 * (storage/abort-board.ts), so the cancel need not wait for the import to end; on PostgreSQL the
 * import's lease watch sees the lease gone. One case still waits: SQLite's import of a run whose every
 * record mapped cleanly is one INSERT … SELECT, which no flag interrupts (it is the fast path, seconds
 * for a million rows).
 */
import type { Clock } from '../core/clock.js';
import { cancelledByAdministrator } from '../job-queue/model.js';
import { conflict, notFound } from '../core/errors.js';
import { ANY_CLAIM, claimOf, whileRaised } from '../storage/abort-board.js';
import type { Db } from '../storage/db.js';
import { withTransaction } from '../storage/transaction.js';
import { enqueueEvents } from '../webhooks/outbox.js';
import { RUN_COLUMNS, toImportRun, type ImportRun } from './model.js';

export const runAbortKey = (runId: string): string => `run-${runId}`;

export async function cancelRun(db: Db, runId: string, clock: Clock): Promise<ImportRun> {
  const before = await db
    .selectFrom('ifw_import_run')
    .select(['status', 'lease_owner', 'started_at'])
    .where('run_id', '=', runId)
    .executeTakeFirst();
  if (before === undefined) throw notFound(`No import run ${runId}.`);
  // The status and the run's webhook events (importRun.cancelled) in one transaction, as every ending.
  const write = () =>
    withTransaction(db, async (tx) => {
      const at = clock();
      const cancelled = await tx
        .updateTable('ifw_import_run')
        .set(cancelledByAdministrator(at))
        .where('run_id', '=', runId)
        .where('status', 'in', ['Queued', 'Running'])
        .returning(RUN_COLUMNS)
        .executeTakeFirst();
      if (cancelled !== undefined) await enqueueEvents(tx, 'run', 'Cancelled', [runId], at);
      return cancelled;
    });
  // A Queued run may be claimed while the write waits for the lock: its flag stops whichever claim that is.
  const active = before.status === 'Running' || before.status === 'Queued';
  const row = active
    ? await whileRaised(
        db,
        runAbortKey(runId),
        before.status === 'Queued' ? ANY_CLAIM : claimOf(before.lease_owner, before.started_at),
        write,
      )
    : await write();
  if (row !== undefined) return toImportRun(row);
  const now = await db.selectFrom('ifw_import_run').select('status').where('run_id', '=', runId).executeTakeFirst();
  throw conflict(
    'invalidStatusTransition',
    `Import run ${runId} is ${now?.status ?? 'gone'}; only a Queued or Running run can be cancelled.`,
  );
}
