/**
 * What the OpenAPI document says beyond the routes' own schemas, derived from their declarations so
 * that it cannot drift from what they do: how a caller authenticates (HTTP Basic and OAuth 2.0 bearer
 * tokens, with the permission and the permission sets that grant it), every status the service's own
 * checks can answer (401, 403 and 429 before any route runs; 400 for a query or body the route's
 * schemas refuse; 413 for a body; 415, on any operation, for a body that is not plain JSON; 404 for a
 * key), a unique operationId, the servers, license and contact. The console's HTML pages are not API
 * and are left out.
 */
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type { FastifySchema } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { Permission } from '../auth/permissions.js';
import { setsGranting } from '../auth/permission-sets.js';
import { API_BASE } from './odata.js';
import { ErrorSchema } from './schemas.js';

/** Named examples of a route's request body, shown by the OpenAPI document (`requestBody…examples`). */
export type BodyExamples = Readonly<Record<string, { readonly summary: string; readonly value: unknown }>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Examples of the body, for the OpenAPI document only (the route's schema stays as it is); a test
     * checks each against the body schema and sends it (test/http/openapi-examples.test.ts).
     */
    bodyExamples?: BodyExamples;
  }
}

interface RouteSeen {
  readonly method: string | readonly string[];
  readonly url: string;
  readonly config?: { readonly permission?: Permission; readonly session?: boolean; readonly bodyExamples?: BodyExamples };
}

const error = (description: string): TSchema => Type.Unsafe({ ...ErrorSchema, description });

/** The answers of the service's own checks, in words a client's documentation can show. */
const CHECKS = {
  400: error('The query, path or body breaks the rules of this operation; error.message names the part and the rule.'),
  401: error('No credentials, or credentials that are not valid (WWW-Authenticate says which schemes are accepted).'),
  403: error("The caller's permission sets do not grant the permission this operation needs."),
  404: error('Nothing has that key.'),
  413: error('The body is larger than this operation accepts; split the data into smaller requests.'),
  415: error(
    'The body is not JSON, or is compressed (Content-Encoding); send uncompressed application/json (or no body where the operation takes none).',
  ),
  429: error('Too many failed sign-ins for this user from this address; wait for the seconds Retry-After gives.'),
} as const;

const pascal = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * `GET …/bulkImportRequests` → `listBulkImportRequests`; `GET …/bulkImportRequests/:key` →
 * `getBulkImportRequestsByKey`; `POST …/:key/Microsoft.NAV.cancel` → `cancelBulkImportRequests`;
 * nested sets name their parents (`listIntegrationsFields`). Unique because method and path are.
 */
export function operationIdOf(method: string, url: string): string {
  const segments = url
    .replace(API_BASE, '')
    .split('/')
    .filter((s) => s !== '');
  const keyed = segments.at(-1)?.startsWith(':') === true;
  const last = segments.at(-1) ?? '';
  const action = last.startsWith('Microsoft.NAV.') ? last.slice('Microsoft.NAV.'.length) : undefined;
  const names = segments
    .filter((s) => !s.startsWith(':') && !s.startsWith('Microsoft.NAV.'))
    .map((s) => s.replace(/^\$/, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase()));
  const noun = names.map(pascal).join('') || 'ServiceDocument';
  // An action bound to one entity (`…/:key/Microsoft.NAV.run`), or to the collection (a test of what is not saved).
  if (action !== undefined) return segments.at(-2)?.startsWith(':') === true ? `${action}${noun}` : `${action}${noun}Collection`;
  const verb =
    { GET: keyed ? 'get' : 'list', POST: 'create', PUT: 'put', PATCH: 'update', DELETE: 'delete', HEAD: 'head' }[method] ??
    method.toLowerCase();
  return `${verb}${noun}${keyed ? 'ByKey' : ''}`;
}

const permissionWords = (permission: Permission): string =>
  `Needs the permission \`${permission}\`, granted by the permission sets ${setsGranting(permission).join(', ')}.`;

/** A route's schema as the document shows it (fastify-swagger's `transform`). */
export function documentedRoute(schema: FastifySchema | undefined, url: string, route: RouteSeen): { schema: FastifySchema; url: string } {
  const own = schema ?? {};
  if (route.config?.session === true) return { schema: { ...own, hide: true }, url };
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) as string;
  const permission = route.config?.permission ?? 'public';
  const api = url.startsWith(API_BASE);
  const responses: Record<string, unknown> = { ...((own.response ?? {}) as Record<string, unknown>) };
  const add = (status: keyof typeof CHECKS, when: boolean) => {
    if (when && responses[status] === undefined) responses[status] = CHECKS[status];
  };
  const body = own.body !== undefined;
  add(400, api);
  add(401, permission !== 'public');
  add(403, permission !== 'public');
  add(404, /\/:[A-Za-z]+/.test(url));
  add(413, body);
  // Any request that carries a body (or a Content-Encoding) fastify cannot read as JSON, with or without a body schema.
  add(415, true);
  add(429, permission !== 'public');
  const security: { [scheme: string]: readonly string[] }[] = permission === 'public' ? [] : [{ basicAuth: [] }, { bearerAuth: [] }];
  const description =
    permission === 'public' ? own.description : [own.description, permissionWords(permission)].filter((d) => d !== undefined).join('\n\n');
  // fastify-swagger moves `x-examples` of a body schema to the request body's named examples.
  const examples = route.config?.bodyExamples;
  const withExamples =
    examples === undefined || own.body === undefined ? {} : { body: { ...(own.body as object), 'x-examples': examples } };
  return {
    schema: {
      ...own,
      ...withExamples,
      operationId: own.operationId ?? operationIdOf(method, url),
      ...(description === undefined ? {} : { description }),
      security,
      response: responses,
    },
    url,
  };
}

