/**
 * Migration 005 moves a REST API endpoint's Pagination section from flat nullable columns into one
 * column holding the tagged union; 006 adds the kept settings of the other pagination types, says
 * "not set" for a Response Data Path None and Next Link left blank, and renames an import run's
 * record count. Endpoints written the old way, one of each pagination type, are read back after them
 * as before (what answers show, what the fetch loop runs) and still run against a real paging server;
 * runs keep their figures; on SQLite and PostgreSQL alike.
 */
import os from 'node:os';
import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { parseDatabaseUrl } from '../../src/core/config.js';
import { declareIntegration } from '../../src/integrations/service.js';
import { getRun, listRunPages } from '../../src/import-runs/queries.js';
import type { PaginationSettings } from '../../src/pagination/types.js';
import { fetchPages } from '../../src/rest-source/fetch-pages.js';
import type { FetchSummary, RestEndpoint } from '../../src/rest-source/model.js';
import { createSecretBox } from '../../src/rest-source/secrets.js';
import { createConnection, updateEndpoint } from '../../src/rest-source/service.js';
import { endpointViewOf, type ConfiguredPagination, type EndpointView } from '../../src/rest-source/settings.js';
import { getEndpoint, loadConnection, loadEndpoint } from '../../src/rest-source/store.js';
import { migrate, openDatabase, type Database } from '../../src/storage/database.js';
import { migrationProvider } from '../../src/storage/migrations.js';
import { createTargetTable } from '../../src/tables/service.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { ITEMS, ITEMS_INTEGRATION, itemTable } from '../helpers/import-fixtures.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';

const PREVIOUS = '004_security';
const LATER = [
  '005_rest_endpoint_pagination',
  '006_kept_pagination_and_records_fetched',
  '007_console_sessions',
  '008_request_list_indexes',
  '009_payload_chunks',
  '010_session_identity',
  '011_idempotency_keys',
  '012_resubmitted_requests',
  '013_workers',
  '014_response_actions_and_cookies',
  '015_webhooks',
  '017_run_errors_and_retention',
  '018_incremental_imports',
  '019_payload_chunk_compression',
];
const clock = manualClock('2025-01-01T00:00:00Z');
const box = createSecretBox({ secretKey: 'migration-test', dataDir: os.tmpdir() });

