/**
 * Shared setup of the import run tests: a real SQLite file with table `item` (id integer key, name
 * text ≤ 10, required) fed by integration 20 from the paging server's `{ id, name }` records, a REST
 * connection to that server, and endpoints for each pagination type.
 */
import type { Clock } from '../../src/core/clock.js';
import { manualClock } from '../../src/core/clock.js';
import { declareIntegration, type IntegrationDeclaration } from '../../src/integrations/service.js';
import type { ImportRunContext } from '../../src/import-runs/run-imports.js';
import type { FetchedPage } from '../../src/rest-source/model.js';
import { DEFAULT_OUTBOUND_POLICY } from '../../src/rest-source/outbound-policy.js';
import { defaultImportSources } from '../../src/import-runs/sources.js';
import { createLogger } from '../../src/core/logger.js';
import type { SecretBox } from '../../src/rest-source/secrets.js';
import { secretBoxFor } from './secret-boxes.js';
import { createConnection, createEndpoint } from '../../src/rest-source/service.js';
import type { EndpointInput } from '../../src/rest-source/schemas.js';
import type { Database, SqliteDatabase } from '../../src/storage/database.js';
import type { TargetTableInput } from '../../src/tables/validate.js';
import { createTargetTable } from '../../src/tables/service.js';
import { hasStagedRows, stagedRowsTable } from '../../src/table-writer/sqlite/staged-rows.js';
import { getIntegrationPlan } from '../../src/integrations/store.js';
import { sqliteStaging } from '../../src/import-runs/sqlite/stage-pages.js';
import type { FetchedRecords, Fence } from '../../src/import-runs/stage-page.js';
import { compileMapping } from '../../src/mapping/engine.js';
import { getTableWithRelations } from '../../src/tables/store.js';

export const silentLogger = createLogger({ logLevel: 'silent' });
export const ITEMS = 20;
export const CONNECTION = 'paging';
export const START = '2025-03-01T10:00:00.000Z';

export type ManualClock = ReturnType<typeof manualClock>;
export const testClock = (): ManualClock => manualClock(START);

/** The import run tests' secret box (IFW_SECRET_KEY "import-run-tests"), one per process: secret-boxes.ts. */
export function testBox(): SecretBox {
  return secretBoxFor('import-run-tests');
}

/** Table `item`; `nameMaxLength` 9 makes "Record 100" (and later) break its rule. */
export const itemTable = (nameMaxLength = 20): TargetTableInput => ({
  name: 'item',
  primaryKey: ['id'],
  fields: [
    { name: 'id', type: 'integer' },
    { name: 'name', type: 'text', maxLength: nameMaxLength, required: true },
  ],
});

/** Integration ITEMS: the paging server's `{ id, name }` records into `item`. */
export const ITEMS_INTEGRATION = {
  sortingOrder: ITEMS,
  name: 'Items',
  type: 'restApi',
  targetTable: 'item',
  writeMode: 'insert',
  fields: [
    { fieldNo: 1, title: 'Id', sourcePath: 'id' },
    { fieldNo: 2, title: 'Name', sourcePath: 'name' },
  ],
  mappings: [
    { fieldNo: 1, targetField: 'id' },
    { fieldNo: 2, targetField: 'name' },
  ],
} as const satisfies IntegrationDeclaration;

export async function setupItems(
  db: Database,
  clock: Clock,
  box: SecretBox,
  origin: string,
  options: { nameMaxLength?: number } = {},
): Promise<void> {
  await createTargetTable(db, itemTable(options.nameMaxLength), clock);
  await declareIntegration(db, ITEMS_INTEGRATION, clock);
  await createConnection(db, { code: CONNECTION, baseUrl: origin, maxRetries: 0 }, clock, box);
}

/** Endpoint settings by pagination type, against the paging server's routes. */
export const ENDPOINTS = {
  nextLink: { path: '/odata/Customers', paginationType: 'nextLink', nextLinkJsonPath: '@odata.nextLink', responseDataPath: 'value' },
  pageNumber: { path: '/page-number', paginationType: 'pageNumber', pageParameterName: 'page', pageSize: 10, responseDataPath: 'data' },
  offsetLimit: {
    path: '/offset-limit',
    paginationType: 'offsetLimit',
    offsetParameterName: 'offset',
    limitParameterName: 'limit',
    pageSize: 10,
    responseDataPath: 'results.items',
  },
} as const satisfies Record<string, Partial<EndpointInput>>;

export async function addEndpoint(db: Database, clock: Clock, code: string, settings: Partial<EndpointInput>): Promise<void> {
  await createEndpoint(db, { code, connectionCode: CONNECTION, path: '/', integrationSortingOrder: ITEMS, ...settings }, clock);
}

export function runContext(db: Database, clock: Clock, box: SecretBox, overrides: Partial<ImportRunContext> = {}): ImportRunContext {
  return {
    db,
    clock,
    logger: silentLogger,
    owner: 'worker-1',
    leaseMs: 300_000,
    maxAttempts: 3,
    sources: defaultImportSources(() => box, DEFAULT_OUTBOUND_POLICY),
    ...overrides,
  };
}

export const itemIds = (db: SqliteDatabase): number[] => db.sqlite.prepare('select id from item order by id').pluck().all() as number[];

export const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Page rows of a run, and the records still staged for it (on this connection). */
export function stagedCounts(db: SqliteDatabase, runId: string): { pages: number; records: number } {
  const pages = db.sqlite.prepare('select count(*) from ifw_import_run_page where run_id = ?').pluck().get(runId) as number;
  const records = hasStagedRows(db.sqlite, runId)
    ? (db.sqlite
        .prepare(`select count(*) from ${stagedRowsTable(db.sqlite, runId)}`)
        .pluck()
        .get() as number)
    : 0;
  return { pages, records };
}

/** Stages one page of the items integration for a run, as a run's staging does (a fresh staging table). */
export async function stageItemsPage(db: SqliteDatabase, fence: Fence & { readonly page: FetchedRecords }): Promise<boolean> {
  const plan = (await getIntegrationPlan(db.kysely, ITEMS))!;
  const staging = sqliteStaging(
    db,
    fence.runId,
    compileMapping(plan, await getTableWithRelations(db.kysely, plan.integration.targetTable)),
  );
  return staging.write(fence, [staging.stageRecords(fence.page)]);
}

/** Hooks around the hand-over of each fetched page to staging. */
export interface PageHooks {
  /** Awaited before the page is staged. */
  readonly before?: (page: FetchedPage) => void | Promise<void>;
  /** Awaited once the page is staged. */
  readonly after?: (page: FetchedPage) => void | Promise<void>;
}

/** The context with `hooks` run around each page the run stages. */
export function watchingPages(context: ImportRunContext, hooks: PageHooks): ImportRunContext {
  return {
    ...context,
    sources: {
      ...context.sources,
      fetchPages: (connection, endpoint, onPage, options) =>
        context.sources.fetchPages(
          connection,
          endpoint,
          async (page) => {
            await hooks.before?.(page);
            await onPage(page);
            await hooks.after?.(page);
          },
          options,
        ),
    },
  };
}
