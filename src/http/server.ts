/**
 * Builds the fastify server: OData URL rewriting, JSON-only bodies with a global size limit,
 * permission declarations enforced on every route, one error handler, the OpenAPI document and UI
 * at /docs, and the OData `$metadata` document derived from the routes. Feature folders contribute their
 * routes as plugins; the composition root passes them in.
 */
import type { Metrics } from '../core/metrics.js';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import Fastify, {
  LogController,
  type FastifyRequest,
  type FastifyBaseLogger,
  type FastifyInstance,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticate.js';
import { authorizeRequests } from './authorize.js';
import { enforcePermissions } from './permissions.js';
import { AppError } from '../core/errors.js';
import { findNul, NUL_REASON } from '../core/bounds.js';
import { SHARED_COMPILERS } from './compilers.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling, MAX_PATH_PARAM_LENGTH } from './errors.js';
import { API_BASE, formatOf, rewriteODataUrl } from './odata.js';
import { documentedRoute, OPENAPI_DOCUMENT, withSharedResponses } from './openapi.js';
import { metadataRoutes, recordRouteShapes } from './metadata.js';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export type RoutePlugin = (app: App) => Promise<void> | void;

/** How long a connection may take and how many may be open (docs/configuration.md). */
export interface ConnectionLimits {
  /** A request, headers and body, must have arrived within this time. */
  readonly requestTimeoutMs: number;
  /** Silence allowed while a request arrives (or before the first); none while an answer is worked on. */
  readonly idleTimeoutMs: number;
  /** An idle keep-alive connection is closed after this time. */
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  requestTimeoutMs: 300_000,
  idleTimeoutMs: 30_000,
  keepAliveTimeoutMs: 72_000,
  maxConnections: 1000,
};

export interface ServerOptions {
  readonly logger: Logger;
  readonly bodyLimitBytes: number;
  readonly routes: readonly RoutePlugin[];
  /** Who is calling; every route that is not public asks it. */
  readonly authenticator: Pick<Authenticator, 'authenticate'>;
  readonly connections?: ConnectionLimits;
  /**
   * Reverse proxies whose X-Forwarded-For, -Proto and -Host are believed: their addresses, CIDR ranges or
   * proxy-addr's names (loopback, …), or a hop count; false (the default): none, the connection is the client.
   */
  readonly trustProxy?: false | number | readonly string[];
  /** Counts the answers by route pattern and status (`ifw_http_requests_total`). */
  readonly metrics?: Pick<Metrics, 'httpRequests'>;
}

/**
 * The idle timeout guards the arrival of a request, not the work on its answer: a preview that waits
 * two minutes for a slow API must not lose its connection. Node sets the socket's timeout again for
 * the next request on the connection (and the keep-alive timeout in between).
 */
function noIdleTimeoutWhileAnswering(app: App): void {
  app.addHook('preHandler', (request, _reply, done) => {
    // A request injected in-process (tests, light-my-request) has a stand-in socket without timeouts.
    const { socket } = request.raw;
    if (socket instanceof Socket) socket.setTimeout(0);
    done();
  });
}

/** `nosniff` on every answer: a body is what its Content-Type says, never guessed (console pages add more). */
function noSniffing(app: App): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    void reply.header('x-content-type-options', 'nosniff');
    done(null, payload);
  });
}

/** Routes declared as `/bulkImportRequests/:key` are documented as callers write them: `/bulkImportRequests({key})`. */
function documentODataKeys(document: { paths?: Record<string, unknown> }): { paths?: Record<string, unknown> } {
  if (document.paths === undefined) return document;
  const paths = Object.fromEntries(
    Object.entries(document.paths).map(([url, item]) => [url.replace(/\/\{([A-Za-z]+)\}(?=\/|$)/g, '({$1})'), item]),
  );
  return { ...document, paths };
}

/**
 * Many clients send `Content-Type: application/json` on every POST, also with no body (a bound action
 * such as `…/Microsoft.NAV.cancel`). An empty body is therefore no body at all, whatever the headers
 * say: routes that take none run, and routes that need one say so through their body schema
 * (errors.ts). A body that is present and not JSON is still refused by fastify's own parser.
 */
