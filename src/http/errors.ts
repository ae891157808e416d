/**
 * The one place that turns errors into `{"error":{"code","message"}}`. AppErrors carry their own
 * status and code; fastify's own client errors (unparsable JSON, schema violations, body limit, media
 * type) are translated; anything else is an internal error, logged once with its cause.
 *
 * Some answers are written before a request reaches fastify's handlers: a URL that is not valid
 * percent-encoding or a path segment over the router's limit (`frameworkErrors`), and what Node's HTTP
 * parser refuses (headers over 16 KB, broken framing, an `Expect` it does not know; `clientError` and
 * `checkExpectation`). They get the same body, from here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../core/errors.js';
import { describeSchemaErrors, type SchemaPart } from './schema-errors.js';

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { error: { code, message } };
}

function translate(err: FastifyError, request: FastifyRequest): AppError | undefined {
  // Refused before routing: the URL itself.
  if (err.code === 'FST_ERR_BAD_URL')
    return new AppError(
      400,
      'invalidRequest',
      'The URL is not valid: a percent-escape (%xx) is malformed or does not decode to UTF-8 text.',
    );
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return new AppError(
      414,
      'invalidRequest',
      `A key in the URL is longer than ${MAX_PATH_PARAM_LENGTH} characters; no resource has such a key.`,
    );
  // No route here: say so, whatever else is wrong with the request (its body, its media type).
  if (request.is404) return notFoundAt(request);
  if (err instanceof AppError) return err;
  if (err.validation !== undefined) {
    const part: SchemaPart = err.validationContext ?? 'body';
    return new AppError(400, 'invalidRequest', describeSchemaErrors(err.validation, part, request.body === undefined));
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError(400, 'malformedBody', `The request body is not valid JSON: ${err.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(413, 'bodyTooLarge', 'The request body is larger than the service accepts (IFW_BODY_LIMIT_MB).');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(415, 'unsupportedMediaType', 'Send the body as JSON with Content-Type: application/json.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(400, 'malformedBody', 'The Content-Length header does not match the body.');
    case 'FST_ERR_BAD_URL':
      return new AppError(
        400,
        'invalidRequest',
        'The URL is not valid: a percent-escape (%xx) is malformed or does not decode to UTF-8 text.',
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError(
        414,
        'invalidRequest',
        `A key in the URL is longer than ${MAX_PATH_PARAM_LENGTH} characters; no resource has such a key.`,
      );
    default:
      break;
  }
  if (err instanceof SyntaxError) return new AppError(400, 'malformedBody', `The request body is not valid JSON: ${err.message}`);
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const code: ErrorCode =
      status === 404 ? 'notFound' : status === 405 ? 'methodNotAllowed' : status === 413 ? 'bodyTooLarge' : 'invalidRequest';
    return new AppError(status, code, err.message);
  }
  return undefined;
}

/** The router's limit on one path segment (a key with its quotes and percent-escapes). */
export const MAX_PATH_PARAM_LENGTH = 2048;

const notFoundAt = (request: FastifyRequest): AppError =>
  new AppError(404, 'notFound', `No resource at ${request.method} ${request.url.split('?')[0] ?? request.url}.`);

function send(request: FastifyRequest, reply: FastifyReply, err: FastifyError): FastifyReply {
  const known = translate(err, request);
  if (known !== undefined) {
    if (known.status >= 500) request.log.warn({ code: known.code }, known.message);
    return reply.status(known.status).headers(known.headers).send(errorBody(known.code, known.message));
  }
  request.log.error({ err }, 'internal error');
  return reply.status(500).send(errorBody('internalError', 'An internal error occurred; it has been logged.'));
}

/** fastify's `frameworkErrors`: a bad percent-escape or an over-long path segment, before routing. */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  void send(request, reply, err);
}

function rawAnswer(status: number, code: ErrorCode, message: string): string {
  const body = JSON.stringify(errorBody(code, message));
  return (
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** Node's HTTP parser refused the request (no fastify request exists): answer with the error body and close. */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const answer =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? rawAnswer(431, 'invalidRequest', 'The request line and headers are larger than the service accepts (16 KB in all).')
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? rawAnswer(408, 'invalidRequest', 'The request did not arrive in time.')
        : rawAnswer(400, 'invalidRequest', 'The request is not valid HTTP/1.1 (its request line, headers or framing).');
  socket.end(answer);
}

/** An `Expect` header other than `100-continue`: 417, with the error body. */
export function expectationFailed(request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify(
    errorBody('invalidRequest', `The service does not support "Expect: ${String(request.headers.expect)}"; only 100-continue.`),
  );
  response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => send(request, reply, err));
  app.setNotFoundHandler((request, reply) => {
    const err = notFoundAt(request);
    return reply.status(404).send(errorBody(err.code, err.message));
  });
  app.server.on('checkExpectation', expectationFailed);
}
