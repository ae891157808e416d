/**
 * Receiving a submission whose body is large (or of unknown length) as a stream: the body is read as
 * it arrives (submit-body.ts), the payload's bytes are checked as a JSON text (json-text-check.ts) and
 * written in chunks of CHUNK_BYTES under the request id the request will get, and the limits are
 * enforced as the bytes arrive: the body limit, and Max Payload Size as soon as the integration is
 * known (integrationSortingOrder usually comes first; when it comes after the payload, Max Payload
 * Size is checked at the end). A violation answers at once (413), without reading on.
 *
 * Memory stays bounded: at most one chunk being filled and two being written; while two writes are
 * under way, reading pauses (TCP pushes back on the client). The chunks are gathered in reused
 * buffers (chunk-buffers.ts). A payload that
 * fits in one chunk is never written as a chunk: it goes into the request row, like a small body.
 *
 * Nothing is left behind: when the body breaks off (the client disconnected), is refused or fails the
 * route's schema, the chunks written so far are removed (Submitter.discard).
 */
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import { AppError } from '../core/errors.js';
import { forbiddenKeyError, notUtf8Error } from '../http/server.js';
import type { Integration } from '../integrations/model.js';
import { ChunkBuffers } from './chunk-buffers.js';
import { JsonTextCheck } from './json-text-check.js';
import { SubmitBodyScanner } from './submit-body.js';
import { checkPayloadSize, MAX_PAYLOAD_DEPTH, payloadNotJson, payloadTooDeep, type ReceivedPayload, type Submitter } from './submit.js';
import { isStorableInteger } from '../core/bounds.js';

/** Bytes per stored chunk. */
export const CHUNK_BYTES = 1 << 20;

const buffers = new ChunkBuffers(CHUNK_BYTES);

/** The most bytes a member other than payload may take (a sorting order, an annotation). */
const MAX_MEMBER_BYTES = 64 * 1024;

/** The body as the route's schema sees it: the payload stands in as '' and the received payload rides along. */
export const RECEIVED = Symbol('received payload');

/** A body refused while it arrived: the route answers with this error (see submit-route.ts). */
export const REFUSED = Symbol('refused body');

export interface ReceivedBody {
  [key: string]: unknown;
  [RECEIVED]?: ReceivedPayload;
  [REFUSED]?: AppError;
}

export const bodyTooLarge = (): AppError =>
  new AppError(413, 'bodyTooLarge', 'The request body is larger than the service accepts (IFW_BODY_LIMIT_MB).');

/**
 * Reads the body from `stream`. Resolves with the body (undefined when it is empty), whose received
 * payload is already being written; rejects with an AppError as soon as the body is refused, after
 * which the stream is no longer read. The caller owns the outcome: a body that does not become a
 * request must be handed to `submitter.discard`.
 */
