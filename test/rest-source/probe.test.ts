import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { declareIntegration } from '../../src/integrations/service.js';
import { createTargetTable } from '../../src/tables/service.js';
import { loadDryRunIntegration } from '../../src/table-writer/dry-run.js';
import { FetchError } from '../../src/rest-source/fetch-pages.js';
import { previewFirstPage, type PreviewIntegration } from '../../src/rest-source/preview.js';
import { forProbe, PROBE_BUDGET_MS, testConnection } from '../../src/rest-source/probe.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { connectionTo, endpointAt, fakeTime, paging, startPagingServer, type PagingServer } from '../helpers/paging-server.js';

let server: PagingServer;
beforeAll(async () => {
  server = await startPagingServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset({ records: 23, pageSize: 10 }));

describe('testConnection', () => {
  it('is ok when the base URL answers, and sends the credentials', async () => {
    const connection = connectionTo(server.origin, { auth: { type: 'bearer', token: 'tok-1234' } });
    expect(await testConnection(connection, fakeTime().options)).toEqual({
      ok: true,
      status: 200,
      url: server.origin + '/',
      message: 'reachable: the service answered 200 OK',
    });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer tok-1234');
  });

  it.each([
    [401, false, 'the service answered 401: check the credentials'],
    [403, false, 'the service answered 403: check the credentials'],
    [404, true, 'reachable: the service answered 404 Not Found (the base URL itself need not be a resource)'],
    [503, true, 'reachable, but the service answered 503 Service Unavailable'],
  ])('answer %i → ok %s', async (status, ok, message) => {
    const result = await testConnection(connectionTo(`${server.origin}/status/${status}`), fakeTime().options);
    expect(result).toEqual({ ok, status, url: `${server.origin}/status/${status}`, message });
  });

  it('does not retry, and reports an unreachable service without throwing', async () => {
    const gone = await startPagingServer();
    await gone.close();
    const time = fakeTime();
    const result = await testConnection(connectionTo(gone.origin), time.options);
    expect(result.ok).toBe(false);
    expect(result.status).toBeNull();
    expect(result.message).toMatch(/^network error: .*ECONNREFUSED/);
    expect(time.delays).toEqual([]);
  });

  it('reports a timeout', async () => {
    server.setFaults([{ kind: 'hang', page: 1, times: 1 }]);
    const result = await testConnection(connectionTo(`${server.origin}/next-absolute`, { timeoutMs: 200 }), fakeTime().options);
    expect(result).toMatchObject({ ok: false, status: null, message: 'no response within 200 ms (timeout)' });
  });

  it('reports a failing token endpoint without the client secret', async () => {
    server.tokenResponse = () => ({ status: 401, body: { error: 'invalid_client' } });
    const auth = {
      type: 'oauth2ClientCredentials',
      tokenUrl: `${server.origin}/oauth/token`,
      clientId: 'c',
      clientSecret: 'very-secret',
      scope: null,
    } as const;
    const result = await testConnection(connectionTo(server.origin, { auth }), fakeTime().options);
    expect(result.ok).toBe(false);
    expect(result.message).toBe(
      `the token endpoint ${server.origin}/oauth/token: the service answered 401 Unauthorized: check the credentials: {"error":"invalid_client"}: check the client id, client secret, scope and token URL`,
    );
  });

  it('shows a query API key redacted in the URL', async () => {
    const auth = { type: 'apiKey', in: 'query', name: 'key', value: 'abcdef' } as const;
    const result = await testConnection(connectionTo(server.origin, { auth, query: { v: '2' } }), fakeTime().options);
    expect(result.url).toBe(`${server.origin}/?v=2&key=[redacted]`);
    expect(server.requests[0]!.url).toBe('/?v=2&key=abcdef');
  });
});

/**
 * The paging server's `{ id, name }` records into a table `item` of a real SQLite database, read from
 * `recordsPath`: its name at most `nameMaxLength` characters and, with `names`, the key of a table
 * `names` holding those names. The integration is loaded as the preview route loads it.
 */
async function itemsIntegration(recordsPath: string, nameMaxLength = 20, names?: readonly string[]): Promise<PreviewIntegration> {
  const clock = systemClock;
  if (names !== undefined) {
    await createTargetTable(t.db, { name: 'names', primaryKey: ['name'], fields: [{ name: 'name', type: 'text', maxLength: 20 }] }, clock);
    for (const name of names) await sql`insert into names (name) values (${name})`.execute(t.db);
  }
  const relation = names === undefined ? {} : { relation: { table: 'names', field: 'name' } };
  await createTargetTable(
    t.db,
    {
      name: 'item',
      primaryKey: ['id'],
      fields: [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'text', maxLength: nameMaxLength, required: true, ...relation },
      ],
    },
    clock,
  );
  await declareIntegration(
    t.db,
    {
      sortingOrder: 20,
      name: 'Items',
      type: 'restApi',
      targetTable: 'item',
      recordsPath,
      writeMode: 'insert',
      onRecordError: 'fail',
      fields: [
        { fieldNo: 1, title: 'Id', sourcePath: 'id' },
        { fieldNo: 2, title: 'Name', sourcePath: 'name' },
      ],
      mappings: [
        { fieldNo: 1, targetField: 'id' },
        { fieldNo: 2, targetField: 'name' },
      ],
    },
    clock,
  );
  return (await loadDryRunIntegration(t.db, 20))!;
}

