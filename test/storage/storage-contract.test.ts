/**
 * The storage contract: the same test bodies against a real SQLite file and the real PostgreSQL
 * server, each in a database of its own. What is checked is what the API and `ifw apply` promise (the
 * HTTP answers, the real SQL tables behind target tables), not how either dialect does it. Processing
 * (the job queue) is not part of it yet: on PostgreSQL the service runs without workers. `ifw apply` as
 * a process is in apply-command.slow.test.ts.
 */
import os from 'node:os';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, parseDatabaseUrl } from '../../src/core/config.js';
import { migrate, openDatabase, type Database } from '../../src/storage/database.js';
import { migrations } from '../../src/storage/migrations.js';
import { sqlTableExists } from '../../src/tables/ddl.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const openUrl = (url: string): Database => openDatabase(parseDatabaseUrl(url, os.tmpdir()));

describe.each(BACKENDS)('storage contract on $name', (backend) => {
  describe.skipIf(backend.skip)(`${backend.name}`, () => {
    describe('migrations', () => {
      let fresh: FreshDatabase;
      beforeAll(async () => {
        fresh = await backend.empty();
      });
      afterAll(async () => fresh?.cleanup());

      it('apply every migration on an empty database, and nothing the second time', async () => {
        const db = openUrl(fresh.url);
        try {
          expect(await migrate(db)).toEqual([
            '001_initial',
            '002_rest_api',
            '003_import_runs',
            '004_security',
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
          ]);
          expect(await migrate(db)).toEqual([]);
          if (db.dialect === 'postgres') {
            // Stored payload chunks are compressed with LZ4 (a server built with it, as this one is), not pglz.
            const { rows } = await sql<{ compression: string }>`
              select attcompression as compression from pg_attribute
               where attrelid = 'ifw_bulk_import_payload_chunk'::regclass and attname = 'data'`.execute(db.kysely);
            expect(rows).toEqual([{ compression: 'l' }]);
          }
          const entries = await db.kysely.selectFrom('ifw_job_queue_entry').select(['id', 'recurrence_seconds']).orderBy('id').execute();
          expect(entries).toEqual([
            { id: 'bulk-import-processor', recurrence_seconds: 60 },
            { id: 'import-run-processor', recurrence_seconds: 60 },
            { id: 'retention-cleanup', recurrence_seconds: 3600 },
            { id: 'webhook-delivery', recurrence_seconds: 5 },
          ]);
          const count = await db.kysely
            .selectFrom('ifw_job_queue_entry')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow();
          expect(count.n).toBe(4);
        } finally {
          await db.close();
        }
      });
    });

    describe('through the HTTP API', () => {
      let fresh: FreshDatabase;
      let t: TestService;
      beforeAll(async () => {
        fresh = await backend.fresh();
        // Pages of two: paging is exercised with a handful of rows.
        t = await startTestService({ databaseUrl: fresh.url, workers: false, config: { maxPageSize: 2 } });
      });
      afterAll(async () => {
        await t?.cleanup();
        await fresh?.cleanup();
      });

      type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      async function call(method: Method, url: string, body?: unknown) {
        const res = await t.inject({
          method,
          url: url.startsWith('/') ? url : `${API}/${url}`,
          ...(body === undefined ? {} : { payload: body as object }),
        });
        return { status: res.statusCode, body: res.body === '' ? undefined : res.json() };
      }
      const db = () => t.service.db;
      const exists = async (table: string) => (await sqlTableExists(table, db().dialect).execute(db().kysely)).rows.length > 0;
      const run = async (statement: string) => {
        await sql.raw(statement).execute(db().kysely);
      };

      it('is ready without a job queue in this process', async () => {
        expect(await call('GET', '/health/ready')).toMatchObject({
          status: 200,
          body: { checks: { database: 'ok', jobQueue: 'not running in this process' } },
        });
      });

      describe('target tables', () => {
        const item = {
          name: 'contract_item',
          primaryKey: ['id'],
          fields: [
            { name: 'id', type: 'integer' },
            { name: 'name', type: 'text', maxLength: 50, required: true },
            { name: 'price', type: 'decimal' },
            { name: 'active', type: 'boolean' },
            { name: 'born', type: 'date' },
          ],
        };

        it('creates a real SQL table whose rows read back typed as declared', async () => {
          expect((await call('POST', 'targetTables', item)).status).toBe(201);
          expect(await exists('contract_item')).toBe(true);
          await run(
            `insert into contract_item (id, name, price, active, born) values (9007199254740991, 'Widget', 2.5, 1, '2026-01-31'), (2, 'Gadget', null, 0, null)`,
          );
          await expect(run(`insert into contract_item (id, name) values (3, null)`)).rejects.toThrow();
          const rows = await call('GET', "targetTables('contract_item')/rows");
          expect(rows.status).toBe(200);
          expect(rows.body.value).toEqual([
            { id: 2, name: 'Gadget', price: null, active: false, born: null },
            { id: 9007199254740991, name: 'Widget', price: 2.5, active: true, born: '2026-01-31' },
          ]);
        });

        it('extends a table with rows by a new nullable field', async () => {
          const wider = { ...item, fields: [...item.fields, { name: 'note', type: 'text' }] };
          expect(await call('PUT', "targetTables('contract_item')", wider)).toMatchObject({
            status: 200,
            body: { change: { result: 'updated', addedFields: ['note'] } },
          });
          await run(`update contract_item set note = 'checked' where id = 2`);
          const rows = await call('GET', "targetTables('contract_item')/rows");
          expect(rows.body.value.map((r: { note: unknown }) => r.note)).toEqual(['checked', null]);
        });

        it('makes a field required only once every row has a value, and optional again', async () => {
          const required = (value: boolean) => ({ ...item, fields: [...item.fields, { name: 'note', type: 'text', required: value }] });
          const refused = await call('PUT', "targetTables('contract_item')", required(true));
          expect(refused).toMatchObject({ status: 409, body: { error: { code: 'incompatibleChange' } } });
          expect(refused.body.error.message).toMatch(/some rows of table "contract_item" have no value/);

          await run(`update contract_item set note = 'filled' where note is null`);
          expect((await call('PUT', "targetTables('contract_item')", required(true))).status).toBe(200);
          await expect(run(`insert into contract_item (id, name, note) values (4, 'Thing', null)`)).rejects.toThrow();
          expect((await call('PUT', "targetTables('contract_item')", required(false))).status).toBe(200);
          await run(`insert into contract_item (id, name, note) values (4, 'Thing', null)`);
          const page = await call('GET', "targetTables('contract_item')/rows?$skip=2");
          expect(page.body.value).toMatchObject([{ id: 9007199254740991, note: 'filled' }]);
        });

        it('refuses a change that would reinterpret data with 409 and changes nothing', async () => {
          const retyped = { ...item, fields: item.fields.map((f) => (f.name === 'born' ? { ...f, type: 'text' } : f)) };
          const res = await call('PUT', "targetTables('contract_item')", retyped);
          expect(res).toMatchObject({ status: 409, body: { error: { code: 'incompatibleChange' } } });
          expect(
            (await call('GET', "targetTables('contract_item')")).body.fields.find((f: { name: string }) => f.name === 'born').type,
          ).toBe('date');
        });

        it('keeps relations as real foreign keys', async () => {
          const country = { name: 'contract_country', primaryKey: ['code'], fields: [{ name: 'code', type: 'code' }] };
          const address = {
            name: 'contract_address',
            primaryKey: ['id'],
            fields: [
              { name: 'id', type: 'integer' },
              { name: 'country', type: 'code', relation: { table: 'contract_country', field: 'code' } },
            ],
          };
          expect((await call('POST', 'targetTables', country)).status).toBe(201);
          // While the table is empty a new field may be required at once.
          const named = { ...country, fields: [...country.fields, { name: 'name', type: 'text', required: true }] };
          expect(await call('PUT', "targetTables('contract_country')", named)).toMatchObject({
            status: 200,
            body: { change: { addedFields: ['name'] } },
          });
          await expect(run(`insert into contract_country (code) values ('SE')`)).rejects.toThrow();
          expect((await call('POST', 'targetTables', address)).status).toBe(201);
          await run(`insert into contract_country (code, name) values ('NO', 'Norway')`);
          await run(`insert into contract_address (id, country) values (1, 'NO')`);
          await expect(run(`insert into contract_address (id, country) values (2, 'XX')`)).rejects.toThrow();
          expect(await call('DELETE', "targetTables('contract_country')")).toMatchObject({
            status: 409,
            body: { error: { code: 'conflict' } },
          });
          expect((await call('DELETE', "targetTables('contract_address')")).status).toBe(204);
          expect((await call('DELETE', "targetTables('contract_country')")).status).toBe(204);
          expect(await exists('contract_address')).toBe(false);
          expect(await exists('contract_country')).toBe(false);
        });

        it('refuses to declare over a table it did not create', async () => {
          await run('create table contract_legacy (id integer)');
          const res = await call('POST', 'targetTables', {
            name: 'contract_legacy',
            primaryKey: ['id'],
            fields: [{ name: 'id', type: 'integer' }],
          });
          expect(res).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
          expect(res.body.error.message).toMatch(/not a declared target table/);
        });

        it('drops the SQL table with its declaration', async () => {
          expect((await call('DELETE', "targetTables('contract_item')")).status).toBe(204);
          expect(await exists('contract_item')).toBe(false);
          expect((await call('GET', "targetTables('contract_item')")).status).toBe(404);
        });
      });

      describe('integrations, fields and mappings', () => {
        it('creates, reads, changes and deletes them', async () => {
          const vendor = {
            name: 'contract_vendor',
            primaryKey: ['no'],
            fields: [
              { name: 'no', type: 'code' },
              { name: 'name', type: 'text' },
            ],
          };
          expect((await call('POST', 'targetTables', vendor)).status).toBe(201);
          const integration = {
            sortingOrder: 70,
            name: 'Vendors',
            type: 'file',
            targetTable: 'contract_vendor',
            acceptBulkImportRequests: true,
          };
          expect(await call('POST', 'integrations', integration)).toMatchObject({
            status: 400,
            body: { error: { code: 'invalidRequest', message: expect.stringContaining('integration 70 has no mappings') as unknown } },
          });
          const created = await call('POST', 'integrations', {
            ...integration,
            fields: [
              { fieldNo: 1, title: 'No.', sourcePath: 'no' },
              { fieldNo: 2, title: 'Name', sourcePath: 'name' },
            ],
            mappings: [{ fieldNo: 1, targetField: 'no', required: true }],
          });
          expect(created).toMatchObject({
            status: 201,
            body: { sortingOrder: 70, acceptBulkImportRequests: true, maxPayloadSizeKb: null, mappings: [{ fieldNo: 1 }] },
          });
          expect(created.body.fields).toHaveLength(2);
          expect((await call('POST', 'integrations(70)/mappings', { fieldNo: 2, targetField: 'name' })).status).toBe(201);
          expect((await call('POST', 'integrations(70)/mappings', { fieldNo: 2, targetField: 'name' })).status).toBe(409);

          expect((await call('GET', 'integrations')).body.value.map((i: { sortingOrder: number }) => i.sortingOrder)).toEqual([10, 70]);
          expect((await call('GET', 'integrations(70)/fields')).body.value).toHaveLength(2);
          expect((await call('GET', 'integrations(70)/mappings')).body.value).toMatchObject([
            { fieldNo: 1, targetField: 'no', required: true },
            { fieldNo: 2, targetField: 'name', required: false },
          ]);

          expect(await call('PATCH', 'integrations(70)', { maxPayloadSizeKb: 64, acceptBulkImportRequests: false })).toMatchObject({
            status: 200,
            body: { maxPayloadSizeKb: 64, acceptBulkImportRequests: false },
          });
          expect(await call('PATCH', 'integrations(70)/mappings(2)', { required: true })).toMatchObject({
            status: 200,
            body: { required: true },
          });
          expect((await call('DELETE', 'integrations(70)/mappings(2)')).status).toBe(204);
          expect((await call('DELETE', 'integrations(70)/fields(2)')).status).toBe(204);
          expect((await call('GET', 'integrations(70)/fields')).body.value).toHaveLength(1);
          expect((await call('DELETE', 'integrations(70)')).status).toBe(204);
          expect((await call('GET', 'integrations(70)')).status).toBe(404);
          expect((await call('DELETE', "targetTables('contract_vendor')")).status).toBe(204);
        });
      });

      describe('bulk import requests', () => {
        const SET = 'bulkImportRequests';
        const ids: string[] = [];

        it('accepts submissions durably (202) and refuses a bad one with nothing stored', async () => {
          for (let i = 0; i < 5; i++) {
            const res = await call('POST', SET, {
              integrationSortingOrder: 10,
              payload: JSON.stringify([{ no: `C${i}`, name: `Customer ${i}` }]),
            });
            expect(res).toMatchObject({ status: 202, body: { status: 'Pending' } });
            ids.push(res.body.requestId as string);
          }
          expect((await call('POST', SET, { integrationSortingOrder: 999, payload: '[]' })).body.error.code).toBe('unknownIntegration');
          const stored = await db()
            .kysely.selectFrom('ifw_bulk_import_request')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow();
          expect(stored.n).toBe(5);
        });

        it('answers a poll with the request', async () => {
          const res = await call('GET', `${SET}(${ids[0]})`);
          expect(res).toMatchObject({
            status: 200,
            body: {
              requestId: ids[0],
              integrationSortingOrder: 10,
              status: 'Pending',
              recordCount: 0,
              errorMessage: '',
            },
          });
          expect((await call('GET', `${SET}(0f8fad5b-d9cb-469f-a165-70867728950e)`)).status).toBe(404);
        });

        it('lists with $filter and pages with @odata.nextLink', async () => {
          const seen: string[] = [];
          let url: string | undefined = `${API}/${SET}?$filter=status eq 'Pending' and integrationSortingOrder eq 10&$skip=1`;
          let pages = 0;
          while (url !== undefined) {
            const res = await call('GET', url.replace(/^https?:\/\/[^/]+/, ''));
            expect(res.status).toBe(200);
            seen.push(...res.body.value.map((r: { requestId: string }) => r.requestId));
            url = res.body['@odata.nextLink'];
            pages++;
          }
          expect(pages).toBe(2);
          expect(seen).toEqual(ids.slice(1));
          const none = await call('GET', `${SET}?$filter=status eq 'Completed'`);
          expect(none.body.value).toEqual([]);
          const newestFirst = await call('GET', `${SET}?$orderby=submittedAt desc&$top=2`);
          expect(newestFirst.body.value.map((r: { requestId: string }) => r.requestId)).toEqual([ids[4], ids[3]]);
        });

        it('shows the details of a request', async () => {
          const payload = JSON.stringify([{ no: 'C0', name: 'Customer 0' }]);
          expect(await call('GET', `${SET}(${ids[0]})/details`)).toMatchObject({
            status: 200,
            body: { requestId: ids[0], status: 'Pending', attempts: 0, payloadLength: payload.length, insertedCount: 0, errors: [] },
          });
        });

        it('cancels a Pending request once, and resets a stuck Processing one to Pending', async () => {
          const cancelled = await call('POST', `${SET}(${ids[1]})/Microsoft.NAV.cancel`);
          expect(cancelled).toMatchObject({ status: 200, body: { status: 'Cancelled', errorMessage: 'Cancelled by an administrator.' } });
          expect((await call('POST', `${SET}(${ids[1]})/Microsoft.NAV.cancel`)).body.error.code).toBe('invalidStatusTransition');

          await db()
            .kysely.updateTable('ifw_bulk_import_request')
            .set({ status: 'Processing', lease_owner: 'worker-x', lease_expires_at: '2099-01-01T00:00:00.000Z', attempts: 2 })
            .where('request_id', '=', ids[2]!)
            .execute();
          expect(await call('POST', `${SET}(${ids[2]})/Microsoft.NAV.reset`)).toMatchObject({ status: 200, body: { status: 'Pending' } });
          const row = await db()
            .kysely.selectFrom('ifw_bulk_import_request')
            .select(['lease_owner', 'attempts'])
            .where('request_id', '=', ids[2]!)
            .executeTakeFirstOrThrow();
          expect(row).toEqual({ lease_owner: null, attempts: 0 });
          expect((await call('POST', `${SET}(${ids[2]})/Microsoft.NAV.reset`)).body.error.code).toBe('invalidStatusTransition');

          const listed = await call('GET', `${SET}?$filter=status eq 'Cancelled'`);
          expect(listed.body.value.map((r: { requestId: string }) => r.requestId)).toEqual([ids[1]]);
        });
      });

      describe('job queue entries', () => {
        const PROCESSOR = "jobQueueEntries('bulk-import-processor')";

        it('lists the seeded entries', async () => {
          const res = await call('GET', 'jobQueueEntries');
          expect(res.body.value.map((e: { id: string }) => e.id)).toEqual([
            'bulk-import-processor',
            'import-run-processor',
            'retention-cleanup',
            'webhook-delivery',
          ]);
        });

        it('puts an entry On Hold and Ready again, and changes its interval', async () => {
          expect(await call('PATCH', PROCESSOR, { status: 'On Hold' })).toMatchObject({ status: 200, body: { status: 'On Hold' } });
          expect(await call('PATCH', PROCESSOR, { status: 'Ready' })).toMatchObject({ status: 200, body: { status: 'Ready' } });
          expect(await call('PATCH', PROCESSOR, { recurrenceSeconds: 120 })).toMatchObject({
            status: 200,
            body: { recurrenceSeconds: 120 },
          });
          expect((await call('GET', PROCESSOR)).body).toMatchObject({ status: 'Ready', recurrenceSeconds: 120 });
        });

        it('makes an entry due with the actions, and refuses to run one On Hold', async () => {
          expect(await call('POST', `${PROCESSOR}/Microsoft.NAV.setOnHold`)).toMatchObject({ status: 200, body: { status: 'On Hold' } });
          expect((await call('POST', `${PROCESSOR}/Microsoft.NAV.runNow`)).body.error.code).toBe('invalidStatusTransition');
          expect(await call('POST', `${PROCESSOR}/Microsoft.NAV.setReady`)).toMatchObject({ status: 200, body: { status: 'Ready' } });
          const before = Date.now();
          const ran = await call('POST', `${PROCESSOR}/Microsoft.NAV.runNow`);
          expect(ran.status).toBe(200);
          expect(Date.parse(ran.body.nextRunAt as string)).toBeGreaterThanOrEqual(before - 1000);
          expect(Date.parse(ran.body.nextRunAt as string)).toBeLessThanOrEqual(Date.now());
        });
      });

      describe('REST API connections, endpoints and import runs', () => {
        it('stores a connection and an endpoint, queues one run at a time and lists it', async () => {
          const connection = {
            code: 'crm',
            baseUrl: 'https://api.example.com/v1',
            authType: 'basic',
            username: 'svc',
            password: 'a secret',
          };
          expect(await call('POST', 'restApiConnections', connection)).toMatchObject({
            status: 201,
            body: { code: 'crm', passwordIsSet: true },
          });
          const endpoint = {
            code: 'crm.customers',
            connectionCode: 'crm',
            path: 'customers',
            integrationSortingOrder: 10,
            responseDataPath: 'data',
          };
          expect((await call('POST', 'restApiEndpoints', endpoint)).status).toBe(201);
          expect(await call('PATCH', "restApiConnections('crm')", { timeoutMs: 5000 })).toMatchObject({
            status: 200,
            body: { timeoutMs: 5000, passwordIsSet: true },
          });

          const queued = await call('POST', "restApiEndpoints('crm.customers')/Microsoft.NAV.run");
          expect(queued).toMatchObject({ status: 202, body: { endpointCode: 'crm.customers', status: 'Queued', trigger: 'manual' } });
          expect((await call('POST', "restApiEndpoints('crm.customers')/Microsoft.NAV.run")).status).toBe(409);
          const listed = await call('GET', "importRuns?$filter=endpointCode eq 'crm.customers'");
          expect(listed.body.value).toMatchObject([{ runId: queued.body.runId, status: 'Queued' }]);
          expect((await call('GET', `importRuns(${queued.body.runId})`)).body).toMatchObject({ status: 'Queued', pagesFetched: 0 });
        });

        it("keeps an endpoint's schedule as its job queue entry", async () => {
          const ENTRY = "jobQueueEntries('endpoint:crm.customers')";
          expect((await call('PATCH', "restApiEndpoints('crm.customers')", { scheduleSeconds: 3600 })).status).toBe(200);
          expect((await call('GET', ENTRY)).body).toMatchObject({ kind: 'endpointImport', status: 'Ready', recurrenceSeconds: 3600 });
          expect((await call('PATCH', "restApiEndpoints('crm.customers')", { scheduleSeconds: 60 })).status).toBe(200);
          expect((await call('GET', ENTRY)).body).toMatchObject({ recurrenceSeconds: 60 });
          expect((await call('PATCH', "restApiEndpoints('crm.customers')", { scheduleSeconds: null })).status).toBe(200);
          expect((await call('GET', ENTRY)).status).toBe(404);
        });
      });

      describe('users and applications', () => {
        it('creates, changes and deletes a user and an application', async () => {
          expect(
            await call('POST', 'users', {
              userName: 'contract-user',
              password: 'a sufficiently long password',
              permissionSets: ['VENDOR IF ALL'],
            }),
          ).toMatchObject({
            status: 201,
            body: { userName: 'contract-user', enabled: true, permissionSets: ['VENDOR IF ALL'] },
          });
          expect((await call('POST', 'users', { userName: 'contract-user', password: 'a sufficiently long password' })).status).toBe(409);
          expect(await call('PATCH', "users('contract-user')", { enabled: false })).toMatchObject({
            status: 200,
            body: { enabled: false },
          });
          expect((await call('GET', 'users')).body.value.map((u: { userName: string }) => u.userName)).toContain('contract-user');
          expect((await call('DELETE', "users('contract-user')")).status).toBe(204);
          expect((await call('GET', "users('contract-user')")).status).toBe(404);

          expect(
            await call('POST', 'applications', { clientId: 'contract-app', displayName: 'ERP', permissionSets: ['VENDOR IF STANDARD'] }),
          ).toMatchObject({
            status: 201,
            body: { clientId: 'contract-app', displayName: 'ERP', enabled: true },
          });
          expect(await call('PATCH', "applications('contract-app')", { displayName: 'ERP 2' })).toMatchObject({
            status: 200,
            body: { displayName: 'ERP 2' },
          });
          expect((await call('DELETE', "applications('contract-app')")).status).toBe(204);
        });

        it('refuses to remove the last enabled SUPER holder', async () => {
          // The SUPER holders: the first-start administrator `admin` and the test-super application.
          expect((await call('PATCH', "users('admin')", { enabled: false })).status).toBe(200);
          const refused = await call('DELETE', "applications('test-super')");
          expect(refused).toMatchObject({ status: 409, body: { error: { code: 'lastAdministrator' } } });
          expect((await call('GET', "applications('test-super')")).body.enabled).toBe(true);
          expect((await call('PATCH', "users('admin')", { enabled: true })).status).toBe(200);
        });

        it('refuses one of two concurrent changes that would together remove the last SUPER holders', async () => {
          const { accounts } = t.service;
          for (let round = 0; round < 5; round++) {
            // The two SUPER holders, taken away at the same moment (separate connections on PostgreSQL).
            const results = await Promise.allSettled([
              accounts.changeUser('admin', { enabled: false }),
              accounts.changeApplication('test-super', { enabled: false }),
            ]);
            expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
            const refused = results.find((r) => r.status === 'rejected');
            expect(refused?.reason).toMatchObject({ status: 409, code: 'lastAdministrator' });
            await accounts.changeUser('admin', { enabled: true });
            await accounts.changeApplication('test-super', { enabled: true });
          }
        });
      });
    });
  });
});

