/** Reading runs: one by id, the filtered and paged list, and a run's pages. */
import type { FilterClause } from '../storage/filter.js';
import type { Db } from '../storage/db.js';
import { RUN_COLUMNS, RUN_STATUSES, toImportRun, toImportRunPage, type ImportRun, type ImportRunPage } from './model.js';
import { applyFilter } from '../storage/filter.js';

export async function getRun(db: Db, runId: string): Promise<ImportRun | undefined> {
  const row = await db.selectFrom('ifw_import_run').select(RUN_COLUMNS).where('run_id', '=', runId).executeTakeFirst();
  return row === undefined ? undefined : toImportRun(row);
}

const COLUMN_OF = {
  status: 'status',
  endpointCode: 'endpoint_code',
  trigger: 'trigger',
  queuedAt: 'queued_at',
  endedAt: 'ended_at',
} as const;

/** The properties `$filter` may use on importRuns. */
export const RUN_FILTERS = {
  status: { oneOf: RUN_STATUSES },
  endpointCode: 'string',
  trigger: 'string',
  queuedAt: 'datetime',
  endedAt: 'datetime',
} as const;

export interface ListRunsOptions {
  readonly filter: readonly FilterClause[];
  readonly skip: number;
  readonly limit: number;
  readonly descending: boolean;
}

export async function listRuns(db: Db, options: ListRunsOptions): Promise<ImportRun[]> {
  const query = applyFilter(db.selectFrom('ifw_import_run').select(RUN_COLUMNS), options.filter, COLUMN_OF);
  const direction = options.descending ? 'desc' : 'asc';
  const rows = await query.orderBy('queued_at', direction).orderBy('run_id', direction).limit(options.limit).offset(options.skip).execute();
  return rows.map(toImportRun);
}

export async function listRunPages(
  db: Db,
  runId: string,
  page: { readonly skip: number; readonly limit: number },
): Promise<ImportRunPage[]> {
  const rows = await db
    .selectFrom('ifw_import_run_page')
    .select(['page_no', 'url', 'records_fetched'])
    .where('run_id', '=', runId)
    .orderBy('page_no')
    .limit(page.limit)
    .offset(page.skip)
    .execute();
  return rows.map(toImportRunPage);
}
