/**
 * Reading a request's payload for an administrator: the whole of it as a stream of its UTF-8 bytes,
 * one stored chunk at a time (a payload of 100 MB is never held whole), or its first bytes for the
 * console's view. A payload is stored whole in the request row, or in chunks (upload.ts).
 */
import { notFound } from '../core/errors.js';
import type { Db } from '../storage/db.js';

export interface StoredPayload {
  readonly requestId: string;
  readonly integrationSortingOrder: number;
  /** The payload's length in characters. */
  readonly length: number;
  /** Its UTF-8 bytes, in order: read from storage as the consumer asks for them. */
  readonly bytes: () => AsyncGenerator<Uint8Array>;
}

/** The payload of a request, ready to be read; 404 when there is no such request. */
export async function openPayload(db: Db, requestId: string): Promise<StoredPayload> {
  const row = await db
    .selectFrom('ifw_bulk_import_request')
    .select(['integration_sorting_order', 'payload_chunks', 'payload_length', (eb) => eb.fn<number>('length', ['payload']).as('inline')])
    .where('request_id', '=', requestId)
    .executeTakeFirst();
  if (row === undefined) throw notFound(`No bulk import request ${requestId}.`);
  const count = row.payload_chunks;
  return {
    requestId,
    integrationSortingOrder: row.integration_sorting_order,
    length: count > 0 ? (row.payload_length ?? 0) : Number(row.inline),
    bytes: async function* () {
      if (count === 0) {
        const whole = await db
          .selectFrom('ifw_bulk_import_request')
          .select('payload')
          .where('request_id', '=', requestId)
          .executeTakeFirst();
        if (whole !== undefined) yield Buffer.from(whole.payload, 'utf8');
        return;
      }
      for (let seq = 0; seq < count; seq++) {
        const chunk = await db
          .selectFrom('ifw_bulk_import_payload_chunk')
          .select('data')
          .where('request_id', '=', requestId)
          .where('seq', '=', seq)
          .executeTakeFirst();
        // Deleted meanwhile (by an administrator or retention): the download ends short and says so.
        if (chunk === undefined) throw new Error(`chunk ${seq + 1} of ${count} of the payload of request ${requestId} is missing`);
        yield chunk.data;
      }
    },
  };
}

/**
 * The first `maxBytes` bytes of a payload as text (cut at a character boundary), and whether there is
 * more: what the console shows.
 */
export async function payloadHead(
  db: Db,
  requestId: string,
  maxBytes: number,
): Promise<{ text: string; truncated: boolean; length: number }> {
  const payload = await openPayload(db, requestId);
  const parts: Buffer[] = [];
  let held = 0;
  for await (const bytes of payload.bytes()) {
    parts.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    held += bytes.byteLength;
    if (held > maxBytes) break; // the generator is closed: no further chunk is read
  }
  const head = Buffer.concat(parts);
  if (head.length <= maxBytes) return { text: head.toString('utf8'), truncated: false, length: payload.length };
  let end = maxBytes;
  // Not in the middle of a character: back up over continuation bytes (10xxxxxx).
  while (end > 0 && (head[end]! & 0xc0) === 0x80) end--;
  return { text: head.subarray(0, end).toString('utf8'), truncated: true, length: payload.length };
}