function acceptEmptyJsonBodies(app: App): void {
  const parseJson = jsonParser(app);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) return done(notUtf8Error());
    parseJson(request, bytes.toString('utf8'), done);
  });
}

/** A body with a `__proto__` key (or `constructor` holding `prototype`): valid JSON, refused by name. */
export const forbiddenKeyError = (): AppError =>
  new AppError(
    400,
    'invalidRequest',
    'The request body uses the key "__proto__" or "constructor"."prototype", which the service refuses; rename it.',
  );

/** A body holding U+0000 in a key or a text: no database column may hold it (core/bounds.ts). */
export const nulError = (at: string): AppError =>
  new AppError(400, 'invalidRequest', `${at === '' ? 'The request body' : at}: ${NUL_REASON}; remove it.`);

/** A body whose bytes are not UTF-8: refused rather than read with U+FFFD in place of the bad bytes. */
export const notUtf8Error = (): AppError =>
  new AppError(400, 'malformedBody', 'The request body is not valid UTF-8: send JSON encoded as UTF-8.');

export type JsonParser = (request: FastifyRequest, text: string, done: (err: Error | null, body?: unknown) => void) => void;

/**
 * fastify's JSON parser (which refuses `__proto__` and `constructor.prototype` keys), except that a body
 * refused for such a key, valid JSON as it is, is refused by name rather than called "not valid JSON".
 * Every JSON body parser of the service uses it.
 */
export function jsonParser(app: App): JsonParser {
  const parseJson = app.getDefaultJsonParser(
    app.initialConfig.onProtoPoisoning ?? 'error',
    app.initialConfig.onConstructorPoisoning ?? 'error',
  );
  return (request, text, done) => {
    void parseJson(request, text, (err, value) => {
      if (err === null) {
        // JSON writes U+0000 only as the escape `\u0000`: a body without it cannot hold one.
        const nul = text.includes('\\u0000') ? findNul(value) : undefined;
        return nul === undefined ? done(null, value) : done(nulError(nul));
      }
      if (isJson(text)) return done(forbiddenKeyError());
      return done(err);
    });
  };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A body encoded with `Content-Encoding` (gzip, deflate, br) is refused with 415 rather than read as if it
 * were plain JSON. `identity` is the same as none.
 */
function refuseEncodedBodies(app: App): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding === undefined || encoding.trim().toLowerCase() === 'identity' || encoding.trim() === '') return done();
    done(new AppError(415, 'unsupportedMediaType', `Content-Encoding "${encoding}" is not supported; send the body uncompressed.`));
  });
}

/**
 * `$format=json` (or `application/json`, with OData's parameters such as `;odata.metadata=minimal`) is
 * what every answer of the API is anyway; OData clients append it, so it is taken, and removed, on every
 * API route before the query is checked. Any other `$format` is refused: the API speaks JSON only.
 * `$metadata` declares `$format` itself (it also speaks XML).
 */
function acceptJsonFormat(app: App): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const query = request.query as Record<string, unknown>;
    if (!Object.hasOwn(query, '$format') || !request.url.startsWith(API_BASE) || request.url.startsWith(`${API_BASE}/$metadata`))
      return done();
    const format = query.$format;
    if (formatOf(format) !== 'json')
      return done(
        new AppError(
          400,
          'invalidQuery',
          `$format must be json (or application/json): the API answers JSON only; got ${JSON.stringify(format)}.`,
        ),
      );
    delete query.$format;
    done();
  });
}

/**
 * An API route that declares no query parameters refuses any, as the routes that declare some refuse
 * the others (their schemas allow no more): an ignored `$filter` would answer a question the caller
 * did not ask.
 */
function refuseUndeclaredQueryOptions(app: App): void {
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.routeOptions.schema?.querystring !== undefined || request.routeOptions.config.session === true) return done();
    if (!request.url.startsWith(API_BASE)) return done();
    const names = Object.keys(request.query as object);
    if (names.length === 0) return done();
    done(
      new AppError(
        400,
        'invalidQuery',
        `${request.method} ${request.routeOptions.url ?? ''} takes no query options; got ${names.map((n) => `"${n}"`).join(', ')}.`,
      ),
    );
  });
}

