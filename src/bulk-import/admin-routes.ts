/**
 * The administrator actions of the Bulk Import API, beside its spec routes (routes.ts): cancel, reset,
 * resubmit and delete one request, download its payload, and the bulk actions on every request a filter
 * selects.
 */
import { Type } from 'typebox';
import { Readable } from 'node:stream';
import { principalLabel } from '../auth/model.js';
import type { RoutePlugin } from '../http/server.js';
import { parseFilter } from '../http/odata.js';
import { Deleted, ErrorSchema, KeyParams, literalUnion, ODATA_BODY, Integer } from '../http/schemas.js';
import { applyFilter } from '../storage/filter.js';
import { BULK_ACTIONS, BULK_OUTCOMES, bulkAct, MAX_BULK, type BulkAction } from './bulk-actions.js';
import { cancelRequest } from './cancel-request.js';
import { deleteRequest } from './delete-request.js';
import { toApiRequest } from './model.js';
import { REQUEST_COLUMN_OF, REQUEST_FILTERS } from './queries.js';
import { openPayload } from './read-payload.js';
import { resetRequest } from './reset-request.js';
import { resubmitRequest } from './resubmit-request.js';
import { AcceptedSchema, bulkImportRequests, type BulkImportRouteDeps } from './routes.js';

export type BulkImportAdminRouteDeps = Pick<BulkImportRouteDeps, 'db' | 'clock' | 'submitter' | 'wake'>;

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

/** Registered right after bulkImportRoutes: the OpenAPI document lists these routes after the spec's. */
export function bulkImportAdminRoutes(deps: BulkImportAdminRouteDeps): RoutePlugin {
  const db = deps.db;
  return (app) => {
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
