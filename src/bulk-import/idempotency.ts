/**
 * `Idempotency-Key` on submit. A caller whose POST timed out cannot know whether it was accepted, and
 * the spec tells it never to resubmit a request that may be Pending. With the header, a repeat of the
 * same key by the same caller is answered the first 202 body (the same requestId) and creates nothing;
 * the same key with another body (another integration or payload) is refused with 422. A key holds for
 * the configured window (IFW_IDEMPOTENCY_HOURS, 24 by default) from the first submission.
 *
 * Exactly one request per key, also for repeats that arrive together, from one process or several: the
 * key is reserved with an insert that the primary key (caller, key) lets only one submission win, before
 * that submission's request is committed. A repeat that finds the key reserved but its request not yet
 * committed waits for it (a commit takes milliseconds); a reservation whose request never came (the
 * process stopped between the two) is taken over after STALE_MS.
 */
import { createHash } from 'node:crypto';
import { AppError, badRequest } from '../core/errors.js';
import type { Db } from '../storage/db.js';

/** The longest key accepted, as Stripe's. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** A reservation older than this whose request does not exist was left by a submission that never finished. */
export const STALE_MS = 60_000;

/** How long a repeat waits for the first submission's commit before answering 409. */
const WAIT_MS = 10_000;
const POLL_MS = 20;

export interface IdempotencyClaim {
  /** Who submits (user:<name> or application:<client id>; '' when authentication is off): keys are per caller. */
  readonly caller: string;
  readonly key: string;
}

export interface Reservation {
  readonly claim: IdempotencyClaim;
  readonly fingerprint: string;
  readonly requestId: string;
  readonly submittedAt: string;
}

/** The first submission's answer, for a repeat. */
export interface Replay {
  readonly requestId: string;
  readonly submittedAt: string;
}

/** The header's value, checked: 1 to 255 visible ASCII characters (and spaces). Throws AppError 400. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header)) throw badRequest('invalidIdempotencyKey', 'Idempotency-Key: send the header once, with one key.');
  if (header.length === 0 || header.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x20-\x7e]+$/.test(header) || header.trim() === '')
    throw badRequest(
      'invalidIdempotencyKey',
      `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters (a UUID is a good key), got ${header.length} characters${/^[\x20-\x7e]*$/.test(header) ? '' : ' with others than visible ASCII'}.`,
    );
  return header;
}

/** What a key stands for: the integration and the payload's SHA-256 (hex, of its UTF-8 bytes). */
export const fingerprintOf = (integrationSortingOrder: number, payloadSha256: string): string =>
  createHash('sha256').update(`${integrationSortingOrder}:${payloadSha256}`).digest('hex');

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

const reused = (): AppError =>
  new AppError(
    422,
    'idempotencyKeyReused',
    'This Idempotency-Key was used with another body (another integration or payload). Use a new key for a new submission.',
  );

const inFlight = (): AppError =>
  new AppError(
    409,
    'idempotencyKeyInFlight',
    'A submission with this Idempotency-Key is still being stored; repeat it in a moment to get its answer.',
    { 'retry-after': '1' },
  );

/**
 * Reserves the key for `reservation`'s request, or answers what the key already stands for: a Replay of
 * its request, 422 when it was used with another body, 409 when its first submission is still under
 * way after WAIT_MS. `now` is the clock's time, for the window and for stale reservations.
 */
export async function reserveIdempotencyKey(
  db: Db,
  reservation: Reservation,
  options: { now: () => Date; windowMs: number },
): Promise<Replay | undefined> {
  const { caller, key } = reservation.claim;
  const waitUntil = Date.now() + WAIT_MS;
  for (;;) {
    const now = options.now();
    const row = {
      caller,
      idempotency_key: key,
      fingerprint: reservation.fingerprint,
      request_id: reservation.requestId,
      submitted_at: reservation.submittedAt,
      expires_at: new Date(now.getTime() + options.windowMs).toISOString(),
    };
    const inserted = await db
      .insertInto('ifw_idempotency_key')
      .values(row)
      .onConflict((oc) => oc.columns(['caller', 'idempotency_key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return undefined;
    const held = await db
      .selectFrom('ifw_idempotency_key')
      .selectAll()
      .where('caller', '=', caller)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
    if (held === undefined) continue; // released meanwhile: try again
    const takeOver = async (): Promise<boolean> => {
      const updated = await db
        .updateTable('ifw_idempotency_key')
        .set(row)
        .where('caller', '=', caller)
        .where('idempotency_key', '=', key)
        .where('request_id', '=', held.request_id)
        .executeTakeFirst();
      return Number(updated.numUpdatedRows) === 1;
    };
    if (held.expires_at <= now.toISOString()) {
      if (await takeOver()) return undefined;
      continue;
    }
    if (held.fingerprint !== reservation.fingerprint) throw reused();
    const request = await db
      .selectFrom('ifw_bulk_import_request')
      .select('request_id')
      .where('request_id', '=', held.request_id)
      .executeTakeFirst();
    if (request !== undefined) return { requestId: held.request_id, submittedAt: held.submitted_at };
    if (now.getTime() - Date.parse(held.submitted_at) > STALE_MS) {
      if (await takeOver()) return undefined;
      continue;
    }
    if (Date.now() > waitUntil) throw inFlight();
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Frees a key whose submission was refused or could not be stored, so that a repeat is a new try. */
export async function releaseIdempotencyKey(db: Db, reservation: Reservation): Promise<void> {
  await db
    .deleteFrom('ifw_idempotency_key')
    .where('caller', '=', reservation.claim.caller)
    .where('idempotency_key', '=', reservation.claim.key)
    .where('request_id', '=', reservation.requestId)
    .execute();
}

/** Retention: keys past their window. */
export async function deleteExpiredIdempotencyKeys(db: Db, now: Date): Promise<void> {
  await db.deleteFrom('ifw_idempotency_key').where('expires_at', '<=', now.toISOString()).execute();
}
