/**
 * One error type with a closed set of codes. The HTTP layer turns every AppError into
 * `{"error":{"code","message"}}` with its status; anything else is an internal error.
 */
export type ErrorCode =
  | 'malformedBody'
  | 'payloadNotJson'
  | 'payloadTooDeep'
  | 'unknownIntegration'
  | 'bulkImportNotEnabled'
  | 'invalidIdempotencyKey'
  | 'idempotencyKeyReused'
  | 'idempotencyKeyInFlight'
  | 'payloadTooLarge'
  | 'bodyTooLarge'
  | 'unsupportedMediaType'
  | 'invalidQuery'
  | 'notFound'
  | 'methodNotAllowed'
  | 'conflict'
  | 'invalidStatusTransition'
  | 'requestNotEnded'
  | 'invalidRequest'
  | 'incompatibleChange'
  | 'lastAdministrator'
  | 'unauthorized'
  | 'forbidden'
  | 'tooManyRequests'
  | 'serviceUnavailable'
  | 'internalError';

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Response headers that belong to this answer (`WWW-Authenticate` on a 401, `Retry-After` on a 429). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (code: ErrorCode, message: string): AppError => new AppError(400, code, message);
export const notFound = (message: string): AppError => new AppError(404, 'notFound', message);
export const conflict = (code: ErrorCode, message: string): AppError => new AppError(409, code, message);
/** Input that breaks a schema or a rule: one code for all of them, the message names the property and what is allowed. */
export const invalidRequest = (message: string): AppError => new AppError(400, 'invalidRequest', message);