export function receiveBody(
  stream: Readable,
  options: {
    submitter: Submitter;
    bodyLimitBytes: number;
    contentLength: number | undefined;
    /** Compute the payload's SHA-256 as it arrives (a submission with an Idempotency-Key). */
    sha256?: boolean;
  },
): Promise<ReceivedBody | undefined> {
  const { submitter, bodyLimitBytes, contentLength } = options;
  return new Promise((resolve, reject) => {
    if (contentLength !== undefined && contentLength > bodyLimitBytes) {
      reject(bodyTooLarge());
      return;
    }
    const requestId = submitter.newRequestId();
    const members: Record<string, unknown> = {};
    const check = new JsonTextCheck(MAX_PAYLOAD_DEPTH);
    let received = 0;
    let payloadBytes = 0;
    let payloadChars = 0;
    let hasPayload = false;
    let integration: Integration | undefined;
    let settled = false;
    // The chunk being filled, and the writes under way (in order: each waits for the one before).
    let chunk: Uint8Array | null = null;
    let used = 0;
    let seq = 0;
    let inFlight = 0;
    let written: Promise<void> = Promise.resolve();
    let writeFailed: unknown;
    let text: string | null = null;
    const hash = options.sha256 === true ? createHash('sha256') : undefined;

    const payload = (): ReceivedPayload => ({
      ...(hash === undefined ? {} : { sha256: hash.digest('hex') }),
      requestId,
      text,
      chunks: seq,
      bytes: payloadBytes,
      length: payloadChars,
      notJson: check.failure,
      tooDeep: check.tooDeep,
      written,
    });

    const stop = (): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onAbort);
      stream.off('close', onClose);
    };

    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      stop();
      if (chunk !== null) buffers.give(chunk);
      chunk = null;
      void submitter.discard({ requestId, written });
      if (!(err instanceof AppError) || stream.destroyed) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      // Refused: answered at once, and the rest of the body is read and dropped (up to the body limit),
      // so that the client, still sending, can read the answer instead of finding the connection reset.
      stream.on('data', (data: Buffer) => {
        received += data.length;
        if (received > bodyLimitBytes) stream.destroy();
      });
      stream.on('error', () => undefined);
      stream.resume();
      resolve({ [REFUSED]: err });
    };

    /** Writes `data`, a view of `buffer`, and gives the buffer back once the write is done. */
    const writeChunk = (data: Uint8Array, buffer: Uint8Array): void => {
      const no = seq++;
      inFlight++;
      written = written.then(() =>
        submitter.chunks.writeChunk(requestId, no, data).then(
          () => {
            buffers.give(buffer);
            inFlight--;
            if (inFlight < 2 && stream.isPaused() && !settled) stream.resume();
          },
          (err: unknown) => {
            buffers.give(buffer);
            inFlight--;
            writeFailed ??= err;
            fail(err);
            throw err;
          },
        ),
      );
      // Keep the chain from reporting an unhandled rejection: failures are handled above.
      written.catch(() => undefined);
    };

    const onPayload = (bytes: Uint8Array): void => {
      if (settled) return;
      payloadBytes += bytes.length;
      hash?.update(bytes);
      payloadChars += characters(bytes);
      if (integration !== undefined) checkPayloadSize(integration, payloadBytes, true);
      if (!check.write(bytes)) {
        // Not a JSON text: nothing more is worth storing. Refused at once when the integration is
        // known to accept it, else at the end (the integration's own refusal comes first).
        if (integration !== undefined) throw check.tooDeep ? payloadTooDeep() : payloadNotJson(check.failure!);
        return;
      }
      let from = 0;
      while (from < bytes.length) {
        chunk ??= buffers.take();
        const take = Math.min(CHUNK_BYTES - used, bytes.length - from);
        chunk.set(bytes.subarray(from, from + take), used);
        used += take;
        from += take;
        if (used === CHUNK_BYTES) {
          writeChunk(chunk, chunk);
          chunk = null;
          used = 0;
        }
      }
    };

    const scanner = new SubmitBodyScanner(
      {
        onMember(key, value) {
          // As the JSON parser of every other body: a "__proto__" member would set the object's prototype.
          if (key === '__proto__') {
            fail(forbiddenKeyError());
            return;
          }
          members[key] = value;
          if (key === 'integrationSortingOrder' && typeof value === 'number' && isStorableInteger(value)) {
            stream.pause();
            submitter.integration(value).then(
              (found) => {
                integration = found;
                try {
                  checkPayloadSize(found, payloadBytes, true);
                } catch (err) {
                  fail(err);
                  return;
                }
                if (!settled && inFlight < 2) stream.resume();
              },
              (err: unknown) => fail(err),
            );
          }
        },
        onPayloadStart() {
          hasPayload = true;
        },
        onPayload,
        onPayloadEnd() {
          if (seq === 0) {
            // One chunk or less: the payload goes into the request row.
            text = chunk === null ? '' : Buffer.from(chunk.buffer, 0, used).toString('utf8');
            if (chunk !== null) buffers.give(chunk);
          } else if (chunk !== null) {
            writeChunk(chunk.subarray(0, used), chunk);
          }
          chunk = null;
          used = 0;
        },
      },
      MAX_MEMBER_BYTES,
    );

    // The body must be UTF-8 as it arrives (a sequence may be cut between pieces): invalid bytes would
    // otherwise reach the stored payload and read back as U+FFFD.
    const utf8 = new TextDecoder('utf-8', { fatal: true });
    const onData = (data: Buffer): void => {
      if (settled) return;
      received += data.length;
      try {
        if (received > bodyLimitBytes) throw bodyTooLarge();
        checkUtf8(utf8, data, true);
        scanner.write(data);
      } catch (err) {
        fail(err);
        return;
      }
      if (inFlight >= 2) stream.pause();
    };

    const onEnd = (): void => {
      if (settled) return;
      try {
        checkUtf8(utf8, new Uint8Array(0), false);
        if (hasPayload && check.failure === null) check.end();
        if (received === 0) {
          settled = true;
          stop();
          resolve(undefined);
          return;
        }
        if (contentLength !== undefined && received !== contentLength) {
          throw new AppError(400, 'malformedBody', 'The Content-Length header does not match the body.');
        }
        const scanned = scanner.end();
        settled = true;
        stop();
        if (!scanned.object) {
          // Not an object: no payload was read; the route's schema says what is wrong with the value.
          resolve(scanned.value as ReceivedBody);
          return;
        }
        const body: ReceivedBody = { ...members };
        if (hasPayload) {
          body['payload'] = '';
          body[RECEIVED] = payload();
        }
        resolve(body);
      } catch (err) {
        fail(err);
      }
    };

    const onAbort = (): void => fail(new AppError(400, 'malformedBody', 'The request body was cut off: the client disconnected.'));
    const onClose = (): void => {
      if (!stream.readableEnded) onAbort();
    };

    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onAbort);
    stream.on('close', onClose);
    stream.resume();
  });
}

/** Decodes to check only: a byte sequence that is not UTF-8 is refused (400 malformedBody). */
function checkUtf8(decoder: TextDecoder, bytes: Uint8Array, more: boolean): void {
  try {
    decoder.decode(bytes, { stream: more });
  } catch {
    throw notUtf8Error();
  }
}

/** Blocks of a payload whose characters are counted at once when they are ASCII, as most are. */
const COUNT_BLOCK = 1024;

/**
 * The characters (code points) UTF-8 `bytes` hold: every byte that does not continue a character.
 * A block of ASCII is its length, which Node answers natively (about fifteen times faster than a
 * look at each byte); only blocks with other characters are counted byte by byte.
 */
function characters(bytes: Uint8Array): number {
  let count = 0;
  for (let at = 0; at < bytes.length; at += COUNT_BLOCK) {
    const block = bytes.subarray(at, at + COUNT_BLOCK);
    if (isAscii(block)) count += block.length;
    else for (let i = 0; i < block.length; i++) if ((block[i]! & 0xc0) !== 0x80) count++;
  }
  return count;
}
