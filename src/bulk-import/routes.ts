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
import { findRequest, findRequestDetails, listRequests, REQUEST_COLUMN_OF, REQUEST_FILTERS } from './queries.js';
import type { Submitter } from './submit.js';
import { acceptStreamedBodies, RECEIVED, type ReceivedBody } from './submit-route.js';
import { principalLabel } from '../auth/model.js';
import { idempotencyKeyOf, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency.js';
import { resubmitRequest } from './resubmit-request.js';
import { Deleted, ErrorSchema, KeyParams, literalUnion, ODATA_BODY, Integer } from '../http/schemas.js';
import { Readable } from 'node:stream';
import { parseFilter } from '../http/odata.js';
import { applyFilter } from '../storage/filter.js';
import { BULK_ACTIONS, BULK_OUTCOMES, bulkAct, MAX_BULK, type BulkAction } from './bulk-actions.js';
import { deleteRequest } from './delete-request.js';
import { openPayload } from './read-payload.js';

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

const BulkBody = Type.Object(
  {
    filter: Type.String({
      description:
        'Which requests: the list\'s $filter, written the same way (status, integrationSortingOrder, submittedAt, submittedBy, processedAt; eq, ne, gt, ge, lt, le joined by "and"). An empty text selects every request.',
    }),
    top: Type.Optional(
      Integer({ minimum: 1, maximum: MAX_BULK, description: `At most this many requests in this call (default and most: ${MAX_BULK})` }),
    ),
    after: Type.Optional(Type.String({ format: 'uuid', description: 'Continue after this request id: the next of the previous answer' })),
  },
  ODATA_BODY,
);

const BulkResultSchema = Type.Object({
  action: literalUnion(BULK_ACTIONS),
  matched: Integer({ description: 'Requests the filter matched when the call began, on all pages' }),
  processed: Integer({ description: 'Requests this call took: the length of results' }),
  succeeded: Integer(),
  refused: Integer({ description: 'Requests whose status does not allow the action: each is reported with the reason and left as it was' }),
  results: Type.Array(
    Type.Object({
      requestId: Type.String({ format: 'uuid' }),
      outcome: literalUnion(BULK_OUTCOMES),
      status: Type.Union([Type.String(), Type.Null()], {
        description: 'The status after the action (null once deleted), or the status that refused it',
      }),
      newRequestId: Type.Union([Type.String(), Type.Null()], { description: 'Resubmit: the new request' }),
      error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()], {
        description: 'Why the request was refused: the error its single action answers',
      }),
    }),
  ),
  more: Type.Boolean({ description: 'Whether more requests after the last one taken match the filter' }),
  next: Type.Union([Type.String(), Type.Null()], { description: 'When more: the after of the next call' }),
});

const BULK_SUMMARY: Record<BulkAction, string> = {
  cancel: 'Cancel every Pending or Processing request a filter selects',
  reset: 'Reset every stuck Processing request a filter selects to Pending',
  resubmit: 'Resubmit every Failed or Cancelled request a filter selects as a new request',
  delete: 'Delete every ended request a filter selects, with its payload and errors',
};

/** The collection-bound action of a bulk action: `bulkImportRequests/Microsoft.NAV.bulkCancel`. */
export const bulkActionName = (action: BulkAction): string => `bulk${action[0]!.toUpperCase()}${action.slice(1)}`;

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
          summary: 'Cancel a Pending or Processing (stuck) request',
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
    app.delete(
      bulkImportRequests.itemPath,
      {
        config: bulkImportRequests.config('bulkImport'),
        schema: {
          summary: 'Delete an ended request with its payload, per-record errors and details',
          description:
            'A Completed, Failed or Cancelled request is deleted with everything stored with it (payload, chunks, per-record errors, the Idempotency-Keys that answer with it). A Pending or Processing request is refused with 409 requestNotEnded: cancel it first.',
          tags: ['Bulk Import API'],
          params: KeyParams,
          response: { 204: Deleted, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteRequest(db, bulkImportRequests.key(request.params.key));
        return reply.status(204).send(null);
      },
    );

    app.get(
      `${bulkImportRequests.itemPath}/payload`,
      {
        config: bulkImportRequests.config('bulkImport'),
        schema: {
          summary: 'Download the payload of a request',
          description:
            'The payload text exactly as submitted (a JSON text), as a download (Content-Disposition: attachment). It is streamed from storage one stored chunk at a time, so a payload of any size is never held whole.',
          tags: ['Bulk Import API'],
          params: KeyParams,
          response: {
            200: {
              description: 'The payload',
              content: { 'application/json': { schema: Type.Unknown({ description: 'The payload as submitted' }) } },
            },
            404: ErrorSchema,
          },
        },
      },
      async (request, reply) => {
        const id = bulkImportRequests.key(request.params.key);
        const payload = await openPayload(db, id);
        const stream = Readable.from(payload.bytes(), { objectMode: false });
        // A chunk gone meanwhile (the request deleted during the download): the connection is cut, so
        // the caller sees an incomplete body rather than a short one that looks whole.
        stream.on('error', (err) => request.log.warn({ err, requestId: id }, 'payload download ended early'));
        return reply
          .type('application/json; charset=utf-8')
          .header('content-disposition', `attachment; filename="${id}.json"`)
          .send(stream);
      },
    );

    for (const action of BULK_ACTIONS) {
      app.post(
        bulkImportRequests.collectionAction(bulkActionName(action)),
        {
          config: bulkImportRequests.config('bulkImport'),
          schema: {
            summary: BULK_SUMMARY[action],
            description: `Acts on the requests filter selects, at most top (${MAX_BULK}) per call, in order of requestId, each by the same rule as Microsoft.NAV.${action} on one request: a request its rule refuses is reported with the reason and left as it was. The answer says how many matched, the outcome of each request taken, and whether more remain (send next as after to continue).`,
            tags: ['Bulk Import API'],
            body: BulkBody,
            response: { 200: BulkResultSchema, 400: ErrorSchema },
          },
        },
        async (request) => {
          const filter = parseFilter(request.body.filter, REQUEST_FILTERS);
          const result = await bulkAct(db, action, {
            select: (query) => applyFilter(query, filter, REQUEST_COLUMN_OF),
            ...(request.body.top === undefined ? {} : { top: request.body.top }),
            ...(request.body.after === undefined ? {} : { after: request.body.after.toLowerCase() }),
            clock: deps.clock,
            actor: request.principal === undefined ? null : principalLabel(request.principal),
            checkIntegration: (sortingOrder) => deps.submitter.integration(sortingOrder),
          });
          if (result.succeeded > 0 && (action === 'reset' || action === 'resubmit')) deps.wake?.();
          return result;
        },
      );
    }
  };
}
