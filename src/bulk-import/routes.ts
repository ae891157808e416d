/** The Bulk Import API (spec section 4) and its administrator actions, as OData-style routes. */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { badRequest, notFound } from '../core/errors.js';
import type { RoutePlugin } from '../http/server.js';
import { API_BASE, pageResult, parseFilter, parseGuidKey, parsePaging, requestedUrl } from '../http/odata.js';
import type { Database } from '../storage/database.js';
import { cancelRequest } from './cancel-request.js';
import { resetRequest } from './reset-request.js';
import { toApiRequest, type RequestSummaryRow } from './model.js';
import { findRequest, findRequestDetails, listRequests, REQUEST_FILTERS } from './queries.js';
import type { Submitter } from './submit.js';
import { acceptStreamedBodies, RECEIVED, type ReceivedBody } from './submit-route.js';
import { principalLabel } from '../auth/model.js';
import { ErrorSchema, KeyParams } from '../http/schemas.js';

export interface BulkImportRouteDeps {
  readonly db: Database;
  /** The largest body accepted (the server's body limit): a streamed body is held to it as it arrives. */
  readonly bodyLimitBytes: number;
  readonly clock: Clock;
  readonly submitter: Submitter;
  readonly maxPageSize: number;
  /** Called after an administrator action that leaves work for the processor. */
  readonly wake?: () => void;
}

const SET = `${API_BASE}/bulkImportRequests`;
const CONTEXT = `${API_BASE}/$metadata#bulkImportRequests`;

const RequestSchema = Type.Object({
  requestId: Type.String({ format: 'uuid' }),
  integrationSortingOrder: Type.Integer(),
  status: Type.Union([
    Type.Literal('Pending'),
    Type.Literal('Processing'),
    Type.Literal('Completed'),
    Type.Literal('Failed'),
    Type.Literal('Cancelled'),
  ]),
  submittedAt: Type.String({ format: 'date-time' }),
  processedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  recordCount: Type.Integer(),
  errorMessage: Type.String(),
});

const EntitySchema = Type.Object({ '@odata.context': Type.String(), ...RequestSchema.properties });

const ListSchema = Type.Object({
  '@odata.context': Type.String(),
  value: Type.Array(RequestSchema),
  '@odata.nextLink': Type.Optional(Type.String()),
});

const RecordErrorSchema = Type.Object({
  recordNo: Type.Union([Type.Integer(), Type.Null()]),
  field: Type.Union([Type.String(), Type.Null()]),
  value: Type.Union([Type.String(), Type.Null()]),
  rule: Type.String(),
  message: Type.String(),
});

const DetailsSchema = Type.Object({
  '@odata.context': Type.String(),
  requestId: Type.String(),
  integrationSortingOrder: Type.Integer(),
  status: Type.String(),
  submittedAt: Type.String(),
  submittedBy: Type.Union([Type.String(), Type.Null()], {
    description: 'Who submitted it: user:<user name> or application:<client id>; null for requests stored before authentication existed',
  }),
  startedAt: Type.Union([Type.String(), Type.Null()]),
  processedAt: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Integer(),
  payloadLength: Type.Integer({ description: 'Length of the payload text in characters' }),
  recordCount: Type.Integer(),
  insertedCount: Type.Integer(),
  updatedCount: Type.Integer(),
  skippedCount: Type.Integer(),
  errorMessage: Type.String(),
  errors: Type.Array(RecordErrorSchema),
});

const SubmitBody = Type.Object(
  {
    integrationSortingOrder: Type.Integer({ description: 'Sorting Order of the integration that processes the payload' }),
    payload: Type.String({ description: 'The data as a JSON text inside a string' }),
  },
  // OData clients may annotate bodies (`@odata.type`); anything else unknown is refused.
  { additionalProperties: false, patternProperties: { '^@odata\\.': {} } },
);

const entity = (row: RequestSummaryRow) => ({ '@odata.context': `${CONTEXT}/$entity`, ...toApiRequest(row) });

function requestKey(raw: string): string {
  const id = parseGuidKey(raw);
  if (id === null) throw notFound(`No bulk import request ${raw.replace(/^\(|\)$/g, '')}: a requestId is a GUID.`);
  return id;
}