let t: TestDatabase;

describe('previewFirstPage', () => {
  beforeEach(async () => {
    t = await openTestDatabase();
  });
  afterEach(() => t.cleanup());

  it('fetches page 1 only and shows its first 5 records, the rows the integration makes of them, and the next URL', async () => {
    const preview = await previewFirstPage(
      connectionTo(server.origin),
      endpointAt('/offset-limit', paging.offsetLimit()),
      await itemsIntegration(''),
      fakeTime().options,
    );
    expect(preview).toEqual({
      url: `${server.origin}/offset-limit?offset=0&limit=10`,
      status: 200,
      recordsFoundBy: `Response Data Path "results.items" (the integration's records path is blank)`,
      recordCount: 10,
      records: [1, 2, 3, 4, 5].map((id) => ({ id, name: `Record ${id}` })),
      rows: [1, 2, 3, 4, 5].map((id) => ({ recordNo: id, row: { id, name: `Record ${id}` } })),
      outcome: { ok: true, recordCount: 10, inserted: 10, updated: 0, skipped: 0, errors: [], errorCount: 0, errorMessage: '' },
      next: { kind: 'next', url: `${server.origin}/offset-limit?offset=10&limit=10` },
      warnings: [],
    });
    expect(server.requests).toHaveLength(1);
  });

  it("shows each record's errors as a run words them, relations looked up in the database", async () => {
    const integration = await itemsIntegration('', 8, ['Record 2']);
    const preview = await previewFirstPage(connectionTo(server.origin), endpointAt('/page-number', paging.pageNumber()), integration, {
      ...fakeTime().options,
    });
    // "Record 1" fits 8 characters ("Record 10" does not); only "Record 2" is in table names.
    const missing = (n: number) =>
      `record ${n} (page 1, record ${n}): field "name" value "Record ${n}" does not exist in table "names" (field "name")`;
    expect(preview.rows).toEqual([
      { recordNo: 1, errors: [missing(1)] },
      { recordNo: 2, row: { id: 2, name: 'Record 2' } },
      ...[3, 4, 5].map((n) => ({ recordNo: n, errors: [missing(n)] })),
    ]);
    // All of page 1 is imported, and with On record error = fail one bad record fails the run: nothing written.
    expect(preview.outcome).toMatchObject({ ok: false, recordCount: 0, errorCount: 9 });
    expect(preview.outcome?.errors.at(-1)?.message).toBe(
      'record 10 (page 1, record 10): field "name" value "Record 10" exceeds 8 characters',
    );
    expect(await sql`select count(*) as n from item`.execute(t.db)).toMatchObject({ rows: [{ n: 0 }] });
  });

  it("finds the records where a run finds them: the integration's records path when Response Data Path is blank", async () => {
    const preview = await previewFirstPage(
      connectionTo(server.origin),
      endpointAt('/odata/Customers', paging.nextLink('@odata.nextLink', { responseDataPath: '' })),
      await itemsIntegration('value'),
      fakeTime().options,
    );
    expect(preview).toMatchObject({
      recordsFoundBy: `the integration's records path "value" (Response Data Path is blank)`,
      recordCount: 10,
      next: { kind: 'next' },
    });
    expect(preview.records).toHaveLength(5);
  });

  it('fails page 1 as a run would when both paths are blank and the root is not the array', async () => {
    const preview = previewFirstPage(
      connectionTo(server.origin),
      endpointAt('/odata/Customers', paging.nextLink('@odata.nextLink', { responseDataPath: '' })),
      await itemsIntegration(''),
      fakeTime().options,
    );
    await expect(preview).rejects.toBeInstanceOf(FetchError);
    await expect(preview).rejects.toThrow(
      `page 1 (GET ${server.origin}/odata/Customers): the integration's records path and the endpoint's Response Data Path are both blank, ` +
        'so the response root must be the record array, but it is an object with properties "@odata.context", "value", "@odata.nextLink"; ' +
        'set either of them to the path of the records',
    );
  });

  it('says when pagination would stop after page 1 and why', async () => {
    const preview = await previewFirstPage(
      connectionTo(server.origin),
      endpointAt('/page-number', paging.pageNumber({ pageSize: 50 })),
      undefined,
      fakeTime().options,
    );
    expect(preview.next).toEqual({
      kind: 'stop',
      reason: 'shortPage',
      detail:
        'page 1 has 10 records, fewer than Page Size 50: the last page; if the API has more records, Page Size is larger than its real page size',
    });
    expect(preview.rows).toBeUndefined();
  });

  it('explains a Response Data Path that counts no records while the records path finds them', async () => {
    const preview = await previewFirstPage(
      connectionTo(server.origin),
      endpointAt('/odata/Customers', paging.pageNumber({ responseDataPath: 'data' })),
      await itemsIntegration('value'),
      fakeTime().options,
    );
    expect(preview.recordCount).toBe(10);
    // Not said to count them: it finds nothing to count.
    expect(preview.recordsFoundBy).toBe(
      `the integration's records path "value"; Response Data Path "data" finds no record array on page 1, so pagination cannot count records`,
    );
    expect(preview.next).toMatchObject({ kind: 'stop', reason: 'recordsNotCountable' });
    expect(preview.warnings).toEqual([
      'Pagination would stop after page 1. Response Data Path "data" finds nothing in the response (the response has properties "@odata.context", "value", "@odata.nextLink"): ' +
        'records cannot be counted, so fetching stopped after page 1; fix Response Data Path (the path to the record array).',
    ]);
    expect(preview.next.kind === 'stop' && preview.next.warning).toContain(
      'Response Data Path "data" finds nothing in the response (the response has properties "@odata.context", "value", "@odata.nextLink")',
    );
  });

  it('reports what would fail on page 2 (a refused cross-origin link) without following it', async () => {
    server.setFaults([{ kind: 'crossOriginLink', page: 1, origin: 'https://elsewhere.example' }]);
    const preview = await previewFirstPage(
      connectionTo(server.origin),
      endpointAt('/next-absolute', paging.nextLink('next')),
      undefined,
      fakeTime().options,
    );
    expect(preview.next.kind).toBe('fail');
    expect(preview.next.kind === 'fail' && preview.next.error).toContain('points to another origin (https://elsewhere.example)');
  });

  it('throws FetchError when page 1 fails (a probe retries once at most)', async () => {
    const preview = previewFirstPage(connectionTo(server.origin), endpointAt('/status/500', paging.none()), undefined, {
      ...fakeTime().options,
    });
    await expect(preview).rejects.toBeInstanceOf(FetchError);
    await expect(preview).rejects.toThrow(
      `page 1 (GET ${server.origin}/status/500): the service answered 500 Internal Server Error after 2 attempts: {"error":"as requested"}`,
    );
  });
});

