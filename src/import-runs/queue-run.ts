/**
 * (new) → Queued. Refused while the endpoint already has a run Queued or Running: a run still in
 * progress is not started twice. The check and the insert are one statement, and a partial unique
 * index (migration 003) backs it up across processes: two connections queueing at once on PostgreSQL
 * both pass the check, and the index turns the second insert into nothing (a 409, not a 500).
 */
import { sql } from 'kysely';
import { newTimeOrderedId } from '../core/uuid7.js';
import { conflict } from '../core/errors.js';
import type { Db } from '../storage/db.js';
import { RUN_COLUMNS_SQL, toImportRun, type ImportRun, type RunSummaryRow, type RunTrigger } from './model.js';

export interface QueueRunArgs {
  readonly endpointCode: string;
  readonly integrationSortingOrder: number;
  readonly trigger: RunTrigger;
  readonly now: Date;
  /** Defaults to a new time-ordered GUID. */
  readonly runId?: string;
}

/** The endpoint's run that is Queued or Running, if any. */
export async function findActiveRun(db: Db, endpointCode: string): Promise<ImportRun | undefined> {
  const { rows } = await sql<RunSummaryRow>`
    select ${sql.raw(RUN_COLUMNS_SQL)}
      from ifw_import_run
     where endpoint_code = ${endpointCode}
       and status in ('Queued', 'Running')`.execute(db);
  return rows[0] === undefined ? undefined : toImportRun(rows[0]);
}

/** Throws 409 `conflict` when the endpoint has a run in progress. */
export async function queueRun(db: Db, args: QueueRunArgs): Promise<ImportRun> {
  const runId = args.runId ?? newTimeOrderedId(args.now.getTime());
  const { rows } = await sql<RunSummaryRow>`
    insert into ifw_import_run (run_id, endpoint_code, integration_sorting_order, "trigger", status, queued_at)
    select ${runId}, ${args.endpointCode}, ${args.integrationSortingOrder}, ${args.trigger}, 'Queued', ${args.now.toISOString()}
     where not exists (select 1
                         from ifw_import_run
                        where endpoint_code = ${args.endpointCode}
                          and status in ('Queued', 'Running'))
    on conflict do nothing
    returning ${sql.raw(RUN_COLUMNS_SQL)}`.execute(db);
  if (rows[0] !== undefined) return toImportRun(rows[0]);
  const active = await findActiveRun(db, args.endpointCode);
  const which = active === undefined ? '' : ` (run ${active.runId} is ${active.status})`;
  throw conflict(
    'conflict',
    `Endpoint '${args.endpointCode}' already has a run in progress${which}; a run still in progress is not started twice.`,
  );
}