/** Migrates up to `name` only, with the migration tables `migrate` uses, so that it carries on from there. */
async function migrateTo(db: Database, name: string): Promise<void> {
  const schema =
    db.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0]!.schema
      : undefined;
  const migrator = new Migrator({
    db: db.kysely,
    provider: migrationProvider(db.dialect),
    migrationTableName: 'ifw_migration',
    migrationLockTableName: 'ifw_migration_lock',
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
  const { error } = await migrator.migrateTo(name);
  if (error !== undefined) throw error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`);
}

/** An endpoint row in the columns of migration 002; unnamed columns take their defaults. */
async function insertFlatRow(db: Database, columns: Readonly<Record<string, string | number | null>>): Promise<void> {
  const row = { connection_code: 'paging', integration_sorting_order: ITEMS, created_at: 'x', updated_at: 'x', ...columns };
  await sql`insert into ifw_rest_endpoint (${sql.join(Object.keys(row).map((c) => sql.ref(c)))}) values (${sql.join(Object.values(row))})`.execute(
    db.kysely,
  );
}

const REQUEST = { connectionCode: 'paging', method: 'GET', headers: {}, query: {}, body: null, integrationSortingOrder: ITEMS } as const;
const UNUSED = {
  nextLinkJsonPath: null,
  pageParameterName: null,
  offsetParameterName: null,
  limitParameterName: null,
  allowCrossOrigin: false,
  responseActions: [] as never[],
  sessionCookies: false,
  cursorField: null,
  cursorFieldType: null,
  cursorFieldInitialValue: null,
  cursorFieldLookback: null,
  // Settings declared after the migration: the endpoints it wrote do not have them, and read them as not set.
  parametersIn: null,
  hasMoreJsonPath: null,
  totalCountJsonPath: null,
  stopOnEmptyPage: false,
  cursorFrom: null,
  cursorJsonPath: null,
  cursorResponseHeader: null,
  cursorParameterName: null,
  cursorInitialValue: null,
} as const;

interface Case {
  readonly code: string;
  /** Written in the old columns. */
  readonly columns: Readonly<Record<string, string | number | null>>;
  /** What the endpoint answered before the migration (and must answer after it). */
  readonly view: EndpointView;
  /** The pagination the fetch loop was given before the migration. */
  readonly runs: PaginationSettings;
  /** What the `pagination` column holds: as configured, `$` kept, null for a Response Data Path not set. */
  readonly stored: ConfiguredPagination;
  readonly summary: Pick<FetchSummary, 'pagesFetched' | 'recordCount' | 'stopReason'>;
}

// The server holds 25 records in pages of 10.
const CASES: readonly Case[] = [
  {
    code: 'none',
    columns: { code: 'none', path: '/' },
    view: {
      ...REQUEST,
      ...UNUSED,
      code: 'none',
      path: '/',
      paginationType: 'none',
      pageSize: null,
      maxPages: 100,
      responseDataPath: null,
      scheduleSeconds: null,
    },
    runs: { type: 'none', maxPages: 100, pageSize: null, responseDataPath: '' },
    stored: { type: 'none', maxPages: 100, pageSize: null, responseDataPath: null },
    summary: { pagesFetched: 1, recordCount: null, stopReason: 'singlePage' },
  },
  {
    code: 'none-settings',
    columns: {
      code: 'none-settings',
      path: '/page-number',
      query: '{"page":"2"}',
      pagination_type: 'none',
      page_size: 10,
      max_pages: 5,
      response_data_path: 'data',
    },
    view: {
      ...REQUEST,
      ...UNUSED,
      code: 'none-settings',
      path: '/page-number',
      query: { page: '2' },
      paginationType: 'none',
      pageSize: 10,
      maxPages: 5,
      responseDataPath: 'data',
      scheduleSeconds: null,
    },
    runs: { type: 'none', maxPages: 5, pageSize: 10, responseDataPath: 'data' },
    stored: { type: 'none', maxPages: 5, pageSize: 10, responseDataPath: 'data' },
    summary: { pagesFetched: 1, recordCount: 10, stopReason: 'singlePage' },
  },
  {
    code: 'none-root',
    columns: { code: 'none-root', path: '/root-array', pagination_type: 'none', response_data_path: '$' },
    view: {
      ...REQUEST,
      ...UNUSED,
      code: 'none-root',
      path: '/root-array',
      paginationType: 'none',
      pageSize: null,
      maxPages: 100,
      responseDataPath: '$',
      scheduleSeconds: null,
    },
    runs: { type: 'none', maxPages: 100, pageSize: null, responseDataPath: '' },
    stored: { type: 'none', maxPages: 100, pageSize: null, responseDataPath: '$' },
    summary: { pagesFetched: 1, recordCount: 10, stopReason: 'singlePage' },
  },
  {
    code: 'next-link',
    columns: {
      code: 'next-link',
      path: '/odata/Customers',
      headers: '{"Accept":"application/json"}',
      pagination_type: 'nextLink',
      next_link_path: '@odata.nextLink',
      page_size: 10,
      response_data_path: 'value',
      schedule_seconds: 3600,
    },
    view: {
      ...REQUEST,
      ...UNUSED,
      code: 'next-link',
      path: '/odata/Customers',
      headers: { Accept: 'application/json' },
      paginationType: 'nextLink',
      nextLinkJsonPath: '@odata.nextLink',
      pageSize: 10,
      maxPages: 100,
      responseDataPath: 'value',
      scheduleSeconds: 3600,
    },
    runs: {
      type: 'nextLink',
      nextLinkPath: '@odata.nextLink',
      allowCrossOrigin: false,
      maxPages: 100,
      pageSize: 10,
      responseDataPath: 'value',
    },
    stored: {
      type: 'nextLink',
      nextLinkPath: '@odata.nextLink',
      allowCrossOrigin: false,
      maxPages: 100,
      pageSize: 10,
      responseDataPath: 'value',
    },
    summary: { pagesFetched: 3, recordCount: 25, stopReason: 'noNextLink' },
  },
  {
    code: 'next-link-cross',
    columns: {
      code: 'next-link-cross',
      path: '/nested',
      pagination_type: 'nextLink',
      next_link_path: 'links.next',
      allow_cross_origin: 1,
      max_pages: 2,
      response_data_path: 'items',
    },
    view: {
      ...REQUEST,
      ...UNUSED,
      code: 'next-link-cross',
      path: '/nested',
      paginationType: 'nextLink',
      nextLinkJsonPath: 'links.next',
      allowCrossOrigin: true,
      pageSize: null,
      maxPages: 2,
      responseDataPath: 'items',
      scheduleSeconds: null,
    },
    runs: { type: 'nextLink', nextLinkPath: 'links.next', allowCrossOrigin: true, maxPages: 2, pageSize: null, responseDataPath: 'items' },
    stored: {
      type: 'nextLink',
      nextLinkPath: 'links.next',
      allowCrossOrigin: true,
      maxPages: 2,
      pageSize: null,
      responseDataPath: 'items',
    },
    summary: { pagesFetched: 2, recordCount: 20, stopReason: 'maxPages' },
  },
  {
    code: 'page-number',
    columns: {
      code: 'page-number',
      path: '/root-array',
      pagination_type: 'pageNumber',
      page_param: 'page',
      page_size: 10,
      response_data_path: '$',
    },
    view: {
      ...REQUEST,
      ...UNUSED,
      code: 'page-number',
      path: '/root-array',
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      parametersIn: 'query',
      pageSize: 10,
      maxPages: 100,
      responseDataPath: '$',
      scheduleSeconds: null,
    },
    runs: { type: 'pageNumber', pageParam: 'page', maxPages: 100, pageSize: 10, responseDataPath: '' },
    stored: { type: 'pageNumber', pageParam: 'page', maxPages: 100, pageSize: 10, responseDataPath: '$' },
    summary: { pagesFetched: 3, recordCount: 25, stopReason: 'shortPage' },
  },
  {
    code: 'offset-limit',
    columns: {
      code: 'offset-limit',
      path: '/offset-limit',
      method: 'POST',
      body: '{"active":true}',
      pagination_type: 'offsetLimit',
      offset_param: 'offset',
      limit_param: 'limit',
      page_size: 10,
      max_pages: 50,
      response_data_path: 'results.items',
    },
    view: {
      ...REQUEST,
      ...UNUSED,
      code: 'offset-limit',
      path: '/offset-limit',
      method: 'POST',
      body: '{"active":true}',
      paginationType: 'offsetLimit',
      offsetParameterName: 'offset',
      limitParameterName: 'limit',
      parametersIn: 'query',
      pageSize: 10,
      maxPages: 50,
      responseDataPath: 'results.items',
      scheduleSeconds: null,
    },
    runs: {
      type: 'offsetLimit',
      offsetParam: 'offset',
      limitParam: 'limit',
      maxPages: 50,
      pageSize: 10,
      responseDataPath: 'results.items',
    },
    stored: {
      type: 'offsetLimit',
      offsetParam: 'offset',
      limitParam: 'limit',
      maxPages: 50,
      pageSize: 10,
      responseDataPath: 'results.items',
    },
    summary: { pagesFetched: 3, recordCount: 25, stopReason: 'shortPage' },
  },
];

const FLAT_COLUMNS = [
  'pagination_type',
  'next_link_path',
  'page_param',
  'offset_param',
  'limit_param',
  'page_size',
  'max_pages',
  'response_data_path',
  'allow_cross_origin',
];

describe.each(BACKENDS)('pagination storage migration on $name', (backend) => {
  describe.skipIf(backend.skip)(`${backend.name}`, () => {
    let server: PagingServer;
    const opened: { fresh: FreshDatabase; db: Database }[] = [];
    beforeAll(async () => {
      server = await startPagingServer({ records: 25, pageSize: 10 });
    });
    afterAll(async () => {
      for (const { fresh, db } of opened.splice(0)) {
        await db.close();
        await fresh.cleanup();
      }
      await server?.close();
    });

    /** A database migrated up to the previous migration, with the table, integration and connection endpoints need. */
    async function databaseBeforeMigration(): Promise<Database> {
      const fresh = await backend.empty();
      const db = openDatabase(parseDatabaseUrl(fresh.url, os.tmpdir()));
      opened.push({ fresh, db });
      await migrateTo(db, PREVIOUS);
      await createTargetTable(db, itemTable(), clock);
      await declareIntegration(db, ITEMS_INTEGRATION, clock);
      await createConnection(db, { code: 'paging', baseUrl: server.origin, maxRetries: 0 }, clock, box);
      return db;
    }

    const storedPagination = async (db: Database, code: string): Promise<unknown> => {
      const row = await db.kysely.selectFrom('ifw_rest_endpoint').select('pagination').where('code', '=', code).executeTakeFirstOrThrow();
      return JSON.parse(row.pagination);
    };

    it('reads back endpoints of every pagination type as before, stores each as its union, and runs them the same', async () => {
      const db = await databaseBeforeMigration();
      for (const c of CASES) await insertFlatRow(db, c.columns);

      expect(await migrate(db)).toEqual(LATER);

      for (const c of CASES) {
        const settings = await getEndpoint(db.kysely, c.code);
        expect(settings === undefined ? undefined : endpointViewOf(settings), c.code).toEqual(c.view);
        const { code, connectionCode, path, method, headers, query, body, integrationSortingOrder, scheduleSeconds } = c.view;
        const expected: RestEndpoint = {
          code,
          connectionCode,
          path,
          method,
          headers,
          query,
          body,
          integrationSortingOrder,
          pagination: c.runs,
          scheduleSeconds,
          responseActions: [],
          sessionCookies: false,
          incremental: null,
          cursorAtLoad: null,
        };
        expect(await loadEndpoint(db, c.code), c.code).toEqual(expected);
        expect(await storedPagination(db, c.code), c.code).toEqual(c.stored);
      }
      for (const column of FLAT_COLUMNS) {
        await expect(sql.raw(`select ${column} from ifw_rest_endpoint`).execute(db.kysely), column).rejects.toThrow();
      }

      const connection = await loadConnection(db, 'paging', box);
      for (const c of CASES) {
        server.reset();
        const summary = await fetchPages(connection, await loadEndpoint(db, c.code), () => undefined);
        expect({ pagesFetched: summary.pagesFetched, recordCount: summary.recordCount, stopReason: summary.stopReason }, c.code).toEqual(
          c.summary,
        );
      }
      expect(server.requests.map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual([
        'POST /offset-limit?offset=0&limit=10 {"active":true}',
        'POST /offset-limit?offset=10&limit=10 {"active":true}',
        'POST /offset-limit?offset=20&limit=10 {"active":true}',
      ]);
    });

    it('lets a migrated endpoint be changed like one saved after the migration', async () => {
      const db = await databaseBeforeMigration();
      const pageNumber = CASES.find((c) => c.code === 'page-number')!;
      await insertFlatRow(db, pageNumber.columns);
      await migrate(db);

      const patched = await updateEndpoint(db, 'page-number', { maxPages: 3 }, clock);
      expect(endpointViewOf(patched)).toEqual({ ...pageNumber.view, maxPages: 3 });
      const switched = await updateEndpoint(
        db,
        'page-number',
        { paginationType: 'offsetLimit', offsetParameterName: 'skip', limitParameterName: 'top' },
        clock,
      );
      expect(endpointViewOf(switched)).toMatchObject({
        paginationType: 'offsetLimit',
        pageParameterName: 'page',
        offsetParameterName: 'skip',
        limitParameterName: 'top',
        pageSize: 10,
        maxPages: 3,
        responseDataPath: '$',
      });
      expect(await storedPagination(db, 'page-number')).toEqual({
        type: 'offsetLimit',
        offsetParam: 'skip',
        limitParam: 'top',
        parametersIn: 'query',
        hasMorePath: null,
        totalCountPath: null,
        stopOnEmptyPage: false,
        maxPages: 3,
        pageSize: 10,
        responseDataPath: '$',
      });
      expect(switched.keptPagination).toEqual({ pageParameterName: 'page' });
    });

    it('keeps a row no version of the service could save readable, and its run fails naming what is missing', async () => {
      const db = await databaseBeforeMigration();
      await insertFlatRow(db, { code: 'no-link', path: '/odata/Customers', pagination_type: 'nextLink', response_data_path: 'value' });
      await migrate(db);

      const settings = await getEndpoint(db.kysely, 'no-link');
      expect(settings === undefined ? undefined : endpointViewOf(settings)).toMatchObject({
        paginationType: 'nextLink',
        nextLinkJsonPath: '',
      });
      const connection = await loadConnection(db, 'paging', box);
      await expect(fetchPages(connection, await loadEndpoint(db, 'no-link'), () => undefined)).rejects.toThrow(
        'Next Link JSON Path is required for Pagination Type Next Link',
      );
    });

    it('006: a Response Data Path None and Next Link left blank reads as not set, nothing is kept, and runs keep their figures', async () => {
      const db = await databaseBeforeMigration();
      await migrateTo(db, '005_rest_endpoint_pagination');
      const endpoint = async (code: string, pagination: object): Promise<void> => {
        await sql`insert into ifw_rest_endpoint (code, connection_code, path, integration_sorting_order, pagination, created_at, updated_at)
                  values (${code}, 'paging', '/odata/Customers', ${ITEMS}, ${JSON.stringify(pagination)}, 'x', 'x')`.execute(db.kysely);
      };
      const link = { type: 'nextLink', nextLinkPath: '@odata.nextLink', allowCrossOrigin: false, maxPages: 100, pageSize: null };
      await endpoint('blank', { ...link, responseDataPath: '' });
      await endpoint('value', { ...link, responseDataPath: 'value' });
      await endpoint('root', { type: 'pageNumber', pageParam: 'page', maxPages: 100, pageSize: 10, responseDataPath: '$' });
      const runId = '0194c3a0-0000-7000-8000-000000000001';
      await sql`insert into ifw_import_run (run_id, endpoint_code, integration_sorting_order, "trigger", status, queued_at, pages_fetched, record_count)
                values (${runId}, 'value', ${ITEMS}, 'manual', 'Completed', '2025-01-01T00:00:00.000Z', 2, 15)`.execute(db.kysely);
      await sql`insert into ifw_import_run_page (run_id, page_no, url, record_count) values (${runId}, 1, 'http://x/1', 10), (${runId}, 2, 'http://x/2', 5)`.execute(
        db.kysely,
      );

      expect(await migrate(db)).toEqual([
        '006_kept_pagination_and_records_fetched',
        '007_console_sessions',
        '008_request_list_indexes',
        '009_payload_chunks',
        '010_session_identity',
        '011_idempotency_keys',
        '012_resubmitted_requests',
        '013_workers',
        '014_response_actions_and_cookies',
        '015_webhooks',
        '017_run_errors_and_retention',
        '018_incremental_imports',
        '019_payload_chunk_compression',
      ]);

      expect(await storedPagination(db, 'blank')).toEqual({ ...link, responseDataPath: null });
      expect(await storedPagination(db, 'value')).toEqual({ ...link, responseDataPath: 'value' });
      expect(await storedPagination(db, 'root')).toMatchObject({ type: 'pageNumber', responseDataPath: '$' });
      for (const code of ['blank', 'value', 'root']) {
        expect((await getEndpoint(db.kysely, code))?.keptPagination, code).toEqual({});
      }
      expect((await loadEndpoint(db, 'blank')).pagination.responseDataPath).toBe('');
      expect(await getRun(db, runId)).toMatchObject({ pagesFetched: 2, recordsFetched: 15 });
      expect((await listRunPages(db, runId, { skip: 0, limit: 10 })).map((p) => p.recordsFetched)).toEqual([10, 5]);
    });

    it('stops on a pagination type no version of the service wrote, changing nothing, and carries on once it is fixed', async () => {
      const db = await databaseBeforeMigration();
      await insertFlatRow(db, { code: 'cursor', path: '/', pagination_type: 'cursor' });

      await expect(migrate(db)).rejects.toThrow('REST API endpoint "cursor" has pagination_type "cursor"');
      await sql`update ifw_rest_endpoint set pagination_type = 'none' where code = 'cursor'`.execute(db.kysely);
      expect(await migrate(db)).toEqual(LATER);
      expect(await storedPagination(db, 'cursor')).toEqual({ type: 'none', maxPages: 100, pageSize: null, responseDataPath: null });
    });
  });
});