export function bulkImportRoutes(deps: BulkImportRouteDeps): RoutePlugin {
  const db = deps.db.kysely;
  return async (app) => {
    // The submit route reads its body as a stream (submit-route.ts): its own scope, its own JSON parser.
    await app.register((plain, _options, registered) => {
      const scope = plain as unknown as typeof app;
      acceptStreamedBodies(scope, deps.submitter, deps.bodyLimitBytes);
      scope.post(
        SET,
        {
          config: { permission: 'bulkImport' },
          schema: {
            summary: 'Submit a bulk import request',
            description:
              'Answers 202 once the request is durably stored as Pending; the job queue processes it in the background. The body is read as it arrives: a large payload is stored in chunks and never held whole.',
            tags: ['Bulk Import API'],
            body: SubmitBody,
            response: {
              202: Type.Object({ requestId: Type.String(), status: Type.Literal('Pending'), submittedAt: Type.String() }),
              400: ErrorSchema,
              413: ErrorSchema,
            },
          },
        },
        async (request, reply) => {
          const submittedBy = request.principal === undefined ? null : principalLabel(request.principal);
          const received = (request.body as ReceivedBody)[RECEIVED];
          const accepted =
            received === undefined
              ? await deps.submitter.submit({
                  integrationSortingOrder: request.body.integrationSortingOrder,
                  payload: request.body.payload,
                  submittedBy,
                })
              : await deps.submitter.submitReceived(request.body.integrationSortingOrder, received, submittedBy);
          return reply.status(202).header('location', `${SET}(${accepted.requestId})`).send(accepted);
        },
      );
      registered();
    });

    app.get(
      `${SET}/:key`,
      {
        config: { permission: 'bulkImport' },
        schema: {
          summary: 'Poll a bulk import request',
          tags: ['Bulk Import API'],
          params: KeyParams,
          response: { 200: EntitySchema, 404: ErrorSchema },
        },
      },
      async (request) => {
        const id = requestKey(request.params.key);
        const row = await findRequest(db, id);
        if (row === undefined)
          throw notFound(`No bulk import request ${id}; it may never have existed or was deleted after the retention period.`);
        return entity(row);
      },
    );

    app.get(
      SET,
      {
        config: { permission: 'bulkImport' },
        schema: {
          summary: 'List bulk import requests',
          description: `Each item is the request as the poll answers it (the spec's properties). $filter on status, integrationSortingOrder, submittedAt, submittedBy (who submitted it, shown in the details), processedAt (eq, ne, gt, ge, lt, le joined by "and"); $top, $skip; $orderby=submittedAt asc|desc. At most ${deps.maxPageSize} per answer; more through @odata.nextLink.`,
          tags: ['Bulk Import API'],
          querystring: Type.Object(
            {
              $filter: Type.Optional(Type.String()),
              $top: Type.Optional(Type.String()),
              $skip: Type.Optional(Type.String()),
              $orderby: Type.Optional(Type.String()),
            },
            { additionalProperties: false },
          ),
          response: { 200: ListSchema, 400: ErrorSchema },
        },
      },
      async (request) => {
        const filter = parseFilter(request.query.$filter, REQUEST_FILTERS);
        const orderby = (request.query.$orderby ?? 'submittedAt asc').trim().replace(/\s+/g, ' ');
        if (!['submittedAt', 'submittedAt asc', 'submittedAt desc'].includes(orderby)) {
          throw badRequest('invalidQuery', '$orderby supports submittedAt asc or submittedAt desc.');
        }
        const page = parsePaging(request.query, deps.maxPageSize);
        const rows = await listRequests(db, { filter, skip: page.skip, limit: page.limit + 1, descending: orderby.endsWith('desc') });
        const self = requestedUrl(request);
        const { value, nextLink } = pageResult(rows, page, self);
        return {
          '@odata.context': CONTEXT,
          value: value.map(toApiRequest),
          ...(nextLink !== undefined ? { '@odata.nextLink': nextLink } : {}),
        };
      },
    );

    app.get(
      `${SET}/:key/details`,
      {
        config: { permission: 'bulkImport' },
        schema: {
          summary: 'Details of a request: inserted, updated and skipped counts, attempts and per-record errors',
          tags: ['Bulk Import API'],
          params: KeyParams,
          response: { 200: DetailsSchema, 404: ErrorSchema },
        },
      },
      async (request) => {
        const id = requestKey(request.params.key);
        const details = await findRequestDetails(db, id);
        if (details === undefined) throw notFound(`No bulk import request ${id}.`);
        return { '@odata.context': `${CONTEXT}/details/$entity`, ...details };
      },
    );

    app.post(
      `${SET}/:key/Microsoft.NAV.cancel`,
      {
        config: { permission: 'bulkImport' },
        schema: {
          summary: 'Cancel a Pending or Processing (stuck) request',
          tags: ['Bulk Import API'],
          params: KeyParams,
          response: { 200: EntitySchema, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request) => entity(await cancelRequest(db, requestKey(request.params.key), deps.clock)),
    );

    app.post(
      `${SET}/:key/Microsoft.NAV.reset`,
      {
        config: { permission: 'bulkImport' },
        schema: {
          summary: 'Put a stuck Processing request back to Pending',
          tags: ['Bulk Import API'],
          params: KeyParams,
          response: { 200: EntitySchema, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request) => {
        const row = await resetRequest(db, requestKey(request.params.key));
        deps.wake?.();
        return entity(row);
      },
    );
  };
}
