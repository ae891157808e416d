/**
 * Import runs over HTTP: start a run of a REST API endpoint (`restApiEndpoints('<code>')/Microsoft.NAV.run`,
 * 202 with the Queued run), list runs, read one, and list its pages. Runs execute on the job queue's
 * thread, never here: this process only queues the run and wakes the queue.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { badRequest, notFound } from '../core/errors.js';
import type { ImportRun } from './model.js';
import { getRun, listRunPages, listRuns, RUN_FILTERS } from './queries.js';
import { queueEndpointRun } from './queue-endpoint-run.js';
import type { Database } from '../storage/database.js';
import { API_BASE, pageResult, parseFilter, parseGuidKey, parsePaging, parseStringKey, requestedUrl, requireKey } from '../http/odata.js';
import type { RoutePlugin } from '../http/server.js';
import { ErrorSchema, KeyParams } from '../http/schemas.js';

export interface ImportRunRouteDeps {
  readonly db: Database;
  readonly clock: Clock;
  /** Wakes the job queue after a run was queued; absent when this process runs no workers. */
  readonly wake?: () => void;
  /** Largest page of a list answer (default 100). */
  readonly maxPageSize?: number;
}

const SET = `${API_BASE}/importRuns`;
const CONTEXT = `${API_BASE}/$metadata#importRuns`;
const ENDPOINTS = `${API_BASE}/restApiEndpoints`;

const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

const RunProperties = {
  runId: Type.String({ format: 'uuid' }),
  endpointCode: Type.String(),
  integrationSortingOrder: Type.Integer(),
  trigger: Type.Union([Type.Literal('manual'), Type.Literal('schedule')]),
  status: Type.Union([
    Type.Literal('Queued'),
    Type.Literal('Running'),
    Type.Literal('Completed'),
    Type.Literal('Failed'),
    Type.Literal('Cancelled'),
  ]),
  queuedAt: Type.String({ format: 'date-time' }),
  startedAt: Timestamp,
  endedAt: Timestamp,
  durationMs: Type.Union([Type.Integer(), Type.Null()]),
  pagesFetched: Type.Integer({ description: 'Pages fetched, also a page whose next link failed the run' }),
  recordsFetched: Type.Integer({
    description: 'Records received from the endpoint, all pages (what was written is insertedCount + updatedCount)',
  }),
  insertedCount: Type.Integer({ description: 'Records written as new rows; 0 unless Completed' }),
  updatedCount: Type.Integer({ description: 'Records that updated an existing row; 0 unless Completed' }),
  skippedCount: Type.Integer({ description: "Records left out for an error (the integration's onRecordError skip); 0 unless Completed" }),
  stopReason: Type.Union([Type.String(), Type.Null()], {
    description: 'singlePage, noNextLink, shortPage, maxPages or recordsNotCountable',
  }),
  stopDetail: Type.String({ description: 'Why fetching stopped, as a sentence' }),
  warnings: Type.Array(Type.String()),
  errorMessage: Type.String({
    description:
      "'' when there is no error. A record error names the record's page and place: record 12 (page 3, record 2): field \"name\" is required",
  }),
  attempts: Type.Integer(),
};
const EntitySchema = Type.Object({ '@odata.context': Type.String(), ...RunProperties });
const ListSchema = Type.Object({
  '@odata.context': Type.String(),
  value: Type.Array(Type.Object(RunProperties)),
  '@odata.nextLink': Type.Optional(Type.String()),
});
const PageSchema = Type.Object({
  pageNo: Type.Integer(),
  url: Type.String({ description: 'The URL called, secrets redacted' }),
  recordsFetched: Type.Integer({ description: 'Records received on the page' }),
});
const PagesSchema = Type.Object({
  '@odata.context': Type.String(),
  value: Type.Array(PageSchema),
  '@odata.nextLink': Type.Optional(Type.String()),
});

