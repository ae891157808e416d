/**
 * Import runs over HTTP: start a run of a REST API endpoint (`restApiEndpoints('<code>')/Microsoft.NAV.run`,
 * 202 with the Queued run), list runs, read one, cancel one, and list its pages and per-record errors. Runs execute on the job queue's
 * thread, never here: this process only queues the run and wakes the queue.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { notFound } from '../core/errors.js';
import { STOP_REASONS } from '../pagination/index.js';
import { RUN_STATUSES, RUN_TRIGGERS, type ImportRun } from './model.js';
import { getRun, listRunPages, listRuns, RUN_FILTERS } from './queries.js';
import { queueEndpointRun } from './queue-endpoint-run.js';
import { cancelRun } from './cancel-run.js';
import { listRunErrors } from './run-errors.js';
import type { Db } from '../storage/db.js';
import { entitySet } from '../http/entity-set.js';
import type { RoutePlugin } from '../http/server.js';
import { ErrorSchema, KeyParams, literalUnion, Integer } from '../http/schemas.js';
import { restApiEndpoints } from '../rest-source/route-schemas.js';

export interface ImportRunRouteDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** Wakes the job queue after a run was queued; absent when this process runs no workers. */
  readonly wake?: () => void;
  /** Largest page of a list answer (default 100). */
  readonly maxPageSize?: number;
}

const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

