/**
 * Webhooks' vocabulary: the statuses of a delivery, the events, the retry schedule and the signing
 * secret's form (Standard Webhooks: `whsec_` and the base64 of random bytes).
 */
import { randomBytes } from 'node:crypto';

export const DELIVERY_STATUSES = ['Pending', 'Delivered', 'Failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const SUBJECT_KINDS = ['request', 'run', 'test'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

export const EVENT_TYPES = [
  'bulkImportRequest.completed',
  'bulkImportRequest.failed',
  'bulkImportRequest.cancelled',
  'importRun.completed',
  'importRun.failed',
  'importRun.cancelled',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The final statuses that send an event. */
export type EndStatus = 'Completed' | 'Failed' | 'Cancelled';

export const eventTypeOf = (subject: 'request' | 'run', status: EndStatus): EventType =>
  `${subject === 'request' ? 'bulkImportRequest' : 'importRun'}.${status.toLowerCase() as 'completed' | 'failed' | 'cancelled'}`;

/**
 * Waits after each failed attempt, in ms: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (the schedule
 * Standard Webhooks' reference implementation uses). After the last one the delivery is Failed: eight
 * attempts over about 28 hours.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;

/** How long one attempt may take: connect, headers and body. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** A new signing secret: `whsec_` and 24 random bytes in base64. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** A secret a caller gives: `whsec_` and the base64 of 24 to 64 bytes. */
export const SECRET_PATTERN = '^whsec_[A-Za-z0-9+/]{32,88}={0,2}$';

/** The bytes a secret signs with. */
export const secretKey = (secret: string): Buffer => Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
