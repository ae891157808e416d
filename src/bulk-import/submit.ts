/**
 * Submitting a request: the checks the spec names (integration exists and accepts bulk requests,
 * payload within Max Payload Size, payload is a JSON text), then a durable insert.
 *
 * Durability without giving up throughput: every 202 waits for its row to be committed with
 * synchronous=FULL, and submissions that arrive together share one commit (group commit). A batch
 * is flushed on the next turn of the event loop, so a lone request waits for nothing but its fsync.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Insertable } from 'kysely';
import type { Clock } from '../clock.js';
import { AppError, badRequest } from '../errors.js';
import type { Integration } from '../integrations/model.js';
import { getIntegration } from '../integrations/store.js';
import type { BulkImportRequestRow, DB } from '../storage/schema.js';

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

/** The checks of a submission, in the order a caller can fix them. Throws AppError. */
export async function checkSubmission(db: Kysely<DB>, submission: Submission): Promise<Integration> {
  const integration = await getIntegration(db, submission.integrationSortingOrder);
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
  readonly row: Insertable<BulkImportRequestRow>;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/** SQLite allows 32 766 bound parameters per statement; a request row binds 6. */
const MAX_BATCH = 1000;

export interface Submitter {
  submit(submission: Submission): Promise<Accepted>;
  /** Resolves when every submission handed in so far is committed (or failed). */
  drain(): Promise<void>;
}

export function createSubmitter(db: Kysely<DB>, options: { clock: Clock; onCommitted?: () => void }): Submitter {
  let waiting: Waiting[] = [];
  let flushing: Promise<void> | undefined;

  async function flush(): Promise<void> {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, MAX_BATCH);
      waiting = waiting.slice(batch.length);
      try {
        await db.insertInto('ifw_bulk_import_request').values(batch.map((w) => w.row)).execute();
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
      await checkSubmission(db, submission);
      const requestId = randomUUID();
      const submittedAt = options.clock().toISOString();
      await new Promise<void>((resolve, reject) => {
        waiting.push({
          row: {
            request_id: requestId,
            integration_sorting_order: submission.integrationSortingOrder,
            payload: submission.payload,
            status: 'Pending',
            submitted_at: submittedAt,
            submitted_by: submission.submittedBy ?? null,
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
