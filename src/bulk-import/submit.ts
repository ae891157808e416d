/**
 * Submitting a request: the checks the spec names (integration exists and accepts bulk requests,
 * payload within Max Payload Size, payload is a JSON text), then a durable insert.
 *
 * Durability without giving up throughput: every 202 waits for its row to be committed with
 * synchronous=FULL, and submissions that arrive together share one commit (group commit). A batch
 * is flushed on the next turn of the event loop, so a lone request waits for nothing but its fsync.
 */
import type { Metrics } from '../core/metrics.js';
import type { Clock } from '../core/clock.js';
import { AppError, badRequest } from '../core/errors.js';
import type { Integration } from '../integrations/model.js';
import { prepareIntegrationLookup } from '../integrations/store.js';
import { newTimeOrderedId } from '../core/uuid7.js';
import type { NewRequestRow } from './sqlite/writer-messages.js';
import type { Db } from '../storage/db.js';
import { insertRequests } from './insert-requests.js';
import {
  fingerprintOf,
  releaseIdempotencyKey,
  reserveIdempotencyKey,
  sha256Hex,
  type IdempotencyClaim,
  type Reservation,
} from './idempotency.js';

export type { NewRequestRow } from './sqlite/writer-messages.js';

export interface Submission {
  readonly integrationSortingOrder: number;
  readonly payload: string;
  readonly submittedBy?: string | null;
  /** The caller's Idempotency-Key (idempotency.ts). */
  readonly idempotency?: IdempotencyClaim;
}

/** A payload received in chunks (upload.ts): its chunks are stored under `requestId` already, or it is short and `text`. */
export interface ReceivedPayload {
  readonly requestId: string;
  /** The payload when it fitted in one chunk: stored in the request row, as a small submission. */
  readonly text: string | null;
  readonly chunks: number;
  /** UTF-8 bytes and characters. */
  readonly bytes: number;
  readonly length: number;
  /** Null when the payload is a JSON text; otherwise why it is not. */
  readonly notJson: string | null;
  /** Set when `notJson` says the payload nests deeper than MAX_PAYLOAD_DEPTH. */
  readonly tooDeep?: boolean;
  /** The payload's SHA-256 (hex), when it was asked for (a submission with an Idempotency-Key). */
  readonly sha256?: string;
  /** Resolves when every chunk is written (rejects when one could not be). */
  readonly written: Promise<void>;
}

export interface Accepted {
  readonly requestId: string;
  readonly status: 'Pending';
  readonly submittedAt: string;
  /** Set when this is a repeat of an Idempotency-Key: the first submission's answer, nothing new stored. */
  readonly replayed?: true;
}

export type IntegrationLookup = (sortingOrder: number) => Promise<Integration | undefined>;

/** The checks of the integration a submission names: it exists and accepts bulk requests. Throws AppError. */
export async function checkIntegration(lookup: IntegrationLookup, sortingOrder: number): Promise<Integration> {
  const integration = await lookup(sortingOrder);
  if (integration === undefined) {
    throw badRequest('unknownIntegration', `No integration has Sorting Order ${sortingOrder}.`);
  }
  if (!integration.acceptBulkImportRequests) {
    throw badRequest(
      'bulkImportNotEnabled',
      `Integration ${integration.sortingOrder} ("${integration.name}") does not accept bulk import requests; enable Accept Bulk Import Requests on it.`,
    );
  }
  return integration;
}

/** Max Payload Size: 413 when `bytes` exceed it (`more`: the payload is still arriving, there is more than that). */
export function checkPayloadSize(integration: Integration, bytes: number, more = false): void {
  if (integration.maxPayloadSizeKb === null || bytes <= integration.maxPayloadSizeKb * 1024) return;
  throw new AppError(
    413,
    'payloadTooLarge',
    `The payload is ${more ? 'more than ' : ''}${Math.ceil(bytes / 1024)} KB; integration ${integration.sortingOrder} accepts at most ${integration.maxPayloadSizeKb} KB (Max Payload Size). Split it into smaller requests.`,
  );
}

export const payloadNotJson = (reason: string): AppError =>
  badRequest('payloadNotJson', `payload must be a string holding a JSON text: ${reason}.`);

/**
 * The deepest nesting of arrays and objects a payload may have. Records nest a few levels; thousands of
 * levels only serve to exhaust a stack further down (mapping, messages), so they are refused at submit.
 */
export const MAX_PAYLOAD_DEPTH = 256;

export const payloadTooDeep = (): AppError =>
  badRequest('payloadTooDeep', `payload nests arrays and objects more than ${MAX_PAYLOAD_DEPTH} levels deep; flatten the records.`);

