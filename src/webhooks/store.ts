/**
 * Webhooks and their deliveries in storage: the webhooks of an integration or endpoint (the signing
 * secret sealed, answered only as `secretIsSet`), the delivery log, a redelivery and a test event.
 */
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Clock } from '../core/clock.js';
import { invalidRequest, notFound } from '../core/errors.js';
import { applyFilter, type FilterClause } from '../storage/filter.js';
import type { Db } from '../storage/db.js';
import type { WebhookDeliveryRow, WebhookRow } from '../storage/schema.js';
import type { SecretBox } from '../rest-source/secrets.js';
import { redactUrl } from '../rest-source/redact.js';
import {
  DELIVERY_STATUSES,
  EVENT_TYPES,
  SECRET_PATTERN,
  SUBJECT_KINDS,
  type DeliveryStatus,
  type EventType,
  type SubjectKind,
} from './model.js';

/** A webhook as answers show it: never its secret. */
export interface Webhook {
  readonly webhookId: string;
  readonly integrationSortingOrder: number | null;
  readonly endpointCode: string | null;
  readonly url: string;
  readonly description: string;
  readonly enabled: boolean;
  readonly secretIsSet: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface WebhookInput {
  readonly integrationSortingOrder?: number | undefined;
  readonly endpointCode?: string | undefined;
  readonly url: string;
  readonly description?: string | undefined;
  readonly enabled?: boolean | undefined;
  /** `whsec_` and base64: what receivers verify with. Write-only. */
  readonly secret: string;
}

export interface WebhookChange {
  readonly url?: string | undefined;
  readonly description?: string | undefined;
  readonly enabled?: boolean | undefined;
  readonly secret?: string | undefined;
}

export interface Delivery {
  readonly deliveryId: string;
  readonly webhookId: string;
  readonly eventType: EventType;
  readonly subjectKind: SubjectKind;
  readonly subjectId: string | null;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly nextAttemptAt: string | null;
  readonly lastAttemptAt: string | null;
  readonly lastStatus: number | null;
  readonly lastError: string;
  readonly createdAt: string;
  readonly deliveredAt: string | null;
}

export const toWebhook = (row: Selectable<WebhookRow>): Webhook => ({
  webhookId: row.webhook_id,
  integrationSortingOrder: row.integration_sorting_order,
  endpointCode: row.endpoint_code,
  url: redactUrl(row.url),
  description: row.description,
  enabled: row.enabled === 1,
  secretIsSet: row.secret !== '',
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export const toDelivery = (row: Selectable<WebhookDeliveryRow>): Delivery => ({
  deliveryId: row.delivery_id,
  webhookId: row.webhook_id,
  eventType: row.event_type as EventType,
  subjectKind: row.subject_kind as SubjectKind,
  subjectId: row.subject_id,
  status: row.status as DeliveryStatus,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at,
  lastAttemptAt: row.last_attempt_at,
  lastStatus: row.last_status,
  lastError: row.last_error,
  createdAt: row.created_at,
  deliveredAt: row.delivered_at,
});

const MAX_URL = 2048;

/** Why a webhook URL is refused, or null: absolute http(s), no credentials in it. */
export function urlProblem(url: string): string | null {
  if (url.length > MAX_URL) return `url is longer than ${MAX_URL} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute http:// or https:// URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'url must be an absolute http:// or https:// URL';
  if (parsed.username !== '' || parsed.password !== '')
    return 'url must not carry credentials (user:password@); receivers check the signature instead';
  return null;
}

const secretProblem = (secret: string): string | null =>
  new RegExp(SECRET_PATTERN).test(secret) ? null : 'secret must be whsec_ followed by the base64 of 24 to 64 random bytes';

export async function createWebhook(db: Db, box: SecretBox, clock: Clock, input: WebhookInput): Promise<Webhook> {
  const owners = [input.integrationSortingOrder, input.endpointCode].filter((v) => v !== undefined).length;
  if (owners !== 1) throw invalidRequest('a webhook belongs to exactly one of integrationSortingOrder or endpointCode');
  const problem = urlProblem(input.url) ?? secretProblem(input.secret);
  if (problem !== null) throw invalidRequest(problem);
  if (input.integrationSortingOrder !== undefined) {
    const found = await db
      .selectFrom('ifw_integration')
      .select('sorting_order')
      .where('sorting_order', '=', input.integrationSortingOrder)
      .executeTakeFirst();
    if (found === undefined) throw invalidRequest(`integration ${input.integrationSortingOrder} does not exist`);
  }
  if (input.endpointCode !== undefined) {
    const found = await db.selectFrom('ifw_rest_endpoint').select('code').where('code', '=', input.endpointCode).executeTakeFirst();
    if (found === undefined) throw invalidRequest(`endpoint "${input.endpointCode}" does not exist`);
  }
  const now = clock().toISOString();
  const row = await db
    .insertInto('ifw_webhook')
    .values({
      webhook_id: randomUUID(),
      integration_sorting_order: input.integrationSortingOrder ?? null,
      endpoint_code: input.endpointCode ?? null,
      url: input.url,
      description: input.description ?? '',
      secret: box.seal(input.secret),
      enabled: input.enabled === false ? 0 : 1,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toWebhook(row);
}

export async function getWebhookRow(db: Db, webhookId: string): Promise<Selectable<WebhookRow>> {
  const row = await db.selectFrom('ifw_webhook').selectAll().where('webhook_id', '=', webhookId).executeTakeFirst();
  if (row === undefined) throw notFound(`No webhook '${webhookId}'.`);
  return row;
}

export async function updateWebhook(db: Db, box: SecretBox, clock: Clock, webhookId: string, change: WebhookChange): Promise<Webhook> {
  const problem =
    (change.url === undefined ? null : urlProblem(change.url)) ?? (change.secret === undefined ? null : secretProblem(change.secret));
  if (problem !== null) throw invalidRequest(problem);
  await getWebhookRow(db, webhookId);
  const row = await db
    .updateTable('ifw_webhook')
    .set({
      ...(change.url === undefined ? {} : { url: change.url }),
      ...(change.description === undefined ? {} : { description: change.description }),
      ...(change.enabled === undefined ? {} : { enabled: change.enabled ? 1 : 0 }),
      ...(change.secret === undefined ? {} : { secret: box.seal(change.secret) }),
      updated_at: clock().toISOString(),
    })
    .where('webhook_id', '=', webhookId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toWebhook(row);
}

/** Deletes a webhook and its delivery log. */
export async function deleteWebhook(db: Db, webhookId: string): Promise<void> {
  await getWebhookRow(db, webhookId);
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('ifw_webhook_delivery').where('webhook_id', '=', webhookId).execute();
    await trx.deleteFrom('ifw_webhook').where('webhook_id', '=', webhookId).execute();
  });
}

export const WEBHOOK_FILTERS = { integrationSortingOrder: 'integer', endpointCode: 'string', enabled: 'boolean' } as const;
const WEBHOOK_COLUMNS = { integrationSortingOrder: 'integration_sorting_order', endpointCode: 'endpoint_code', enabled: 'enabled' };

export async function listWebhooks(db: Db, options: { filter: readonly FilterClause[]; skip: number; limit: number }): Promise<Webhook[]> {
  const filter = options.filter.map((c) =>
    c.property === 'enabled' && typeof c.value === 'boolean' ? { ...c, value: c.value ? 1 : 0 } : c,
  );
  const rows = await applyFilter(db.selectFrom('ifw_webhook').selectAll(), filter, WEBHOOK_COLUMNS)
    .orderBy('created_at')
    .orderBy('webhook_id')
    .limit(options.limit)
    .offset(options.skip)
    .execute();
  return rows.map(toWebhook);
}

export const DELIVERY_FILTERS = {
  webhookId: 'string',
  subjectId: 'string',
  status: { oneOf: DELIVERY_STATUSES },
  eventType: { oneOf: EVENT_TYPES },
  subjectKind: { oneOf: SUBJECT_KINDS },
  createdAt: 'datetime',
} as const;
const DELIVERY_COLUMNS = {
  webhookId: 'webhook_id',
  subjectId: 'subject_id',
  status: 'status',
  eventType: 'event_type',
  subjectKind: 'subject_kind',
  createdAt: 'created_at',
};

export async function listDeliveries(
  db: Db,
  options: { filter: readonly FilterClause[]; skip: number; limit: number; descending?: boolean },
): Promise<Delivery[]> {
  const direction = options.descending === false ? 'asc' : 'desc';
  const rows = await applyFilter(db.selectFrom('ifw_webhook_delivery').selectAll(), options.filter, DELIVERY_COLUMNS)
    .orderBy('created_at', direction)
    .orderBy('delivery_id', direction)
    .limit(options.limit)
    .offset(options.skip)
    .execute();
  return rows.map(toDelivery);
}

/** The deliveries of one request or run, newest first. */
export async function deliveriesOf(db: Pick<Db, 'selectFrom'>, subjectId: string): Promise<Delivery[]> {
  const rows = await db
    .selectFrom('ifw_webhook_delivery')
    .selectAll()
    .where('subject_id', '=', subjectId)
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map(toDelivery);
}

export async function getDelivery(db: Db, deliveryId: string): Promise<Delivery> {
  const row = await db.selectFrom('ifw_webhook_delivery').selectAll().where('delivery_id', '=', deliveryId).executeTakeFirst();
  if (row === undefined) throw notFound(`No webhook delivery '${deliveryId}'.`);
  return toDelivery(row);
}

/**
 * Sends a delivery again, with the same id and body (a receiver that has it already ignores it):
 * Pending, due now, its attempts counted afresh. Any status may be redelivered.
 */
export async function redeliver(db: Db, clock: Clock, deliveryId: string): Promise<Delivery> {
  const row = await db
    .updateTable('ifw_webhook_delivery')
    .set({ status: 'Pending', attempts: 0, next_attempt_at: clock().toISOString(), delivered_at: null })
    .where('delivery_id', '=', deliveryId)
    .returningAll()
    .executeTakeFirst();
  if (row === undefined) throw notFound(`No webhook delivery '${deliveryId}'.`);
  return toDelivery(row);
}

/** A `webhook.test` event for one webhook, due now: what a receiver's first check needs. */
export async function sendTestEvent(db: Db, clock: Clock, webhookId: string): Promise<Delivery> {
  await getWebhookRow(db, webhookId);
  const now = clock().toISOString();
  const deliveryId = randomUUID();
  const payload = JSON.stringify({ type: 'webhook.test', timestamp: now, data: { webhookId } });
  const row = await db
    .insertInto('ifw_webhook_delivery')
    .values({
      delivery_id: deliveryId,
      webhook_id: webhookId,
      event_type: 'webhook.test',
      subject_kind: 'test',
      subject_id: null,
      payload,
      status: 'Pending',
      attempts: 0,
      next_attempt_at: now,
      last_error: '',
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toDelivery(row);
}

/**
 * Retention: deliveries that are done (Delivered, Failed) and were created before `cutoff` are
 * deleted, as ended requests are; a Pending one stays until it is delivered or given up.
 */
export async function deleteOldDeliveries(db: Db, cutoff: Date): Promise<number> {
  const result = await db
    .deleteFrom('ifw_webhook_delivery')
    .where('status', 'in', ['Delivered', 'Failed'])
    .where('created_at', '<', cutoff.toISOString())
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