const PagingQuery = Type.Object(
  { $top: Type.Optional(Type.String()), $skip: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const ListQuery = Type.Object(
  {
    $filter: Type.Optional(Type.String()),
    $top: Type.Optional(Type.String()),
    $skip: Type.Optional(Type.String()),
    $orderby: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const entity = (run: ImportRun) => ({ '@odata.context': `${CONTEXT}/$entity`, ...run });

function runKey(raw: string): string {
  const id = parseGuidKey(raw);
  if (id === null) throw notFound(`No import run ${raw.replace(/^\(|\)$/g, '')}: a runId is a GUID.`);
  return id;
}

export function importRunRoutes(deps: ImportRunRouteDeps): RoutePlugin {
  const { db } = deps;
  const maxPageSize = deps.maxPageSize ?? 100;
  const tags = ['Import Runs'];

  async function load(runId: string): Promise<ImportRun> {
    const run = await getRun(db, runId);
    if (run === undefined) throw notFound(`No import run ${runId}.`);
    return run;
  }

  return (app) => {
    app.post(
      `${ENDPOINTS}/:key/Microsoft.NAV.run`,
      {
        config: { permission: 'runImports' },
        schema: {
          summary: 'Start an import run of a REST API endpoint',
          description: 'Answers 202 with the Queued run (poll it at the Location); 409 while the endpoint has a run Queued or Running.',
          tags,
          params: KeyParams,
          response: { 202: EntitySchema, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        const code = requireKey(parseStringKey(request.params.key), 'REST API endpoint', request.params.key);
        const run = await queueEndpointRun(db, code, 'manual', deps.clock());
        deps.wake?.();
        return reply.status(202).header('location', `${SET}(${run.runId})`).send(entity(run));
      },
    );

    app.get(
      SET,
      {
        config: { permission: 'read' },
        schema: {
          summary: 'List import runs',
          description: `$filter on status, endpointCode, trigger, queuedAt, endedAt (eq, ne, gt, ge, lt, le joined by "and"); $top, $skip; $orderby=queuedAt desc (default) or asc. At most ${maxPageSize} per answer; more through @odata.nextLink.`,
          tags,
          querystring: ListQuery,
          response: { 200: ListSchema, 400: ErrorSchema },
        },
      },
      async (request) => {
        const filter = parseFilter(request.query.$filter, RUN_FILTERS);
        const orderby = (request.query.$orderby ?? 'queuedAt desc').trim().replace(/\s+/g, ' ');
        if (!['queuedAt', 'queuedAt asc', 'queuedAt desc'].includes(orderby))
          throw badRequest('invalidQuery', '$orderby supports queuedAt asc or queuedAt desc.');
        const page = parsePaging(request.query, maxPageSize);
        const rows = await listRuns(db, { filter, skip: page.skip, limit: page.limit + 1, descending: orderby.endsWith('desc') });
        const { value, nextLink } = pageResult(rows, page, requestedUrl(request));
        return { '@odata.context': CONTEXT, value, ...(nextLink !== undefined ? { '@odata.nextLink': nextLink } : {}) };
      },
    );

    app.get(
      `${SET}/:key`,
      {
        config: { permission: 'read' },
        schema: { summary: 'Read an import run', tags, params: KeyParams, response: { 200: EntitySchema, 404: ErrorSchema } },
      },
      async (request) => entity(await load(runKey(request.params.key))),
    );

    app.get(
      `${SET}/:key/pages`,
      {
        config: { permission: 'read' },
        schema: {
          summary: 'The pages an import run fetched: page number, URL (secrets redacted) and records fetched',
          tags,
          params: KeyParams,
          querystring: PagingQuery,
          response: { 200: PagesSchema, 400: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request) => {
        const run = await load(runKey(request.params.key));
        const page = parsePaging(request.query, maxPageSize);
        const rows = await listRunPages(db, run.runId, { skip: page.skip, limit: page.limit + 1 });
        const { value, nextLink } = pageResult(rows, page, requestedUrl(request));
        return {
          '@odata.context': `${CONTEXT}(${run.runId})/pages`,
          value,
          ...(nextLink !== undefined ? { '@odata.nextLink': nextLink } : {}),
        };
      },
    );
  };
}