describe('the probe time budget', () => {
  it('caps what a probe uses of the connection: no request longer than the budget, at most one retry', () => {
    const slow = connectionTo(server.origin, { timeoutMs: 600_000, retry: { maxRetries: 10, initialDelayMs: 60_000 } });
    expect(forProbe(slow)).toMatchObject({ timeoutMs: PROBE_BUDGET_MS, retry: { maxRetries: 1, initialDelayMs: 60_000 } });
    const quick = connectionTo(server.origin, { timeoutMs: 2_000, retry: { maxRetries: 0, initialDelayMs: 10 } });
    expect(forProbe(quick)).toMatchObject({ timeoutMs: 2_000, retry: { maxRetries: 0 } });
  });

  it('answers Test connection with what happened when the budget runs out, whatever the connection allows', async () => {
    server.setFaults([{ kind: 'hang', page: 1, times: 5 }]);
    const patient = connectionTo(`${server.origin}/next-absolute`, { timeoutMs: 600_000, retry: { maxRetries: 10, initialDelayMs: 1 } });
    const result = await testConnection(patient, fakeTime().options, 300);
    expect(result).toMatchObject({ ok: false, status: null });
    expect(result.message).toMatch(/^no answer within 0.3 s, the time a test or preview may take/);
  });

  it('ends Preview first page with a page-1 error when the budget runs out', async () => {
    server.setFaults([{ kind: 'hang', page: 1, times: 5 }]);
    const patient = connectionTo(server.origin, { timeoutMs: 600_000, retry: { maxRetries: 10, initialDelayMs: 1 } });
    const err = await previewFirstPage(
      patient,
      endpointAt('next-absolute', paging.nextLink('next')),
      undefined,
      fakeTime().options,
      300,
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FetchError);
    expect((err as FetchError).pageNo).toBe(1);
    expect((err as FetchError).message).toMatch(/^no answer within 0.3 s/);
  });
});
