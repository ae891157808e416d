/**
 * Ids of requests and runs are UUID version 7 (RFC 9562): a GUID like any other to callers, but
 * time-ordered, so new rows append to the end of the primary key index instead of landing on random
 * pages. That keeps each group commit small (few pages to write and fsync) however large the table grows.
 */
import { randomFillSync } from 'node:crypto';

const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let offset = POOL_SIZE;

function random10(): Buffer {
  if (offset + 10 > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 10);
  offset += 10;
  return bytes;
}

/** The last id made in this process, and its millisecond. */
const last = Buffer.alloc(16);
let lastMs = -1;

/** Adds one to the last 7 bytes of `bytes` (the random part's tail); false when they were all 0xff. */
function increment(bytes: Buffer): boolean {
  for (let i = 15; i >= 9; i--) {
    if (bytes[i] !== 0xff) {
      bytes[i]!++;
      return true;
    }
    bytes[i] = 0;
  }
  return false;
}

/**
 * The id for a row made at `nowMs`. Ids made in the same millisecond by this process follow each other
 * (the last one plus one, RFC 9562 §6.2 method 2), so that rows sorted by time and then id, such as the
 * requests of a burst of submissions, come in the order they were made; a new millisecond starts from
 * fresh random bits, with room for 2^55 more ids in it.
 */
export function newTimeOrderedId(nowMs: number): string {
  const bytes = Buffer.alloc(16);
  if (nowMs === lastMs && increment(last)) last.copy(bytes);
  else {
    bytes.writeUIntBE(nowMs, 0, 6);
    random10().copy(bytes, 6);
    bytes[6] = 0x70 | (bytes[6]! & 0x0f); // version 7
    bytes[8] = 0x80 | (bytes[8]! & 0x3f); // variant 10
    bytes[9] = bytes[9]! & 0x7f; // the counter's headroom
    bytes.copy(last);
    lastMs = nowMs;
  }
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
