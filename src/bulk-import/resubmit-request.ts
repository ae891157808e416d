/**
 * Resubmit, as the spec advises for a Failed request: a new request with the same payload and
 * integration (never the failed requestId again). Failed or Cancelled requests only, once each: the new
 * request names the one it came from and the old one names the new, so a second resubmit (a double
 * click, two operators) is refused with the id of the first. One transaction: the new row, a copy of the
 * payload's chunks, and the old row's pointer, committed durably before the answer.
 */
import { sql } from 'kysely';
import type { Clock } from '../core/clock.js';
import { conflict } from '../core/errors.js';
import { newTimeOrderedId } from '../core/uuid7.js';
import type { Db } from '../storage/db.js';
import { withTransaction } from '../storage/transaction.js';
import { requestRow } from './insert-requests.js';
import { currentStatus } from './queries.js';
import type { Integration } from '../integrations/model.js';
import type { Accepted } from './submit.js';

export const RESUBMITTABLE = ['Failed', 'Cancelled'] as const;

export async function resubmitRequest(
  db: Db,
  requestId: string,
  options: {
    clock: Clock;
    submittedBy: string | null;
    /** The submit checks of an integration (Submitter.integration): it exists and accepts bulk requests. */
    checkIntegration: (sortingOrder: number) => Promise<Integration>;
  },
): Promise<Accepted> {
  const old = await db
    .selectFrom('ifw_bulk_import_request')
    .select(['status', 'integration_sorting_order', 'resubmitted_as'])
    .where('request_id', '=', requestId)
    .executeTakeFirst();
  if (old === undefined) await currentStatus(db, requestId); // 404
  if (!(RESUBMITTABLE as readonly string[]).includes(old!.status))
    throw conflict(
      'invalidStatusTransition',
      `Request ${requestId} is ${old!.status}; only Failed or Cancelled requests can be resubmitted.`,
    );
  if (old!.resubmitted_as !== null) throw alreadyResubmitted(requestId, old!.resubmitted_as);
  // The integration must still exist and accept bulk requests, as for any submission.
  await options.checkIntegration(old!.integration_sorting_order);

  const now = options.clock();
  const newId = newTimeOrderedId(now.getTime());
  await withTransaction(db, async (tx) => {
    const claimed = await tx
      .updateTable('ifw_bulk_import_request')
      .set({ resubmitted_as: newId })
      .where('request_id', '=', requestId)
      .where('resubmitted_as', 'is', null)
      .where('status', 'in', RESUBMITTABLE)
      .returning(['payload', 'payload_chunks', 'payload_length', 'integration_sorting_order'])
      .executeTakeFirst();
    if (claimed === undefined) {
      const current = await tx
        .selectFrom('ifw_bulk_import_request')
        .select('resubmitted_as')
        .where('request_id', '=', requestId)
        .executeTakeFirst();
      throw alreadyResubmitted(requestId, current?.resubmitted_as ?? null);
    }
    await tx
      .insertInto('ifw_bulk_import_request')
      .values({
        ...requestRow({
          requestId: newId,
          integrationSortingOrder: claimed.integration_sorting_order,
          payload: claimed.payload,
          payloadChunks: claimed.payload_chunks,
          payloadLength: claimed.payload_length,
          submittedAt: now.toISOString(),
          submittedBy: options.submittedBy,
        }),
        resubmitted_from: requestId,
      })
      .execute();
    if (claimed.payload_chunks > 0)
      await tx
        .insertInto('ifw_bulk_import_payload_chunk')
        .columns(['request_id', 'seq', 'data'])
        .expression((eb) =>
          eb
            .selectFrom('ifw_bulk_import_payload_chunk')
            .select([sql<string>`cast(${newId} as text)`.as('request_id'), 'seq', 'data'])
            .where('request_id', '=', requestId),
        )
        .execute();
  });
  return { requestId: newId, status: 'Pending', submittedAt: now.toISOString() };
}

const alreadyResubmitted = (requestId: string, as: string | null) =>
  conflict(
    'invalidStatusTransition',
    as === null
      ? `Request ${requestId} can no longer be resubmitted.`
      : `Request ${requestId} was already resubmitted as ${as}; poll that request, or resubmit it if it failed too.`,
  );
