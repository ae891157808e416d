/**
 * Webhooks in the API: entity set `webhooks` (of an integration or a REST endpoint; the secret
 * write-only, answered as `secretIsSet`) with the action `sendTestEvent`, and entity set
 * `webhookDeliveries` (the delivery log: one event for one webhook) with the action `redeliver`.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { entitySet } from '../http/entity-set.js';
import type { RoutePlugin } from '../http/server.js';
import { Deleted, ErrorSchema, Integer, KeyParams, literalUnion, ODATA_BODY } from '../http/schemas.js';
import type { Db } from '../storage/db.js';
import type { SecretBox } from '../rest-source/secrets.js';
import { DELIVERY_STATUSES, EVENT_TYPES, SECRET_PATTERN, SUBJECT_KINDS } from './model.js';
import {
  createWebhook,
  deleteWebhook,
  DELIVERY_FILTERS,
  getDelivery,
  getWebhookRow,
  listDeliveries,
  listWebhooks,
  redeliver,
  sendTestEvent,
  toWebhook,
  updateWebhook,
  WEBHOOK_FILTERS,
} from './store.js';

export interface WebhookRouteDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly secrets: () => SecretBox;
  readonly maxPageSize: number;
}

const DateTime = Type.String({ format: 'date-time' });
const NullableDateTime = Type.Union([DateTime, Type.Null()]);

export const webhooks = entitySet({
  name: 'webhooks',
  key: 'webhookId',
  keyType: 'guid',
  noun: 'webhook',
  item: Type.Object({
    webhookId: Type.String({ format: 'uuid' }),
    integrationSortingOrder: Type.Union([Integer(), Type.Null()], {
      description: 'The integration whose requests (and runs) it is told of',
    }),
    endpointCode: Type.Union([Type.String(), Type.Null()], { description: 'The REST endpoint whose runs it is told of' }),
    url: Type.String({ description: 'Where events are POSTed (secret query values redacted)' }),
    description: Type.String(),
    enabled: Type.Boolean(),
    secretIsSet: Type.Boolean({ description: 'The signing secret is write-only' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  }),
  listOptions: ['$filter', '$top', '$skip'],
});

export const webhookDeliveries = entitySet({
  name: 'webhookDeliveries',
  key: 'deliveryId',
  keyType: 'string',
  noun: 'webhook delivery',
  item: Type.Object({
    deliveryId: Type.String({ description: "The event's webhook-id header: the same on every attempt and redelivery" }),
    webhookId: Type.String({ format: 'uuid' }),
    eventType: literalUnion(EVENT_TYPES),
    subjectKind: literalUnion(SUBJECT_KINDS),
    subjectId: Type.Union([Type.String(), Type.Null()], { description: 'The request or run the event is about; null for a test event' }),
    status: literalUnion(DELIVERY_STATUSES),
    attempts: Integer(),
    nextAttemptAt: NullableDateTime,
    lastAttemptAt: NullableDateTime,
    lastStatus: Type.Union([Integer(), Type.Null()], {
      description: "The receiver's HTTP status at the last attempt; null when it did not answer",
    }),
    lastError: Type.String(),
    createdAt: DateTime,
    deliveredAt: NullableDateTime,
  }),
  listOptions: ['$filter', '$top', '$skip', '$orderby'],
});

const Url = Type.String({ maxLength: 2048, description: 'Absolute http:// or https:// URL, without credentials' });
const Secret = Type.String({
  pattern: SECRET_PATTERN,
  description: 'The signing secret, whsec_ and the base64 of 24 to 64 random bytes (Standard Webhooks); write-only',
});
const Description = Type.String({ maxLength: 200 });

const NewWebhookBody = Type.Object(
  {
    integrationSortingOrder: Type.Optional(Integer({ description: 'One of integrationSortingOrder or endpointCode' })),
    endpointCode: Type.Optional(Type.String({ maxLength: 100 })),
    url: Url,
    secret: Secret,
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean()),
  },
  ODATA_BODY,
);
const WebhookPatchBody = Type.Object(
  {
    url: Type.Optional(Url),
    secret: Type.Optional(Secret),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean()),
  },
  ODATA_BODY,
);

export function webhookRoutes(deps: WebhookRouteDeps): RoutePlugin {
  const { db, clock, secrets, maxPageSize } = deps;
  const tags = ['Webhooks'];
  const read = webhooks.config('read');
  const configure = webhooks.config('configure');
  const readDeliveries = webhookDeliveries.config('read');
  const responses = { 200: webhooks.Entity, 400: ErrorSchema, 404: ErrorSchema };
  return (app) => {
    app.get(
      webhooks.path,
      {
        config: read,
        schema: {
          summary: 'List webhooks',
          description: `$filter on integrationSortingOrder, endpointCode, enabled; $top, $skip. At most ${maxPageSize} per answer.`,
          tags,
          querystring: webhooks.ListQuery,
          response: { 200: webhooks.List, 400: ErrorSchema },
        },
      },
      (request) =>
        webhooks.page(request, {
          maxPageSize,
          filter: WEBHOOK_FILTERS,
          rows: ({ filter, skip, limit }) => listWebhooks(db, { filter, skip, limit }),
        }),
    );
    app.get(
      webhooks.itemPath,
      {
        config: read,
        schema: { summary: 'Read a webhook', tags, params: KeyParams, response: { 200: webhooks.Entity, 404: ErrorSchema } },
      },
      async (request) => webhooks.entity(toWebhook(await getWebhookRow(db, webhooks.key(request.params.key)))),
    );
    app.post(
      webhooks.path,
      {
        config: configure,
        schema: {
          summary: 'Add a webhook to an integration or a REST endpoint',
          description:
            'Told when a bulk import request or an import run ends (Completed, Failed, Cancelled), signed per Standard Webhooks.',
          tags,
          body: NewWebhookBody,
          response: { 201: webhooks.Entity, 400: ErrorSchema },
        },
      },
      async (request, reply) => {
        const webhook = await createWebhook(db, secrets(), clock, request.body);
        return reply.status(201).header('location', webhooks.url(webhook.webhookId)).send(webhooks.entity(webhook));
      },
    );
    app.patch(
      webhooks.itemPath,
      {
        config: configure,
        schema: {
          summary: 'Change a webhook: url, secret, description, enabled',
          tags,
          params: KeyParams,
          body: WebhookPatchBody,
          response: responses,
        },
      },
      async (request) => webhooks.entity(await updateWebhook(db, secrets(), clock, webhooks.key(request.params.key), request.body)),
    );
    app.delete(
      webhooks.itemPath,
      {
        config: configure,
        schema: { summary: 'Delete a webhook and its delivery log', tags, params: KeyParams, response: { 204: Deleted, 404: ErrorSchema } },
      },
      async (request, reply) => {
        await deleteWebhook(db, webhooks.key(request.params.key));
        return reply.status(204).send(null);
      },
    );
    app.post(
      webhooks.action('sendTestEvent'),
      {
        // It answers a delivery: the key $metadata gives that answer is a delivery's.
        config: webhookDeliveries.config('configure'),
        schema: {
          summary: 'Send a webhook.test event to the webhook now (its delivery is answered)',
          tags,
          params: KeyParams,
          response: { 200: webhookDeliveries.Entity, 404: ErrorSchema },
        },
      },
      async (request) => webhookDeliveries.entity(await sendTestEvent(db, clock, webhooks.key(request.params.key))),
    );

    app.get(
      webhookDeliveries.path,
      {
        config: readDeliveries,
        schema: {
          summary: 'List webhook deliveries (the delivery log)',
          description: `$filter on webhookId, subjectId (a request or run id), status, eventType, subjectKind, createdAt; $top, $skip; $orderby=createdAt asc|desc (default desc). At most ${maxPageSize} per answer.`,
          tags,
          querystring: webhookDeliveries.ListQuery,
          response: { 200: webhookDeliveries.List, 400: ErrorSchema },
        },
      },
      (request) =>
        webhookDeliveries.page(request, {
          maxPageSize,
          filter: DELIVERY_FILTERS,
          orderBy: { by: 'createdAt', default: 'desc' },
          rows: ({ filter, orderBy, skip, limit }) => listDeliveries(db, { filter, skip, limit, descending: orderBy[0]!.descending }),
        }),
    );
    app.get(
      webhookDeliveries.itemPath,
      {
        config: readDeliveries,
        schema: {
          summary: 'Read a webhook delivery',
          tags,
          params: KeyParams,
          response: { 200: webhookDeliveries.Entity, 404: ErrorSchema },
        },
      },
      async (request) => webhookDeliveries.entity(await getDelivery(db, webhookDeliveries.key(request.params.key))),
    );
    app.post(
      webhookDeliveries.action('redeliver'),
      {
        config: webhookDeliveries.config('configure'),
        schema: {
          summary: 'Send a delivery again, with the same id and body, now',
          tags,
          params: KeyParams,
          response: { 200: webhookDeliveries.Entity, 404: ErrorSchema },
        },
      },
      async (request) => webhookDeliveries.entity(await redeliver(db, clock, webhookDeliveries.key(request.params.key))),
    );
  };
}