describe('PostgreSQL settings', () => {
  it('takes ?schema= out of the URL and the pool size from IFW_DATABASE_POOL_SIZE (default 10)', () => {
    expect(loadConfig({ IFW_DATABASE_URL: 'postgres://u:p@db.example:5432/ifw?schema=tenant_1&sslmode=require' }).database).toEqual({
      kind: 'postgres',
      url: 'postgres://u:p@db.example:5432/ifw?sslmode=require',
      schema: 'tenant_1',
      poolSize: 10,
    });
    expect(loadConfig({ IFW_DATABASE_URL: 'postgresql://db.example/ifw', IFW_DATABASE_POOL_SIZE: '25' }).database).toMatchObject({
      schema: undefined,
      poolSize: 25,
    });
  });

  it.each([
    [
      'a schema that is not a plain lower-case name',
      { IFW_DATABASE_URL: 'postgres://db/ifw?schema=Tenant;drop' },
      /schema must be 1 to 63 lower-case letters/,
    ],
    [
      'schema together with options',
      { IFW_DATABASE_URL: 'postgres://db/ifw?schema=a&options=-c%20x%3Dy' },
      /either \?schema= or \?options=/,
    ],
    [
      'a pool size of 0',
      { IFW_DATABASE_URL: 'postgres://db/ifw', IFW_DATABASE_POOL_SIZE: '0' },
      /IFW_DATABASE_POOL_SIZE must be between 1 and 1000/,
    ],
  ])('refuses %s', (_what, env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe.skipIf(BACKENDS.find((b) => b.name === 'postgres')!.skip)('the service on PostgreSQL, for now', () => {
  it('keeps two schemas of one database apart (?schema=), creating them on migrate', async () => {
    const fresh = await BACKENDS.find((b) => b.name === 'postgres')!.empty();
    const a = openUrl(`${fresh.url}?schema=tenant_a`);
    const b = openUrl(`${fresh.url}?schema=tenant_b`);
    try {
      expect(await migrate(a)).toHaveLength(Object.keys(migrations(a.dialect)).length);
      expect(await migrate(b)).toHaveLength(Object.keys(migrations(a.dialect)).length);
      await sql`create table only_in_a (id integer)`.execute(a.kysely);
      expect((await sqlTableExists('only_in_a', a.dialect).execute(a.kysely)).rows).toHaveLength(1);
      expect((await sqlTableExists('only_in_a', b.dialect).execute(b.kysely)).rows).toHaveLength(0);
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(b.kysely);
      expect(rows).toEqual([{ schema: 'tenant_b' }]);
    } finally {
      await a.close();
      await b.close();
      await fresh.cleanup();
    }
  });

  it('starts with workers (processing runs on PostgreSQL) and reports the job queue ready', async () => {
    const fresh = await BACKENDS.find((b) => b.name === 'postgres')!.fresh();
    let t: TestService | undefined;
    try {
      t = await startTestService({ databaseUrl: fresh.url, workers: true, applyExample: false });
      const res = await t.inject({ method: 'GET', url: '/health/ready' });
      expect(res.json()).toMatchObject({ checks: { database: 'ok', jobQueue: 'ok' } });
    } finally {
      await t?.cleanup();
      await fresh.cleanup();
    }
  });
});