export async function buildServer(options: ServerOptions): Promise<App> {
  const limits = options.connections ?? DEFAULT_CONNECTION_LIMITS;
  const app = Fastify({
    // fastify takes a hop count too (its types say string | string[] | boolean only).
    trustProxy: (typeof options.trustProxy === 'object' ? [...options.trustProxy] : (options.trustProxy ?? false)) as string[] | boolean,
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node checks the request timeout on this interval (its default, 30 s, would let a request run that much over).
    http: {
      connectionsCheckingInterval: Math.min(1000, limits.requestTimeoutMs),
      headersTimeout: Math.min(60_000, limits.requestTimeoutMs),
    },
    loggerInstance: options.logger,
    // Every request has an id, on each of its log lines (fastify's child logger) and in its answer's
    // `request-id` header; a caller's own, when well-formed, is kept, so that both sides log the same.
    requestIdHeader: false,
    genReqId: requestIdOf,
    bodyLimit: options.bodyLimitBytes,
    rewriteUrl: (req) => rewriteODataUrl(req.url ?? '/'),
    // One line per request, written by the onResponse hook below, instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // verbose: each schema error carries its schema and the value, so that errors.ts can say what is
    // allowed and what was sent.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, verbose: true } },
    // Compiled once per process, whatever the number of servers built in it (compilers.ts).
    schemaController: { compilersFactory: SHARED_COMPILERS },
    return503OnClosing: true,
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  // JSON only: a body of any other type is answered 415 instead of reaching validation as a string.
  app.server.maxConnections = limits.maxConnections;
  app.removeContentTypeParser('text/plain');
  noIdleTimeoutWhileAnswering(app);
  noSniffing(app);
  acceptEmptyJsonBodies(app);
  refuseEncodedBodies(app);
  acceptJsonFormat(app);
  refuseUndeclaredQueryOptions(app);
  enforcePermissions(app);
  installErrorHandling(app);
  authorizeRequests(app, options.authenticator);

  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });

  // The access line holds the request id, method, path (no query), status and time, none of them a
  // secret, so it skips the redaction pass, which costs as much as the rest of the line (≈ 4.5 µs).
  const accessLog = options.logger.child({}, { redact: { paths: [], censor: '[redacted]' } });
  app.addHook('onResponse', (request, reply, done) => {
    accessLog.info(
      {
        reqId: request.id,
        method: request.method,
        url: request.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
    done();
  });

  const counter = options.metrics?.httpRequests;
  if (counter !== undefined) {
    // By the route's pattern, never the URL: the label values stay few (a 404 has no route).
    app.addHook('onResponse', (request, reply, done) => {
      counter.inc({ route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) });
      done();
    });
  }

  const plain = app as unknown as FastifyInstance;
  await plain.register(swagger, {
    openapi: OPENAPI_DOCUMENT,
    transform: ({ schema, url, route }) => documentedRoute(schema, url, route),
    transformObject: (documentObject) =>
      ('openapiObject' in documentObject
        ? withSharedResponses(documentODataKeys(documentObject.openapiObject))
        : documentObject.swaggerObject) as never,
  });
  await plain.register(swaggerUi, { routePrefix: '/docs' });

  // `$metadata` and the service document describe the routes registered after this line.
  const shapes = recordRouteShapes(plain);
  for (const routes of options.routes) await app.register(async (scope) => routes(scope));
  await plain.register(metadataRoutes(shapes));
  return app;
}

/** The header that carries a request's id, in the answer and, optionally, in the request. */
export const REQUEST_ID_HEADER = 'request-id';
/** A caller's id is taken when it is 1 to 128 letters, digits and `.`, `_`, `:`, `-` (a UUID, a trace id): never text for a log line to trip on. */
const WELL_FORMED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id of a request: the caller's `request-id` when well-formed, else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && WELL_FORMED_ID.test(given) ? given : randomUUID();
}
