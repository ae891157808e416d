/** The Bulk Import API (spec section 4) and its administrator actions, as OData-style routes. */
import { SUBMIT_EXAMPLES } from './body-examples.js';
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { notFound } from '../core/errors.js';
import { entitySet } from '../http/entity-set.js';
import type { RoutePlugin } from '../http/server.js';
import type { Db } from '../storage/db.js';
import { cancelRequest } from './cancel-request.js';
import { resetRequest } from './reset-request.js';
import { REQUEST_STATUSES, toApiRequest } from './model.js';
import { findRequest, findRequestDetails, listRequests, REQUEST_FILTERS } from './queries.js';
import type { Submitter } from './submit.js';
import { acceptStreamedBodies, RECEIVED, type ReceivedBody } from './submit-route.js';
import { principalLabel } from '../auth/model.js';
import { idempotencyKeyOf, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency.js';
import { resubmitRequest } from './resubmit-request.js';
import { ErrorSchema, KeyParams, literalUnion, ODATA_BODY, Integer } from '../http/schemas.js';

export interface BulkImportRouteDeps {
  readonly db: Db;
  /** The largest body accepted (the server's body limit): a streamed body is held to it as it arrives. */
  readonly bodyLimitBytes: number;
  readonly clock: Clock;
  readonly submitter: Submitter;
  readonly maxPageSize: number;
  /** Called after an administrator action that leaves work for the processor. */
  readonly wake?: () => void;
}

/** The Bulk Import API's entity set: one request as the spec shows it, paged lists. */
export const bulkImportRequests = entitySet({
  name: 'bulkImportRequests',
  key: 'requestId',
  keyType: 'guid',
  noun: 'bulk import request',
  item: Type.Object({
    requestId: Type.String({ format: 'uuid' }),
    integrationSortingOrder: Integer(),
    status: literalUnion(REQUEST_STATUSES),
    submittedAt: Type.String({ format: 'date-time' }),
    processedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    recordCount: Integer(),
    errorMessage: Type.String(),
  }),
  listOptions: ['$filter', '$top', '$skip', '$orderby'],
});

const RecordErrorSchema = Type.Object({
  recordNo: Type.Union([Integer(), Type.Null()]),
  field: Type.Union([Type.String(), Type.Null()]),
  value: Type.Union([Type.String(), Type.Null()]),
  rule: Type.String(),
  message: Type.String(),
});

const details = bulkImportRequests.containsOne({
  name: 'details',
  key: 'requestId',
  item: Type.Object({
    requestId: Type.String(),
    integrationSortingOrder: Integer(),
    status: Type.String(),
    submittedAt: Type.String(),
    submittedBy: Type.Union([Type.String(), Type.Null()], {
      description: 'Who submitted it: user:<user name> or application:<client id>; null for requests stored before authentication existed',
    }),
    startedAt: Type.Union([Type.String(), Type.Null()]),
    processedAt: Type.Union([Type.String(), Type.Null()]),
    attempts: Integer(),
    payloadLength: Integer({ description: 'Length of the payload text in characters' }),
    recordCount: Integer(),
    insertedCount: Integer(),
    updatedCount: Integer(),
    skippedCount: Integer(),
    errorMessage: Type.String(),
    resubmittedFrom: Type.Union([Type.String(), Type.Null()], {
      description: 'The Failed or Cancelled request this one was resubmitted from (Microsoft.NAV.resubmit), or null',
    }),
    resubmittedAs: Type.Union([Type.String(), Type.Null()], {
      description: 'The request this one was resubmitted as, or null',
    }),
    errors: Type.Array(RecordErrorSchema),
  }),
});

/** The 202 of a submission (and of a resubmit): the new request's id, Pending, and when. */
const AcceptedSchema = Type.Object({ requestId: Type.String(), status: Type.Literal('Pending'), submittedAt: Type.String() });

const SubmitBody = Type.Object(
  {
    integrationSortingOrder: Integer({ description: 'Sorting Order of the integration that processes the payload' }),
    payload: Type.String({ description: 'The data as a JSON text inside a string' }),
  },
  ODATA_BODY,
);

export function bulkImportRoutes(deps: BulkImportRouteDeps): RoutePlugin {
  const db = deps.db;
  return async (app) => {
    // The submit route reads its body as a stream (submit-route.ts): its own scope, its own JSON parser.
    await app.register((plain, _options, registered) => {
      const scope = plain as unknown as typeof app;
      acceptStreamedBodies(scope, deps.submitter, deps.bodyLimitBytes);
      scope.post(
        bulkImportRequests.path,
        {
          config: { ...bulkImportRequests.config('bulkImport'), bodyExamples: SUBMIT_EXAMPLES },
          schema: {
            summary: 'Submit a bulk import request',
            description:
              'Answers 202 once the request is durably stored as Pending; the job queue processes it in the background. The body is read as it arrives: a large payload is stored in chunks and never held whole.',
            tags: ['Bulk Import API'],
            headers: Type.Object({
              'idempotency-key': Type.Optional(
                Type.String({
                  description: `Optional. A key of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters (a UUID is a good one). A repeat with the same key by the same caller within the window (IFW_IDEMPOTENCY_HOURS, 24 h by default) answers the first 202 body, with the header Idempotent-Replayed: true, and creates nothing; the same key with another body answers 422.`,
                }),
              ),
            }),
            body: SubmitBody,
            response: {
              202: AcceptedSchema,
              400: ErrorSchema,
              409: ErrorSchema,
              413: ErrorSchema,
              422: ErrorSchema,
            },
          },
          // A malformed key is refused before the body is read.
          onRequest: (request, _reply, done) => {
            try {
              idempotencyKeyOf(request.headers['idempotency-key']);
              done();
            } catch (err) {
              done(err as Error);
            }
          },
        },
        async (request, reply) => {
          const submittedBy = request.principal === undefined ? null : principalLabel(request.principal);
          const key = idempotencyKeyOf(request.headers['idempotency-key']);
          const idempotency = key === undefined ? undefined : { caller: submittedBy ?? '', key };
          const received = (request.body as ReceivedBody)[RECEIVED];
          const accepted =
            received === undefined
              ? await deps.submitter.submit({
                  integrationSortingOrder: request.body.integrationSortingOrder,
                  payload: request.body.payload,
                  submittedBy,
                  idempotency,
                })
              : await deps.submitter.submitReceived(request.body.integrationSortingOrder, received, submittedBy, idempotency);
          if (accepted.replayed === true) void reply.header('idempotent-replayed', 'true');
          return reply
            .status(202)
            .header('location', bulkImportRequests.url(accepted.requestId))
            .send({ requestId: accepted.requestId, status: accepted.status, submittedAt: accepted.submittedAt });
        },
      );
      registered();
    });

    app.get(
      bulkImportRequests.itemPath,
      {
        config: bulkImportRequests.config('bulkImport'),
        schema: {
          summary: 'Poll a bulk import request',
          tags: ['Bulk Import API'],
          params: KeyParams,
          response: { 200: bulkImportRequests.Entity, 404: ErrorSchema },
        },
      },
      async (request) => {
        const id = bulkImportRequests.key(request.params.key);
        const row = await findRequest(db, id);
        if (row === undefined)
          throw notFound(`No bulk import request ${id}; it may never have existed or was deleted after the retention period.`);
        return bulkImportRequests.entity(toApiRequest(row));
      },
    );

    app.get(
      bulkImportRequests.path,
      {
        config: bulkImportRequests.config('bulkImport'),
        schema: {
          summary: 'List bulk import requests',
          description: `Each item is the request as the poll answers it (the spec's properties). $filter on status, integrationSortingOrder, submittedAt, submittedBy (who submitted it, shown in the details), processedAt (eq, ne, gt, ge, lt, le joined by "and"); $top, $skip; $orderby=submittedAt asc|desc. At most ${deps.maxPageSize} per answer; more through @odata.nextLink.`,
          tags: ['Bulk Import API'],
          querystring: bulkImportRequests.ListQuery,
          response: { 200: bulkImportRequests.List, 400: ErrorSchema },
        },
      },
      async (request) =>
        bulkImportRequests.page(request, {
          maxPageSize: deps.maxPageSize,
          filter: REQUEST_FILTERS,
          orderBy: { by: 'submittedAt', default: 'asc' },
          rows: ({ filter, orderBy, skip, limit }) => listRequests(db, { filter, skip, limit, descending: orderBy[0]!.descending }),
          item: toApiRequest,
        }),
    );

    app.get(
      details.path,
      {
        config: details.config('bulkImport'),
        schema: {
          summary: 'Details of a request: inserted, updated and skipped counts, attempts and per-record errors',
          tags: ['Bulk Import API'],
          params: KeyParams,
          response: { 200: details.Entity, 404: ErrorSchema },
        },
      },
      async (request) => {
        const id = bulkImportRequests.key(request.params.key);
        const found = await findRequestDetails(db, id);
        if (found === undefined) throw notFound(`No bulk import request ${id}.`);
        return details.entity(found);
      },
    );

    app.post(
      bulkImportRequests.action('cancel'),
      {
        config: bulkImportRequests.config('bulkImport'),
        schema: {
          summary: 'Cancel a Pending or Processing request',
          description:
            'Answers 200 with the request, Cancelled. A Processing request whose records are being written stops at its next batch and its import rolls back: nothing of it is written, and the answer does not wait for the import. 409 when the request has already ended (also when its import completed in the instant before).',
          tags: ['Bulk Import API'],
          params: KeyParams,
          response: { 200: bulkImportRequests.Entity, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request) =>
        bulkImportRequests.entity(toApiRequest(await cancelRequest(db, bulkImportRequests.key(request.params.key), deps.clock))),
    );

    app.post(
      bulkImportRequests.action('resubmit'),
      {
        config: bulkImportRequests.config('bulkImport'),
        schema: {
          summary: 'Resubmit a Failed or Cancelled request as a new request',
          description:
            "Creates a new Pending request with the same payload and integration, as the spec advises for a Failed request (never reuse its requestId), and answers its 202 like a submission. The new request's details name this one (resubmittedFrom) and this one's name the new (resubmittedAs); a request is resubmitted once (409 names the request it became).",
          tags: ['Bulk Import API'],
          params: KeyParams,
          response: {
            202: AcceptedSchema,
            400: ErrorSchema,
            404: ErrorSchema,
            409: ErrorSchema,
          },
        },
      },
      async (request, reply) => {
        const accepted = await resubmitRequest(db, bulkImportRequests.key(request.params.key), {
          clock: deps.clock,
          submittedBy: request.principal === undefined ? null : principalLabel(request.principal),
          checkIntegration: (sortingOrder) => deps.submitter.integration(sortingOrder),
        });
        deps.wake?.();
        return reply.status(202).header('location', bulkImportRequests.url(accepted.requestId)).send(accepted);
      },
    );

    app.post(
      bulkImportRequests.action('reset'),
      {
        config: bulkImportRequests.config('bulkImport'),
        schema: {
          summary: 'Put a stuck Processing request back to Pending',
          tags: ['Bulk Import API'],
          params: KeyParams,
          response: { 200: bulkImportRequests.Entity, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request) => {
        const row = await resetRequest(db, bulkImportRequests.key(request.params.key));
        deps.wake?.();
        return bulkImportRequests.entity(toApiRequest(row));
      },
    );
  };
}