/** Whether a JSON text nests arrays and objects deeper than `max` (brackets inside strings do not count). */
export function nestsDeeperThan(json: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * A payload text holding a lone surrogate (half a pair, which UTF-8 cannot hold) would be stored with
 * U+FFFD in its place by either database: the data changed without a word. Written as its escape
 * (`\ud800`) instead, it means the same to JSON and reaches the mapping as sent, which refuses it with a
 * record error. Payloads without one (nearly all) are returned as they are.
 */
export function keepLoneSurrogates(payload: string): string {
  if (isWellFormed(payload)) return payload;
  return payload.replace(/[\ud800-\udfff]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The checks of a submission, in the order a caller can fix them. Throws AppError. */
export async function checkSubmission(lookup: IntegrationLookup, submission: Submission): Promise<Integration> {
  const integration = await checkIntegration(lookup, submission.integrationSortingOrder);
  if (integration.maxPayloadSizeKb !== null) checkPayloadSize(integration, Buffer.byteLength(submission.payload, 'utf8'));
  try {
    JSON.parse(submission.payload);
  } catch (err) {
    throw payloadNotJson((err as Error).message);
  }
  if (nestsDeeperThan(submission.payload, MAX_PAYLOAD_DEPTH)) throw payloadTooDeep();
  return integration;
}

interface Waiting {
  readonly row: NewRequestRow;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/** Rows per commit at most; a batch is what arrived while the previous commit was on its way to disk. */
const MAX_BATCH = 1000;

/**
 * Where submissions are stored. `insert` stores a batch of new requests durably (one transaction) and
 * resolves once they are committed. `writeChunk` stores a piece of a large payload before its request
 * exists, in a commit that need not reach the disk: the request's own durable commit, which comes after
 * its chunks, makes them durable too (both databases write one log in order and sync it up to that
 * commit). `discardChunks` removes the chunks of a payload whose request was refused or cut off.
 */
export interface RequestStore {
  insert(rows: readonly NewRequestRow[]): Promise<void>;
  writeChunk(requestId: string, seq: number, data: Uint8Array): Promise<void>;
  discardChunks(requestId: string): Promise<void>;
}

/**
 * The portable store: Kysely on the service's own connection. The service stores through the writer
 * thread on SQLite (sqlite/request-writer.ts) and through postgres/request-store.ts on PostgreSQL.
 */
export function kyselyRequestStore(db: Db): RequestStore {
  return {
    async insert(rows) {
      await insertRequests(db, rows).execute();
    },
    async writeChunk(requestId, seq, data) {
      await db.insertInto('ifw_bulk_import_payload_chunk').values({ request_id: requestId, seq, data }).execute();
    },
    async discardChunks(requestId) {
      await db.deleteFrom('ifw_bulk_import_payload_chunk').where('request_id', '=', requestId).execute();
    },
  };
}

/**
 * Submissions that arrive together mostly name the same integration: within one turn of the event
 * loop the lookup is made once. The next turn reads the database again, so a change to an
 * integration is seen by the next submission as before.
 */
function memoizeForOneTurn(lookup: IntegrationLookup): IntegrationLookup {
  let memo: Map<number, Promise<Integration | undefined>> | undefined;
  return (sortingOrder) => {
    if (memo === undefined) {
      memo = new Map();
      setImmediate(() => (memo = undefined));
    }
    let found = memo.get(sortingOrder);
    if (found === undefined) {
      found = lookup(sortingOrder);
      memo.set(sortingOrder, found);
    }
    return found;
  };
}

export interface Submitter {
  submit(submission: Submission): Promise<Accepted>;
  /** The checks of the integration a submission names (one lookup per turn of the event loop). Throws AppError. */
  integration(sortingOrder: number): Promise<Integration>;
  /** A new request's id, for a payload about to be received in chunks. */
  newRequestId(): string;
  /** Where the chunks of a payload being received go. */
  readonly chunks: Pick<RequestStore, 'writeChunk'>;
  /**
   * Accepts a payload received in chunks (upload.ts): the checks of a submission, then, once every
   * chunk is written, the request row (group commit, durable). Whatever fails, its chunks are removed.
   */
  submitReceived(
    integrationSortingOrder: number,
    payload: ReceivedPayload,
    submittedBy: string | null,
    idempotency?: IdempotencyClaim,
  ): Promise<Accepted>;
  /** Removes the chunks of a payload that will not become a request (after those being written). */
  discard(payload: Pick<ReceivedPayload, 'requestId' | 'written'>): Promise<void>;
  /** Resolves when every submission handed in so far is committed (or failed), and every discard done. */
  drain(): Promise<void>;
}

export interface SubmitterOptions {
  readonly clock: Clock;
  readonly store?: RequestStore;
  readonly onCommitted?: () => void;
  /** How long an Idempotency-Key holds (default 24 h). */
  readonly idempotencyWindowMs?: number;
  /** Counts the accepted requests by integration (`ifw_requests_submitted_total`). */
  readonly metrics?: Pick<Metrics, 'requestsSubmitted'>;
}

const DEFAULT_IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

export function createSubmitter(db: Db, options: SubmitterOptions): Submitter {
  const lookup = memoizeForOneTurn(prepareIntegrationLookup(db));
  const windowMs = options.idempotencyWindowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS;
  const store = options.store ?? kyselyRequestStore(db);
  let waiting: Waiting[] = [];
  let flushing: Promise<void> | undefined;
  const discarding = new Set<Promise<void>>();

  async function flush(): Promise<void> {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, MAX_BATCH);
      waiting = waiting.slice(batch.length);
      try {
        await store.insert(batch.map((w) => w.row));
        for (const w of batch) w.resolve();
        options.onCommitted?.();
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
  }

  function schedule(): void {
    if (flushing !== undefined) return;
    flushing = new Promise<void>((resolve) => {
      setImmediate(() => {
        flush()
          .catch(() => undefined)
          .finally(() => {
            flushing = undefined;
            resolve();
            if (waiting.length > 0) schedule();
          });
      });
    });
  }

  const enqueue = (row: NewRequestRow): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ row, resolve, reject });
      schedule();
    });

  /**
   * Commits a new request; with an Idempotency-Key, reserves the key first and answers a repeat with the
   * first submission's answer instead (`onReplay` then removes what was received for nothing).
   */
  async function commit(
    row: NewRequestRow,
    idempotency: { claim: IdempotencyClaim; payloadSha256: string } | undefined,
    onReplay?: () => void,
  ): Promise<Accepted> {
    let reservation: Reservation | undefined;
    if (idempotency !== undefined) {
      reservation = {
        claim: idempotency.claim,
        fingerprint: fingerprintOf(row.integrationSortingOrder, idempotency.payloadSha256),
        requestId: row.requestId,
        submittedAt: row.submittedAt,
      };
      const replay = await reserveIdempotencyKey(db, reservation, { now: options.clock, windowMs });
      if (replay !== undefined) {
        onReplay?.();
        return { requestId: replay.requestId, status: 'Pending', submittedAt: replay.submittedAt, replayed: true };
      }
    }
    try {
      await enqueue(row);
    } catch (err) {
      if (reservation !== undefined) await releaseIdempotencyKey(db, reservation).catch(() => undefined);
      throw err;
    }
    options.metrics?.requestsSubmitted.inc({ integration: String(row.integrationSortingOrder) });
    return { requestId: row.requestId, status: 'Pending', submittedAt: row.submittedAt };
  }

  function discard(payload: Pick<ReceivedPayload, 'requestId' | 'written'>): Promise<void> {
    const done = payload.written
      .catch(() => undefined)
      .then(() => store.discardChunks(payload.requestId))
      .catch(() => undefined)
      .finally(() => discarding.delete(done));
    discarding.add(done);
    return done;
  }

  return {
    async submit(submission) {
      await checkSubmission(lookup, submission);
      const now = options.clock();
      return commit(
        {
          requestId: newTimeOrderedId(now.getTime()),
          integrationSortingOrder: submission.integrationSortingOrder,
          payload: keepLoneSurrogates(submission.payload),
          payloadChunks: 0,
          payloadLength: null,
          submittedAt: now.toISOString(),
          submittedBy: submission.submittedBy ?? null,
        },
        submission.idempotency && { claim: submission.idempotency, payloadSha256: sha256Hex(submission.payload) },
      );
    },
    integration: (sortingOrder) => checkIntegration(lookup, sortingOrder),
    newRequestId: () => newTimeOrderedId(options.clock().getTime()),
    chunks: store,
    async submitReceived(integrationSortingOrder, payload, submittedBy, idempotency) {
      try {
        const integration = await checkIntegration(lookup, integrationSortingOrder);
        checkPayloadSize(integration, payload.bytes);
        if (payload.notJson !== null) throw payload.tooDeep === true ? payloadTooDeep() : payloadNotJson(payload.notJson);
        await payload.written;
        const now = options.clock();
        if (idempotency !== undefined && payload.sha256 === undefined) throw new Error('The payload was received without its SHA-256.');
        return await commit(
          {
            requestId: payload.requestId,
            integrationSortingOrder,
            payload: payload.text ?? '',
            payloadChunks: payload.chunks,
            payloadLength: payload.text === null ? payload.length : null,
            submittedAt: now.toISOString(),
            submittedBy,
          },
          idempotency && { claim: idempotency, payloadSha256: payload.sha256! },
          () => void discard(payload),
        );
      } catch (err) {
        void discard(payload);
        throw err;
      }
    },
    discard,
    async drain() {
      while (flushing !== undefined || discarding.size > 0) {
        if (flushing !== undefined) await flushing;
        await Promise.all([...discarding]);
      }
    },
  };
}