const importRuns = entitySet({
  name: 'importRuns',
  key: 'runId',
  keyType: 'guid',
  noun: 'import run',
  item: Type.Object({
    runId: Type.String({ format: 'uuid' }),
    endpointCode: Type.String(),
    integrationSortingOrder: Integer(),
    trigger: literalUnion(RUN_TRIGGERS),
    status: literalUnion(RUN_STATUSES),
    queuedAt: Type.String({ format: 'date-time' }),
    startedAt: Timestamp,
    endedAt: Timestamp,
    durationMs: Type.Union([Integer(), Type.Null()]),
    pagesFetched: Integer({ description: 'Pages fetched, also a page whose next link failed the run' }),
    recordsFetched: Integer({
      description: 'Records received from the endpoint, all pages (what was written is insertedCount + updatedCount)',
    }),
    insertedCount: Integer({ description: 'Records written as new rows; 0 unless Completed' }),
    updatedCount: Integer({ description: 'Records that updated an existing row; 0 unless Completed' }),
    skippedCount: Integer({ description: "Records left out for an error (the integration's onRecordError skip); 0 unless Completed" }),
    stopReason: Type.Union([Type.String(), Type.Null()], {
      description: `One of ${STOP_REASONS.join(', ')}`,
    }),
    stopDetail: Type.String({ description: 'Why fetching stopped, as a sentence' }),
    warnings: Type.Array(Type.String(), {
      description:
        'Plain sentences, each with its likely fix: why fetching may have stopped short (a page smaller than Page Size although the API says more follow, Max Pages reached, records not countable, a next link the path misses). A Completed run with warnings is shown as "Completed with warnings"; status stays Completed',
    }),
    errorMessage: Type.String({
      description:
        "'' when there is no error. A record error names the record's page and place: record 12 (page 3, record 2): field \"name\" is required",
    }),
    attempts: Integer(),
  }),
  listOptions: ['$filter', '$top', '$skip', '$orderby'],
});
const pages = importRuns.containsMany({
  name: 'pages',
  key: 'pageNo',
  keyType: 'integer',
  noun: 'import run page',
  keyParam: 'pageKey',
  item: Type.Object({
    pageNo: Integer(),
    url: Type.String({ description: 'The URL called, secrets redacted' }),
    recordsFetched: Integer({ description: 'Records received on the page' }),
  }),
  listOptions: ['$top', '$skip'],
});
const errors = importRuns.containsMany({
  name: 'errors',
  key: 'seq',
  keyType: 'integer',
  noun: 'import run error',
  keyParam: 'errorKey',
  item: Type.Object({
    seq: Integer({ description: 'Order of the error, from 1' }),
    recordNo: Type.Union([Integer(), Type.Null()], {
      description: "The record's number in the run (all pages), or null for an error of no record",
    }),
    pageNo: Type.Union([Integer(), Type.Null()], { description: 'The page the record came from' }),
    recordOnPage: Type.Union([Integer(), Type.Null()], { description: "The record's place on that page, from 1" }),
    field: Type.Union([Type.String(), Type.Null()]),
    value: Type.Union([Type.String(), Type.Null()], { description: 'JSON of the offending value, shortened' }),
    rule: Type.String(),
    message: Type.String(),
  }),
  listOptions: ['$top', '$skip'],
});

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
      restApiEndpoints.action('run'),
      {
        config: restApiEndpoints.config('runImports'),
        schema: {
          summary: 'Start an import run of a REST API endpoint',
          description: 'Answers 202 with the Queued run (poll it at the Location); 409 while the endpoint has a run Queued or Running.',
          tags,
          params: KeyParams,
          response: { 202: importRuns.Entity, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        const code = restApiEndpoints.key(request.params.key);
        const run = await queueEndpointRun(db, code, 'manual', deps.clock());
        deps.wake?.();
        return reply.status(202).header('location', importRuns.url(run.runId)).send(importRuns.entity(run));
      },
    );

    app.get(
      importRuns.path,
      {
        config: importRuns.config('read'),
        schema: {
          summary: 'List import runs',
          description: `$filter on status, endpointCode, trigger, queuedAt, endedAt (eq, ne, gt, ge, lt, le joined by "and"); $top, $skip; $orderby=queuedAt desc (default) or asc. At most ${maxPageSize} per answer; more through @odata.nextLink.`,
          tags,
          querystring: importRuns.ListQuery,
          response: { 200: importRuns.List, 400: ErrorSchema },
        },
      },
      async (request) =>
        importRuns.page(request, {
          maxPageSize,
          filter: RUN_FILTERS,
          orderBy: { by: 'queuedAt', default: 'desc' },
          rows: ({ filter, orderBy, skip, limit }) => listRuns(db, { filter, skip, limit, descending: orderBy[0]!.descending }),
        }),
    );

    app.get(
      importRuns.itemPath,
      {
        config: importRuns.config('read'),
        schema: { summary: 'Read an import run', tags, params: KeyParams, response: { 200: importRuns.Entity, 404: ErrorSchema } },
      },
      async (request) => importRuns.entity(await load(importRuns.key(request.params.key))),
    );

    app.post(
      importRuns.action('cancel'),
      {
        config: importRuns.config('runImports'),
        schema: {
          summary: 'Cancel a Queued or Running import run',
          description:
            'Answers 200 with the run, Cancelled. A Running run stops fetching at its next page, and an import under way stops at its next batch and rolls back: nothing of the run is written. 409 when the run has already ended.',
          tags,
          params: KeyParams,
          response: { 200: importRuns.Entity, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request) => importRuns.entity(await cancelRun(db, importRuns.key(request.params.key), deps.clock)),
    );

    app.get(
      errors.path,
      {
        config: errors.config('read'),
        schema: {
          summary: 'The per-record errors of an import run (the first 1 000), each with the page and place its record came from',
          tags,
          params: KeyParams,
          querystring: errors.ListQuery,
          response: { 200: errors.List, 400: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request) => {
        const run = await load(importRuns.key(request.params.key));
        return errors.page(request, run.runId, { maxPageSize, rows: ({ skip, limit }) => listRunErrors(db, run.runId, { skip, limit }) });
      },
    );

    app.get(
      pages.path,
      {
        config: pages.config('read'),
        schema: {
          summary: 'The pages an import run fetched: page number, URL (secrets redacted) and records fetched',
          tags,
          params: KeyParams,
          querystring: pages.ListQuery,
          response: { 200: pages.List, 400: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request) => {
        const run = await load(importRuns.key(request.params.key));
        return pages.page(request, run.runId, { maxPageSize, rows: ({ skip, limit }) => listRunPages(db, run.runId, { skip, limit }) });
      },
    );
  };
}
