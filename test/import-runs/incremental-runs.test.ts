/**
 * Incremental REST imports end to end, on SQLite and PostgreSQL, against a real local HTTP API whose
 * data changes between runs: `{{cursor}}` sends the bookmark (the highest `updated_at` imported, minus
 * the lookback), `{{lastSuccessfulRun.startedAt}}` when the last Completed run started; the bookmark
 * moves only with a Completed run's commit; a reset starts over and a set is sent next time. The
 * variables render in the path, query, headers and body.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../../src/core/config.js';
import { declareIntegration } from '../../src/integrations/service.js';
import type { ImportRun } from '../../src/import-runs/model.js';
import { getRun } from '../../src/import-runs/queries.js';
import { queueEndpointRun } from '../../src/import-runs/queue-endpoint-run.js';
import { executeRun, runQueuedImports, type ImportRunContext } from '../../src/import-runs/run-imports.js';
import { cancelRun } from '../../src/import-runs/cancel-run.js';
import { claimNextRun } from '../../src/import-runs/claim-run.js';
import { endpointImport } from '../../src/import-runs/jobs.js';
import { resetCursor, setCursor } from '../../src/rest-source/cursor-service.js';
import type { EndpointInput } from '../../src/rest-source/schemas.js';
import { createConnection, createEndpoint } from '../../src/rest-source/service.js';
import { getBookmark } from '../../src/rest-source/store.js';
import { migrate, openDatabase, type Database } from '../../src/storage/database.js';
import { createTargetTable } from '../../src/tables/service.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { runContext, testBox, testClock, type ManualClock } from '../helpers/import-fixtures.js';

interface Article {
  id: number;
  title: string | null;
  updated_at: string;
}

interface Received {
  readonly method: string;
  readonly url: URL;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** The API: `/articles?updated_since=…` answers the articles changed at or after it; `failNext` answers 500 once. */
const api = {
  articles: [] as Article[],
  received: [] as Received[],
  failNext: false,
  origin: '',
  server: undefined as http.Server | undefined,
};

function handle(request: http.IncomingMessage, response: http.ServerResponse, body: string): void {
  const url = new URL(request.url ?? '/', api.origin);
  api.received.push({ method: request.method ?? '', url, headers: request.headers, body });
  if (api.failNext) {
    api.failNext = false;
    response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"database down"}');
    return;
  }
  const since = url.searchParams.get('updated_since') ?? (body === '' ? null : ((JSON.parse(body) as { after?: string }).after ?? null));
  const records = since === null ? api.articles : api.articles.filter((a) => Date.parse(a.updated_at) >= Date.parse(since));
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: records }));
}

beforeAll(async () => {
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => handle(request, response, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.server = server;
  api.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => api.server?.close(resolve));
});

const ARTICLES = 7;

