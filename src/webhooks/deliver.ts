/**
 * Sending the outbox (outbox.ts): the due deliveries, each POSTed once per attempt with the Standard
 * Webhooks headers, under the REST source's outbound rules (timeouts, the address check of an
 * administrator's chosen origin, no redirect followed, no credentials but the signature). A failure
 * waits its turn in RETRY_SCHEDULE_MS; the last one leaves the delivery Failed, to be redelivered by hand.
 *
 * It runs on the job queue's `webhooks` lane, never on the import path: a slow or dead receiver delays
 * only other deliveries. One runner holds the lane's entry at a time, so a delivery is not sent twice
 * at once; a crash between a receiver's 2xx and the Delivered write sends it again (at least once, with
 * the same `webhook-id`).
 */
import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { Metrics } from '../core/metrics.js';
import type { Db } from '../storage/db.js';
import { describeAnswer, exchange, withHttp, type HttpOptions } from '../rest-source/http-client.js';
import type { OutboundPolicy } from '../rest-source/outbound-policy.js';
import type { SecretBox } from '../rest-source/secrets.js';
import { DELIVERY_TIMEOUT_MS, MAX_ATTEMPTS, RETRY_SCHEDULE_MS, secretKey } from './model.js';

export interface DeliveryContext {
  readonly db: Db;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Opens the webhooks' sealed secrets. */
  readonly secrets: () => SecretBox;
  readonly outbound: OutboundPolicy;
  readonly metrics?: Metrics | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Between batches: false once the runner stops. */
  readonly keepGoing?: () => Promise<boolean>;
  /** Tests: where requests go instead of a guarded agent per delivery. */
  readonly dispatcher?: HttpOptions['dispatcher'];
}

/** Deliveries sent at once: a slow receiver holds one of them, not the others. */
const CONCURRENCY = 8;
const BATCH = 32;

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the secret's bytes. */
export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

interface Due {
  readonly delivery_id: string;
  readonly webhook_id: string;
  readonly event_type: string;
  readonly subject_kind: string;
  readonly subject_id: string | null;
  readonly payload: string;
  readonly attempts: number;
  readonly created_at: string;
  readonly url: string | null;
  readonly secret: string | null;
  readonly enabled: number | null;
}

/** The event's body, from the ended request or run (whose fields no longer change), frozen at the first attempt. */
async function eventBody(db: Db, due: Due): Promise<string> {
  if (due.payload !== '') return due.payload;
  const event = (data: Record<string, unknown>) => JSON.stringify({ type: due.event_type, timestamp: due.created_at, data });
  const id = due.subject_id ?? '';
  if (due.subject_kind === 'request') {
    const r = await db.selectFrom('ifw_bulk_import_request').selectAll().where('request_id', '=', id).executeTakeFirst();
    return event(
      r === undefined
        ? { requestId: id }
        : {
            requestId: r.request_id,
            integrationSortingOrder: r.integration_sorting_order,
            status: r.status,
            recordCount: r.record_count,
            inserted: r.inserted_count,
            updated: r.updated_count,
            skipped: r.skipped_count,
            errorMessage: r.error_message,
            submittedAt: r.submitted_at,
            endedAt: r.ended_at,
          },
    );
  }
  const r = await db.selectFrom('ifw_import_run').selectAll().where('run_id', '=', id).executeTakeFirst();
  return event(
    r === undefined
      ? { runId: id }
      : {
          runId: r.run_id,
          endpointCode: r.endpoint_code,
          integrationSortingOrder: r.integration_sorting_order,
          trigger: r.trigger,
          status: r.status,
          pagesFetched: r.pages_fetched,
          recordsFetched: r.records_fetched,
          inserted: r.inserted_count,
          updated: r.updated_count,
          skipped: r.skipped_count,
          stopReason: r.stop_reason,
          errorMessage: r.error_message,
          startedAt: r.started_at,
          endedAt: r.ended_at,
        },
  );
}

type Outcome =
  { readonly ok: true; readonly status: number } | { readonly ok: false; readonly status: number | null; readonly error: string };

