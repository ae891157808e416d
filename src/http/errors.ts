/**
 * The one place that turns errors into `{"error":{"code","message"}}`. AppErrors carry their own
 * status and code; fastify's own client errors (unparsable JSON, schema violations, body limit, media
 * type) are translated; anything else is an internal error, logged once with its cause.
 */
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

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const known = translate(err, request);
    if (known !== undefined) {
      if (known.status >= 500) request.log.warn({ code: known.code }, known.message);
      return reply.status(known.status).headers(known.headers).send(errorBody(known.code, known.message));
    }
    request.log.error({ err }, 'internal error');
    return reply.status(500).send(errorBody('internalError', 'An internal error occurred; it has been logged.'));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    return reply.status(404).send(errorBody('notFound', `No resource at ${request.method} ${path}.`));
  });
}