describe.each(BACKENDS)('incremental imports on $name', (backend) => {
  describe.skipIf(backend.skip)(`${backend.name}`, () => {
    let fresh: FreshDatabase;
    let db: Database;
    let clock: ManualClock;
    let ctx: ImportRunContext;
    beforeEach(async () => {
      api.articles = [];
      api.received = [];
      api.failNext = false;
      fresh = await backend.fresh();
      db = openDatabase(parseDatabaseUrl(fresh.url, os.tmpdir(), 2));
      await migrate(db);
      clock = testClock();
      const box = testBox();
      await createTargetTable(
        db,
        {
          name: 'article',
          primaryKey: ['id'],
          fields: [
            { name: 'id', type: 'integer' },
            { name: 'title', type: 'text', required: true },
            { name: 'updated_at', type: 'text' },
          ],
        },
        clock,
      );
      await declareIntegration(
        db,
        {
          sortingOrder: ARTICLES,
          name: 'Articles',
          type: 'restApi',
          targetTable: 'article',
          writeMode: 'upsert',
          fields: [
            { fieldNo: 1, title: 'Id', sourcePath: 'id' },
            { fieldNo: 2, title: 'Title', sourcePath: 'title' },
            { fieldNo: 3, title: 'Updated', sourcePath: 'updated_at' },
          ],
          mappings: [
            { fieldNo: 1, targetField: 'id' },
            { fieldNo: 2, targetField: 'title' },
            { fieldNo: 3, targetField: 'updated_at' },
          ],
        },
        clock,
      );
      await createConnection(db, { code: 'blog', baseUrl: api.origin, maxRetries: 0 }, clock, box);
      ctx = runContext(db, clock, box);
    });
    afterEach(async () => {
      await db?.close();
      await fresh?.cleanup();
    });

    const addEndpoint = (settings: Partial<EndpointInput>) =>
      createEndpoint(
        db,
        {
          code: 'articles',
          connectionCode: 'blog',
          path: '/articles',
          integrationSortingOrder: ARTICLES,
          responseDataPath: 'data',
          ...settings,
        },
        clock,
      );

    /**
     * One run a minute after the last: queued and drained (`runQueuedImports`), or, `scheduled`, as the
     * endpoint's job queue entry runs it (the endpointImport job kind). Answers the run and what the API was sent.
     */
    async function run(scheduled = false): Promise<{ run: ImportRun; sent: Received }> {
      clock.advance(60_000);
      api.received = [];
      if (scheduled) {
        const row = await db.kysely
          .selectFrom('ifw_job_queue_entry')
          .selectAll()
          .where('id', '=', 'endpoint:articles')
          .executeTakeFirstOrThrow();
        const entry = { id: row.id, kind: row.kind, recurrenceSeconds: Number(row.recurrence_seconds), parameters: row.parameters };
        await endpointImport(ctx.sources).run({
          ...ctx,
          entry,
          signal: new AbortController().signal,
          keepGoing: () => Promise.resolve(true),
        });
      } else {
        await queueEndpointRun(db, 'articles', 'manual', clock());
        await runQueuedImports(ctx);
      }
      expect(api.received).toHaveLength(1);
      const latest = await db.kysely.selectFrom('ifw_import_run').select('run_id').orderBy('queued_at', 'desc').executeTakeFirstOrThrow();
      return { run: (await getRun(db, latest.run_id))!, sent: api.received[0]! };
    }
    const rows = async () =>
      (await sql<Article>`select id, title, updated_at from article order by id`.execute(db.kysely)).rows.map((r) => ({
        ...r,
        id: Number(r.id),
      }));
    const bookmark = async () => (await getBookmark(db, 'articles'))?.cursorValue;
    const article = (id: number, title: string, updated: string): Article => ({ id, title, updated_at: `2026-01-10T${updated}:00Z` });

    it('three runs import only the new and changed records; a failed run keeps the bookmark and the next one resends it', async () => {
      await addEndpoint({
        queryParameters: { updated_since: '{{cursor}}' },
        headers: { 'X-Since': '{{lastSuccessfulRun.startedAt|unix}}' },
        cursorField: 'updated_at',
        cursorFieldInitialValue: '2026-01-01T00:00:00Z',
        cursorFieldLookback: '1m',
        scheduleSeconds: 3600,
      });
      api.articles = [article(1, 'One', '10:00'), article(2, 'Two', '10:05'), article(3, 'Three', '10:10')];

      // The three successful runs are the endpoint's scheduled ones.
      const first = await run(true);
      expect(first.run).toMatchObject({ status: 'Completed', trigger: 'schedule', insertedCount: 3, updatedCount: 0 });
      expect(first.sent.url.searchParams.get('updated_since')).toBe('2026-01-01T00:00:00Z');
      expect(first.sent.headers['x-since']).toBe('0');
      expect(await bookmark()).toBe('2026-01-10T10:10:00Z');
      expect((await getBookmark(db, 'articles'))?.lastSuccessfulRunStartedAt).toBe(first.run.startedAt);

      // Two changes and one new article; the lookback fetches article 3 again, and upsert makes that harmless.
      api.articles = [
        article(1, 'One', '10:00'),
        article(2, 'Two, edited', '11:00'),
        article(3, 'Three', '10:10'),
        article(4, 'Four', '11:05'),
      ];
      const second = await run(true);
      expect(second.sent.url.searchParams.get('updated_since')).toBe('2026-01-10T10:09:00Z');
      expect(second.sent.headers['x-since']).toBe(String(Date.parse(first.run.startedAt!) / 1000));
      expect(second.run).toMatchObject({ status: 'Completed', recordsFetched: 3, insertedCount: 1, updatedCount: 2 });
      expect(await bookmark()).toBe('2026-01-10T11:05:00Z');

      // The API fails: nothing is imported and the bookmark stays.
      api.articles.push(article(5, 'Five', '12:00'));
      api.failNext = true;
      const failed = await run();
      expect(failed.run.status).toBe('Failed');
      expect(failed.sent.url.searchParams.get('updated_since')).toBe('2026-01-10T11:04:00Z');
      expect(await bookmark()).toBe('2026-01-10T11:05:00Z');
      expect((await getBookmark(db, 'articles'))?.lastSuccessfulRunStartedAt).toBe(second.run.startedAt);

      // A record the integration refuses (title required) fails the whole run: the bookmark stays again.
      api.articles.push({ id: 6, title: null, updated_at: '2026-01-10T12:30:00Z' });
      const refused = await run();
      expect(refused.run.status).toBe('Failed');
      expect(refused.sent.url.searchParams.get('updated_since')).toBe('2026-01-10T11:04:00Z');
      expect(await bookmark()).toBe('2026-01-10T11:05:00Z');

      api.articles = api.articles.filter((a) => a.id !== 6);
      const third = await run(true);
      expect(third.sent.url.searchParams.get('updated_since')).toBe('2026-01-10T11:04:00Z');
      expect(third.sent.headers['x-since']).toBe(String(Date.parse(second.run.startedAt!) / 1000));
      expect(third.run).toMatchObject({ status: 'Completed', recordsFetched: 2, insertedCount: 1, updatedCount: 1 });
      expect(await bookmark()).toBe('2026-01-10T12:00:00Z');

      expect(await rows()).toEqual([
        article(1, 'One', '10:00'),
        article(2, 'Two, edited', '11:00'),
        article(3, 'Three', '10:10'),
        article(4, 'Four', '11:05'),
        article(5, 'Five', '12:00'),
      ]);
    });

    it('a reset starts over from the initial value; a set is sent on the next run; a bookmark never moves back', async () => {
      await addEndpoint({ queryParameters: { updated_since: '{{cursor}}' }, cursorField: 'updated_at', cursorFieldLookback: 'PT5M' });
      api.articles = [article(1, 'One', '10:00'), article(2, 'Two', '10:30')];
      expect((await run()).sent.url.searchParams.get('updated_since')).toBe('1970-01-01T00:00:00Z');
      expect(await bookmark()).toBe('2026-01-10T10:30:00Z');

      // Only older records come back (the lookback): the bookmark stays where it was.
      api.articles = [article(1, 'One', '10:00')];
      expect((await run()).sent.url.searchParams.get('updated_since')).toBe('2026-01-10T10:25:00Z');
      expect(await bookmark()).toBe('2026-01-10T10:30:00Z');

      await resetCursor(db, 'articles', clock);
      expect(await bookmark()).toBeNull();
      expect((await run()).sent.url.searchParams.get('updated_since')).toBe('1970-01-01T00:00:00Z');
      expect(await bookmark()).toBe('2026-01-10T10:00:00Z');

      await setCursor(db, 'articles', '2026-01-10 09:00', clock);
      expect(await bookmark()).toBe('2026-01-10T09:00:00Z');
      expect((await run()).sent.url.searchParams.get('updated_since')).toBe('2026-01-10T08:55:00Z');
      await expect(setCursor(db, 'articles', 'yesterday', clock)).rejects.toThrow(/value: "yesterday" is not a date-time/);
    });

    it('a run cancelled while it runs leaves the bookmark; the next run sends it again', async () => {
      await addEndpoint({ queryParameters: { updated_since: '{{cursor}}' }, cursorField: 'updated_at' });
      api.articles = [article(1, 'One', '10:00')];
      await run();
      expect(await bookmark()).toBe('2026-01-10T10:00:00Z');

      api.articles.push(article(2, 'Two', '11:00'));
      const queued = await queueEndpointRun(db, 'articles', 'manual', clock());
      const claimed = await claimNextRun(db, { owner: ctx.owner, now: clock(), leaseMs: ctx.leaseMs });
      expect((await cancelRun(db, queued.runId, clock)).status).toBe('Cancelled');
      expect(await executeRun(ctx, claimed!)).toBe('lost');
      expect(await bookmark()).toBe('2026-01-10T10:00:00Z');

      const next = await run();
      expect(next.sent.url.searchParams.get('updated_since')).toBe('2026-01-10T10:00:00Z');
      expect(next.run).toMatchObject({ status: 'Completed', insertedCount: 1, updatedCount: 1 });
      expect(await bookmark()).toBe('2026-01-10T11:00:00Z');
    });

    it('renders the variables in the path, query, headers and a JSON body; a number cursor follows the highest id', async () => {
      await addEndpoint({
        path: '/articles/{{lastSuccessfulRun.startedAt|date}}/{{cursor}}',
        method: 'POST',
        body: '{"after":"{{lastSuccessfulRun.startedAt}}","fromId":"{{cursor}}","note":"a \\"quoted\\" {{cursor}}"}',
        queryParameters: { since: '{{lastSuccessfulRun.startedAt|iso}}', page: 'id>{{cursor}}' },
        headers: { 'X-After-Id': '{{ cursor }}' },
        cursorField: 'id',
        cursorFieldType: 'number',
        cursorFieldInitialValue: '0',
        cursorFieldLookback: 1,
      });
      api.articles = [article(1, 'One', '10:00'), article(7, 'Seven', '10:01')];
      const first = await run();
      expect(first.run.status).toBe('Completed');
      expect(first.sent.url.pathname).toBe('/articles/1970-01-01/0');
      expect(first.sent.url.searchParams.get('since')).toBe('1970-01-01T00:00:00Z');
      expect(first.sent.url.search).toContain('page=id%3E0');
      expect(first.sent.headers['x-after-id']).toBe('0');
      expect(JSON.parse(first.sent.body)).toEqual({ after: '1970-01-01T00:00:00Z', fromId: '0', note: 'a "quoted" 0' });
      expect(await bookmark()).toBe('7');

      const second = await run();
      const started = first.run.startedAt!.replace('.000Z', 'Z');
      expect(second.sent.url.pathname).toBe(`/articles/${started.slice(0, 10)}/6`);
      expect(second.sent.url.searchParams.get('since')).toBe(started);
      expect(second.sent.headers['x-after-id']).toBe('6');
      expect(JSON.parse(second.sent.body)).toMatchObject({ after: started, fromId: '6' });
    });

    it('percent-encodes a value in the path, and fails a run whose cursor field holds something else, keeping the bookmark', async () => {
      await addEndpoint({ path: '/articles/{{cursor}}', cursorField: 'updated_at', cursorFieldInitialValue: '2026-01-10T10:00:00+01:00' });
      api.articles = [article(1, 'One', '10:00'), { id: 2, title: 'Two', updated_at: 'last tuesday' }];
      const { run: failed, sent } = await run();
      expect(sent.url.pathname).toBe('/articles/2026-01-10T09%3A00%3A00Z');
      expect(failed.status).toBe('Failed');
      expect(failed.errorMessage).toContain('page 1, record 2: cursorField "updated_at" (dateTime): "last tuesday" is not a date-time');
      expect(await bookmark()).toBeNull();
      expect(await rows()).toEqual([]);
    });
  });
});
