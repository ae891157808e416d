/**
 * The job queue entry that sends webhooks (`VENDOR IF Webhook Delivery`, seeded by migration 015, every
 * 5 seconds), in a lane of its own: a receiver that is slow or down never holds up bulk import requests
 * or import runs.
 */
import type { JobKind } from '../job-queue/jobs.js';
import type { OutboundPolicy } from '../rest-source/outbound-policy.js';
import type { SecretBox } from '../rest-source/secrets.js';
import { deliverDueWebhooks } from './deliver.js';

export const WEBHOOK_DELIVERY_ENTRY = 'webhook-delivery';

export function webhookDelivery(secrets: () => SecretBox, outbound: OutboundPolicy): JobKind {
  return {
    kind: 'webhookDelivery',
    lane: 'webhooks',
    async run({ db, clock, logger, metrics, signal, keepGoing }) {
      await deliverDueWebhooks({
        db,
        clock,
        logger: logger.child({ component: 'webhooks' }),
        secrets,
        outbound,
        metrics,
        signal,
        keepGoing,
      });
    },
  };
}