type ResponseRef = { readonly $ref: string };
type OperationObject = { responses?: Record<string, unknown> };

/**
 * Answers no route writes itself and any operation can get, declared once under
 * `components.responses` and referenced from every operation: what Node's HTTP parser refuses before a
 * route is found (broken framing 400, a request that did not arrive in time 408, headers over 16 KB
 * 431, an `Expect` other than 100-continue 417), a key longer than the router takes (414, operations
 * with a key), and 503 while the database is busy, a token issuer's keys cannot be fetched or the
 * service is shutting down (errors.ts, storage, auth). A route that declares one of these itself keeps
 * its own (the health checks' 503 is their answer).
 */
const SHARED: Readonly<Record<string, { readonly name: string; readonly description: string; readonly keyed?: boolean }>> = {
  400: {
    name: 'MalformedRequest',
    description: 'The request is not valid HTTP/1.1 (request line, headers or framing), or its URL is not valid percent-encoding.',
  },
  408: { name: 'RequestTimeout', description: 'The request (headers and body) did not arrive within the request timeout.' },
  414: { name: 'KeyTooLong', description: 'A key in the URL is longer than 2048 characters; no resource has such a key.', keyed: true },
  417: { name: 'ExpectationFailed', description: 'An Expect header other than 100-continue.' },
  431: { name: 'HeadersTooLarge', description: 'The request line and headers are larger than 16 KB in all.' },
  503: {
    name: 'ServiceUnavailable',
    description:
      "The database is busy, a token issuer's signing keys cannot be fetched, or the service is shutting down; try again shortly.",
  },
};

/** What each feature's tag covers, for API portals that show them. */
const TAGS: Readonly<Record<string, { description: string }>> = {
  Health: { description: 'Liveness and readiness, without credentials.' },
  'Bulk Import API': { description: 'Submit payloads, poll them, read their record errors; cancel and reset.' },
  'Target tables': { description: 'The SQL tables records are written to, and their rows.' },
  Integrations: { description: 'How records become rows: fields, mappings, write mode.' },
  'Job Queue': { description: 'The entries that run in the background: on hold, ready, run now.' },
  'REST API': { description: 'Connections and paginated endpoints of REST APIs to import from; test and preview.' },
  'Import Runs': { description: 'Runs of REST API endpoints, their pages and outcome.' },
  'Users and applications': { description: 'Service users (Basic), registered OAuth 2.0 applications, the development key set.' },
  OData: { description: 'The service document and the CSDL `$metadata`.' },
};

/** The document with the shared answers (SHARED) declared once and referenced from every operation. */
export function withSharedResponses<D extends { paths?: Record<string, unknown>; components?: Record<string, unknown> }>(document: D): D {
  const responses = Object.fromEntries(
    Object.values(SHARED).map(({ name, description }) => [
      name,
      { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    ]),
  );
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).map(([url, item]) => [
      url,
      Object.fromEntries(
        Object.entries(item as Record<string, OperationObject>).map(([method, operation]) => {
          const own = { ...operation.responses };
          for (const [status, shared] of Object.entries(SHARED))
            if (own[status] === undefined && (shared.keyed !== true || url.includes('{')))
              own[status] = { $ref: `#/components/responses/${shared.name}` } satisfies ResponseRef;
          return [method, { ...operation, responses: own }];
        }),
      ),
    ]),
  );
  const schemas = { ...(document.components?.schemas as object | undefined), Error: { ...ErrorSchema, description: 'Every error answer' } };
  // The tags the operations name, in the order they first appear: API portals group operations by them.
  const tags = [
    ...new Set(Object.values(paths).flatMap((item) => Object.values(item).flatMap((op) => (op as { tags?: string[] }).tags ?? []))),
  ];
  return {
    ...document,
    tags: tags.map((name) => ({ name, ...TAGS[name] })),
    paths,
    components: { ...document.components, schemas, responses },
  };
}

/** The document's own parts: what it is, servers, license, contact, and the security schemes operations name. */
export const OPENAPI_DOCUMENT: NonNullable<FastifyDynamicSwaggerOptions['openapi']> = {
  info: {
    title: 'Integration service API',
    version: 'v1.0',
    description: 'Bulk Import API and integration configuration. Every error answer is {"error":{"code","message"}}.',
    contact: { name: "The service's administrators" },
    license: { name: 'Proprietary' },
  },
  servers: [{ url: '/', description: 'The service that serves this document' }],
  components: {
    securitySchemes: {
      basicAuth: {
        type: 'http',
        scheme: 'basic',
        description: 'A service user of the service (`POST users`). Refused when IFW_BASIC_AUTH=false.',
      },
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          "An OAuth 2.0 access token of a configured issuer (client credentials flow) for a registered application (`POST applications`); its permission sets are the application's. Each operation names the permission it needs and the sets that grant it.",
      },
    },
  },
};
