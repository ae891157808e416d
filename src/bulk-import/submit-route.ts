/**
 * The submit route's JSON parser. A small body with a Content-Length (up to SMALL_BODY_BYTES) is read
 * whole and parsed with fastify's JSON parser, as every other route's: for a few kilobytes that is the
 * fastest way. Any other body (large, or sent chunked) is read as a stream (upload.ts): the payload is
 * stored in chunks as it arrives and the body the route's schema validates carries '' in its place.
 * A received payload whose request is not accepted (the schema refused the body) is removed.
 */
import { AppError } from '../core/errors.js';
import { isUtf8 } from 'node:buffer';
import { jsonParser, notUtf8Error, type App } from '../http/server.js';
import type { Submitter } from './submit.js';
import { bodyTooLarge, CHUNK_BYTES, RECEIVED, receiveBody, REFUSED, type ReceivedBody } from './upload.js';

export { RECEIVED, type ReceivedBody } from './upload.js';

/** Bodies up to this size, with a Content-Length, are read whole. */
export const SMALL_BODY_BYTES = CHUNK_BYTES;

export function acceptStreamedBodies(scope: App, submitter: Submitter, bodyLimitBytes: number): void {
  const parseJson = jsonParser(scope);
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', (request, stream, done) => {
    const header = request.headers['content-length'];
    const contentLength = header === undefined ? undefined : Number(header);
    if (contentLength !== undefined && Number.isFinite(contentLength) && contentLength <= Math.min(SMALL_BODY_BYTES, bodyLimitBytes)) {
      const parts: Buffer[] = [];
      let received = 0;
      stream.on('data', (part: Buffer) => {
        received += part.length;
        parts.push(part);
      });
      stream.on('error', (err) => done(err, undefined));
      stream.on('end', () => {
        if (received !== contentLength) {
          done(new AppError(400, 'malformedBody', 'The Content-Length header does not match the body.'), undefined);
          return;
        }
        if (received === 0) {
          done(null, undefined);
          return;
        }
        const bytes = Buffer.concat(parts, received);
        if (!isUtf8(bytes)) return done(notUtf8Error(), undefined);
        parseJson(request, bytes.toString('utf8'), done);
      });
      return;
    }
    if (contentLength !== undefined && !(contentLength <= bodyLimitBytes)) {
      done(bodyTooLarge(), undefined);
      return;
    }
    receiveBody(stream, { submitter, bodyLimitBytes, contentLength, sha256: request.headers['idempotency-key'] !== undefined }).then(
      (body) => done(null, body),
      (err: Error) => done(err, undefined),
    );
  });
  // A body refused as it arrived is answered before its schema is checked.
  scope.addHook('preValidation', (request, _reply, next) => {
    next((request.body as ReceivedBody | undefined)?.[REFUSED]);
  });
  // The schema refused a body whose payload was received: nothing of it stays.
  scope.addHook('onError', (request, _reply, _error, next) => {
    const received = (request.body as ReceivedBody | undefined)?.[RECEIVED];
    if (received !== undefined) void submitter.discard(received);
    next();
  });
}