async function post(ctx: DeliveryContext, url: string, headers: Record<string, string>, body: string): Promise<Outcome> {
  const origin = new URL(url).origin;
  const options: HttpOptions = {
    outbound: ctx.outbound,
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    ...(ctx.dispatcher === undefined ? {} : { dispatcher: ctx.dispatcher }),
  };
  // The URL an administrator chose: only the deny list applies to it, as to a connection's base URL.
  const outcome = await withHttp(
    DELIVERY_TIMEOUT_MS,
    options,
    (deps) => exchange({ method: 'POST', url, headers, body, timeoutMs: DELIVERY_TIMEOUT_MS }, { maxRetries: 0, initialDelayMs: 0 }, deps),
    new Set([origin]),
  );
  if (outcome.kind === 'noAnswer') return { ok: false, status: null, error: outcome.reason };
  if (outcome.status >= 200 && outcome.status < 300) return { ok: true, status: outcome.status };
  return { ok: false, status: outcome.status, error: describeAnswer(outcome.status, outcome.text, 1) };
}

async function attempt(ctx: DeliveryContext, due: Due): Promise<void> {
  const { db, clock } = ctx;
  const now = clock();
  const attempts = due.attempts + 1;
  let outcome: Outcome;
  let body = due.payload;
  if (due.url === null || due.secret === null) outcome = { ok: false, status: null, error: 'the webhook was deleted' };
  else if (due.enabled !== 1) outcome = { ok: false, status: null, error: 'the webhook is disabled' };
  else {
    try {
      body = await eventBody(db, due);
      const secret = ctx.secrets().open(due.secret);
      const timestamp = Math.floor(now.getTime() / 1000);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'ifw-webhooks',
        'webhook-id': due.delivery_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature(secret, due.delivery_id, timestamp, body),
      };
      outcome = await post(ctx, due.url, headers, body);
    } catch (err) {
      if (ctx.signal?.aborted === true) throw err;
      outcome = { ok: false, status: null, error: err instanceof Error ? err.message : String(err) };
    }
  }
  const at = clock();
  const gaveUp = !outcome.ok && (attempts >= MAX_ATTEMPTS || due.url === null);
  const status = outcome.ok ? 'Delivered' : gaveUp ? 'Failed' : 'Pending';
  const wait = RETRY_SCHEDULE_MS[attempts - 1] ?? 0;
  await db
    .updateTable('ifw_webhook_delivery')
    .set({
      status,
      attempts,
      payload: body,
      last_attempt_at: now.toISOString(),
      last_status: outcome.status,
      last_error: outcome.ok ? '' : outcome.error,
      next_attempt_at: status === 'Pending' ? new Date(at.getTime() + wait).toISOString() : null,
      delivered_at: outcome.ok ? at.toISOString() : null,
    })
    .where('delivery_id', '=', due.delivery_id)
    .where('status', '=', 'Pending')
    .execute();
  ctx.metrics?.webhookDeliveries.inc({ outcome: outcome.ok ? 'delivered' : gaveUp ? 'failed' : 'retrying' });
  const fields = { deliveryId: due.delivery_id, webhookId: due.webhook_id, eventType: due.event_type, attempts, status: outcome.status };
  if (outcome.ok) ctx.logger.debug(fields, 'webhook delivered');
  else
    ctx.logger.warn(
      { ...fields, error: outcome.error, gaveUp },
      gaveUp ? 'webhook delivery failed for good' : 'webhook delivery failed; retried later',
    );
}

async function dueDeliveries(db: Db, now: Date): Promise<Due[]> {
  return db
    .selectFrom('ifw_webhook_delivery as d')
    .leftJoin('ifw_webhook as w', 'w.webhook_id', 'd.webhook_id')
    .select([
      'd.delivery_id',
      'd.webhook_id',
      'd.event_type',
      'd.subject_kind',
      'd.subject_id',
      'd.payload',
      'd.attempts',
      'd.created_at',
      'w.url',
      'w.secret',
      'w.enabled',
    ])
    .where('d.status', '=', 'Pending')
    .where('d.next_attempt_at', '<=', now.toISOString())
    .orderBy('d.next_attempt_at')
    .orderBy('d.delivery_id')
    .limit(BATCH)
    .execute();
}

/** Sends every delivery due now, batch by batch, CONCURRENCY at a time; answers how many attempts were made. */
export async function deliverDueWebhooks(ctx: DeliveryContext): Promise<number> {
  let made = 0;
  for (;;) {
    if (ctx.keepGoing !== undefined && !(await ctx.keepGoing())) return made;
    const due = await dueDeliveries(ctx.db, ctx.clock());
    if (due.length === 0) return made;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < due.length) {
        const item = due[next++]!;
        await attempt(ctx, item);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, worker));
    made += due.length;
  }
}
