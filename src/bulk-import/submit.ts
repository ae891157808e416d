/**
 * Submitting a request: the checks the spec names (integration exists and accepts bulk requests,
 * payload within Max Payload Size, payload is a JSON text), then a durable insert.
 *
 * Durability without giving up throughput: every 202 waits for its row to be committed with
 * synchronous=FULL, and submissions that arrive together share one commit (group commit). A batch
 * is flushed on the next turn of the event loop, so a lone request waits for nothing but its fsync.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../core/clock.js';
import { AppError, badRequest } from '../core/errors.js';
import type { Integration } from '../integrations/model.js';
import { prepareIntegrationLookup } from '../integrations/store.js';
import type { DB } from '../storage/schema.js';
import { newTimeOrderedId } from '../core/uuid7.js';
import type { NewRequestRow } from './sqlite/writer-messages.js';

export interface Submission {
  readonly integrationSortingOrder: number;
  readonly payload: string;
  readonly submittedBy?: string | null;
}

export interface Accepted {
  readonly requestId: string;
  readonly status: 'Pending';
  readonly submittedAt: string;
}

export type IntegrationLookup = (sortingOrder: number) => Promise<Integration | undefined>;

/** The checks of a submission, in the order a caller can fix them. Throws AppError. */
export async function checkSubmission(lookup: IntegrationLookup, submission: Submission): Promise<Integration> {
  const integration = await lookup(submission.integrationSortingOrder);
  if (integration === undefined) {
    throw badRequest('unknownIntegration', `No integration has Sorting Order ${submission.integrationSortingOrder}.`);
  }
  if (!integration.acceptBulkImportRequests) {
    throw badRequest(
      'bulkImportNotEnabled',
      `Integration ${integration.sortingOrder} ("${integration.name}") does not accept bulk import requests; enable Accept Bulk Import Requests on it.`,
    );
  }
  if (integration.maxPayloadSizeKb !== null) {
    const bytes = Buffer.byteLength(submission.payload, 'utf8');
    if (bytes > integration.maxPayloadSizeKb * 1024) {
      throw new AppError(
        413,
        'payloadTooLarge',
        `The payload is ${Math.ceil(bytes / 1024)} KB; integration ${integration.sortingOrder} accepts at most ${integration.maxPayloadSizeKb} KB (Max Payload Size). Split it into smaller requests.`,
      );
    }
  }
  try {
    JSON.parse(submission.payload);
  } catch (err) {
    throw badRequest('payloadNotJson', `payload must be a string holding a JSON text: ${(err as Error).message}.`);
  }
  return integration;
}

interface Waiting {
  readonly row: NewRequestRow;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/** Rows per commit at most; a batch is what arrived while the previous commit was on its way to disk. */
const MAX_BATCH = 1000;

/** Stores a batch of new requests durably (one transaction); resolves once they are committed. */
export type PersistRequests = (rows: readonly NewRequestRow[]) => Promise<void>;

/** The portable way to persist: one multi-row insert through Kysely. */
export function insertRequests(db: Kysely<DB>): PersistRequests {
  return async (rows) => {
    await db
      .insertInto('ifw_bulk_import_request')
      .values(
        rows.map((r) => ({
          request_id: r.requestId,
          integration_sorting_order: r.integrationSortingOrder,
          payload: r.payload,
          status: 'Pending',
          submitted_at: r.submittedAt,
          submitted_by: r.submittedBy,
        })),
      )
      .execute();
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
  /** Resolves when every submission handed in so far is committed (or failed). */
  drain(): Promise<void>;
}

export function createSubmitter(db: Kysely<DB>, options: { clock: Clock; persist?: PersistRequests; onCommitted?: () => void }): Submitter {
  const lookup = memoizeForOneTurn(prepareIntegrationLookup(db));
  const persist = options.persist ?? insertRequests(db);
  let waiting: Waiting[] = [];
  let flushing: Promise<void> | undefined;

  async function flush(): Promise<void> {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, MAX_BATCH);
      waiting = waiting.slice(batch.length);
      try {
        await persist(batch.map((w) => w.row));
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

  return {
    async submit(submission) {
      await checkSubmission(lookup, submission);
      const now = options.clock();
      const requestId = newTimeOrderedId(now.getTime());
      const submittedAt = now.toISOString();
      await new Promise<void>((resolve, reject) => {
        waiting.push({
          row: {
            requestId,
            integrationSortingOrder: submission.integrationSortingOrder,
            payload: submission.payload,
            submittedAt,
            submittedBy: submission.submittedBy ?? null,
          },
          resolve,
          reject,
        });
        schedule();
      });
      return { requestId, status: 'Pending', submittedAt };
    },
    async drain() {
      while (flushing !== undefined) await flushing;
    },
  };
}
