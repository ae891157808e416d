/**
 * `restApiConnections('<code>')` and `restApiEndpoints('<code>')`: OData-style CRUD, plus the probes
 * that show what a configuration would do before it is saved (or after): `Microsoft.NAV.testConnection`
 * and `Microsoft.NAV.previewFirstPage`, bound to a saved entity or unbound with a body. The rules live
 * beside it (connection-rules.ts, endpoint-rules.ts); this file only speaks HTTP.
 *
 * Secrets never appear in an answer: connections show `passwordIsSet`, `tokenIsSet`, `apiKeyIsSet` and
 * `clientSecretIsSet` instead (the response schemas list no secret property, so none can slip out).
 *
 * A probe whose remote call fails still answers 200: the probe worked, the remote did not. The body is
 * then `{"ok":false,"error":{"pageNo","url","message","status"}}`; a configuration that is not valid
 * is a 400 like on save.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { notFound } from '../core/errors.js';
import { FetchError } from './http-client.js';
import { previewFirstPage, testConnection, type PagePreview } from './probe.js';
import type { RestConnection, RestEndpoint } from './model.js';
import type { SecretBox } from './secrets.js';
import {
  createConnection,
  createEndpoint,
  deleteConnection,
  deleteEndpoint,
  resolveUnsavedConnection,
  resolveUnsavedEndpoint,
  updateConnection,
  updateEndpoint,
  type ActiveRunLookup,
} from './service.js';
import { getConnection, getEndpoint, listConnections, listEndpoints, loadConnection, loadEndpoint, type ConnectionView } from './store.js';
import {
  ConnectionPatchSchema,
  ConnectionProbeSchema,
  ConnectionProperties,
  EndpointPatchSchema,
  EndpointProbeSchema,
  EndpointProperties,
} from './schemas.js';
import { endpointViewOf, type EndpointView } from './settings.js';
import type { Database } from '../storage/database.js';
import { API_BASE, parseStringKey, requireKey } from '../http/odata.js';
import type { RoutePlugin } from '../http/server.js';

const CONNECTIONS = `${API_BASE}/restApiConnections`;
const ENDPOINTS = `${API_BASE}/restApiEndpoints`;
const CONNECTIONS_CONTEXT = `${API_BASE}/$metadata#restApiConnections`;
const ENDPOINTS_CONTEXT = `${API_BASE}/$metadata#restApiEndpoints`;
const tags = ['REST API'];

/** OData clients may annotate a body (`@odata.context` from a GET sent back); anything else unknown is refused. */
const odataBody = { additionalProperties: false, patternProperties: { '^@odata\\.': {} } } as const;

const ErrorSchema = Type.Object({ error: Type.Object({ code: Type.String(), message: Type.String() }) });
const KeyParams = Type.Object({ key: Type.String() });
const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const StringMap = Type.Record(Type.String(), Type.String());

const ConnectionOut = {
  code: Type.String(),
  baseUrl: Type.String(),
  authType: Type.String(),
  username: nullable(Type.String()),
  passwordIsSet: Type.Boolean(),
  tokenIsSet: Type.Boolean(),
  apiKeyName: nullable(Type.String()),
  apiKeyIn: nullable(Type.String()),
  apiKeyIsSet: Type.Boolean(),
  tokenUrl: nullable(Type.String()),
  clientId: nullable(Type.String()),
  clientSecretIsSet: Type.Boolean(),
  scope: nullable(Type.String()),
  headers: StringMap,
  query: StringMap,
  timeoutMs: Type.Integer(),
  maxRetries: Type.Integer(),
  initialDelayMs: Type.Integer(),
};
const EndpointOut = {
  code: Type.String(),
  connectionCode: Type.String(),
  path: Type.String(),
  method: Type.String(),
  headers: StringMap,
  query: StringMap,
  body: nullable(Type.String()),
  integrationSortingOrder: Type.Integer(),
  paginationType: Type.String(),
  nextLinkJsonPath: nullable(Type.String()),
  pageParameterName: nullable(Type.String()),
  offsetParameterName: nullable(Type.String()),
  limitParameterName: nullable(Type.String()),
  pageSize: nullable(Type.Integer()),
  maxPages: Type.Integer(),
  responseDataPath: Type.String(),
  allowCrossOrigin: Type.Boolean(),
  scheduleSeconds: nullable(Type.Integer()),
};

const ConnectionEntity = Type.Object({ '@odata.context': Type.String(), ...ConnectionOut });
const ConnectionList = Type.Object({ '@odata.context': Type.String(), value: Type.Array(Type.Object(ConnectionOut)) });
const EndpointEntity = Type.Object({ '@odata.context': Type.String(), ...EndpointOut });
const EndpointList = Type.Object({ '@odata.context': Type.String(), value: Type.Array(Type.Object(EndpointOut)) });
const Deleted = Type.Null({ description: 'Deleted' });

const ProbeError = Type.Object({ pageNo: Type.Integer(), url: Type.String(), message: Type.String(), status: nullable(Type.Integer()) });
const TestConnectionAnswer = Type.Object({
  ok: Type.Boolean(),
  status: Type.Optional(nullable(Type.Integer())),
  url: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
  error: Type.Optional(ProbeError),
});
const PreviewNext = Type.Object(
  {
    kind: Type.String({ description: 'next, stop or fail' }),
    url: Type.Optional(Type.String({ description: 'next: the URL of page 2, secrets redacted' })),
    reason: Type.Optional(Type.String({ description: 'stop: singlePage, noNextLink, shortPage, maxPages or recordsNotCountable' })),
    detail: Type.Optional(Type.String()),
    warning: Type.Optional(Type.String()),
    error: Type.Optional(Type.String({ description: 'fail: why a run would fail after page 1' })),
  },
  { description: 'What pagination would do after page 1' },
);
const PreviewAnswer = Type.Object({
  ok: Type.Boolean(),
  url: Type.Optional(Type.String({ description: 'Page 1 as sent, secrets redacted' })),
  status: Type.Optional(Type.Integer()),
  recordCount: Type.Optional(nullable(Type.Integer({ description: 'Records at Response Data Path; null when it finds no array' }))),
  records: Type.Optional(Type.Array(Type.Unknown(), { description: 'The first few records' })),
  next: Type.Optional(PreviewNext),
  error: Type.Optional(ProbeError),
});

/** The preview as the answer schema types it (mutable arrays). */
const preview = async (connection: RestConnection, endpoint: RestEndpoint) => {
  const page: PagePreview = await previewFirstPage(connection, endpoint);
  return { ...page, records: [...page.records], next: { ...page.next } };
};

const entity = <T extends object>(context: string, value: T) => ({ '@odata.context': `${context}/$entity`, ...value });
const connectionUrl = (code: string) => `${CONNECTIONS}('${code}')`;
const endpointUrl = (code: string) => `${ENDPOINTS}('${code}')`;

/** A remote failure is an answer, not an error: the probe itself worked. */
async function probe<T extends object>(
  run: () => Promise<T>,
): Promise<(T & { ok: boolean }) | { ok: false; error: { pageNo: number; url: string; message: string; status: number | null } }> {
  try {
    const result = await run();
    return { ok: true, ...result };
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    return { ok: false, error: { pageNo: err.pageNo, url: err.url, message: err.message, status: err.status } };
  }
}

export interface RestApiRouteDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly secrets: SecretBox;
  /** Deleting an endpoint is refused while it has a run in progress (import-runs' findActiveRun). */
  readonly activeRunOf: ActiveRunLookup;
}

export function restApiRoutes(deps: RestApiRouteDeps): RoutePlugin {
  const { db, clock, secrets } = deps;
  const connectionKey = (raw: string): string => requireKey(parseStringKey(raw), 'REST API connection', raw);
  const endpointKey = (raw: string): string => requireKey(parseStringKey(raw), 'REST API endpoint', raw);

  async function readConnection(code: string): Promise<ConnectionView> {
    const connection = await getConnection(db.kysely, code);
    if (connection === undefined) throw notFound(`No REST API connection with code '${code}'.`);
    return connection;
  }
  async function readEndpoint(code: string): Promise<EndpointView> {
    const endpoint = await getEndpoint(db.kysely, code);
    if (endpoint === undefined) throw notFound(`No REST API endpoint with code '${code}'.`);
    return endpointViewOf(endpoint);
  }

  return (app) => {
    // ---- connections -----------------------------------------------------------------------
    const connectionResponses = { 200: ConnectionEntity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };

    app.get(
      CONNECTIONS,
      { config: { permission: 'read' }, schema: { summary: 'List REST API connections', tags, response: { 200: ConnectionList } } },
      async () => ({
        '@odata.context': CONNECTIONS_CONTEXT,
        value: await listConnections(db.kysely),
      }),
    );

    app.get(
      `${CONNECTIONS}/:key`,
      {
        config: { permission: 'read' },
        schema: { summary: 'Read a REST API connection', tags, params: KeyParams, response: connectionResponses },
      },
      async (request) => entity(CONNECTIONS_CONTEXT, await readConnection(connectionKey(request.params.key))),
    );

    app.post(
      CONNECTIONS,
      {
        config: { permission: 'configureRest' },
        schema: {
          summary: 'Create a REST API connection',
          description:
            'Defaults: authType none, headers {}, query {}, timeoutMs 30000, maxRetries 3, initialDelayMs 500. Secrets (password, token, apiKey, clientSecret) are write-only: answers carry …IsSet flags.',
          tags,
          body: Type.Object(ConnectionProperties, odataBody),
          response: { ...connectionResponses, 201: ConnectionEntity },
        },
      },
      async (request, reply) => {
        const connection = await createConnection(db, request.body, clock, secrets);
        return reply.status(201).header('location', connectionUrl(connection.code)).send(entity(CONNECTIONS_CONTEXT, connection));
      },
    );

    app.patch(
      `${CONNECTIONS}/:key`,
      {
        config: { permission: 'configureRest' },
        schema: {
          summary: 'Change a REST API connection',
          description:
            'A secret left out keeps its stored value. Changing authType drops the settings and secrets of the old type. Refused (409) when an endpoint of the connection would no longer be valid.',
          tags,
          params: KeyParams,
          body: Type.Object(ConnectionPatchSchema.properties, odataBody),
          response: connectionResponses,
        },
      },
      async (request) =>
        entity(CONNECTIONS_CONTEXT, await updateConnection(db, connectionKey(request.params.key), request.body, clock, secrets)),
    );

    app.delete(
      `${CONNECTIONS}/:key`,
      {
        config: { permission: 'configureRest' },
        schema: {
          summary: 'Delete a REST API connection',
          description: 'Refused with 409 while endpoints use it.',
          tags,
          params: KeyParams,
          response: { 204: Deleted, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteConnection(db, connectionKey(request.params.key));
        return reply.status(204).send(null);
      },
    );

    const testDescription =
      'Answers 200 with {ok:true,status,url,message}, or {ok:false,error:{pageNo,url,message,status}} when the remote call failed.';
    app.post(
      `${CONNECTIONS}/:key/Microsoft.NAV.testConnection`,
      {
        config: { permission: 'configureRest' },
        schema: {
          summary: 'Test a saved REST API connection',
          description: testDescription,
          tags,
          params: KeyParams,
          response: { 200: TestConnectionAnswer, 404: ErrorSchema },
        },
      },
      async (request) => {
        const connection = await loadConnection(db, connectionKey(request.params.key), secrets);
        return probe(() => testConnection(connection));
      },
    );

    app.post(
      `${CONNECTIONS}/Microsoft.NAV.testConnection`,
      {
        config: { permission: 'configureRest' },
        schema: {
          summary: 'Test a REST API connection that is not saved',
          description: `The body is a connection as for POST (code optional), validated the same way; it uses only the secrets it carries. ${testDescription}`,
          tags,
          body: Type.Object(ConnectionProbeSchema.properties, odataBody),
          response: { 200: TestConnectionAnswer, 400: ErrorSchema },
        },
      },
      async (request) => {
        const connection = resolveUnsavedConnection(request.body);
        return probe(() => testConnection(connection));
      },
    );

    // ---- endpoints -------------------------------------------------------------------------
    const endpointResponses = { 200: EndpointEntity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };

    app.get(
      ENDPOINTS,
      { config: { permission: 'read' }, schema: { summary: 'List REST API endpoints', tags, response: { 200: EndpointList } } },
      async () => ({
        '@odata.context': ENDPOINTS_CONTEXT,
        value: (await listEndpoints(db.kysely)).map(endpointViewOf),
      }),
    );

    app.get(
      `${ENDPOINTS}/:key`,
      {
        config: { permission: 'read' },
        schema: { summary: 'Read a REST API endpoint', tags, params: KeyParams, response: endpointResponses },
      },
      async (request) => entity(ENDPOINTS_CONTEXT, await readEndpoint(endpointKey(request.params.key))),
    );

    app.post(
      ENDPOINTS,
      {
        config: { permission: 'configureRest' },
        schema: {
          summary: 'Create a REST API endpoint',
          description:
            'Defaults: method GET, paginationType none, maxPages 100, scheduleSeconds null. Page Number and Offset/Limit need pageSize and responseDataPath ("$" when the response root is the array).',
          tags,
          body: Type.Object(EndpointProperties, odataBody),
          response: { ...endpointResponses, 201: EndpointEntity },
        },
      },
      async (request, reply) => {
        const endpoint = await createEndpoint(db, request.body, clock);
        return reply
          .status(201)
          .header('location', endpointUrl(endpoint.code))
          .send(entity(ENDPOINTS_CONTEXT, endpointViewOf(endpoint)));
      },
    );

    app.patch(
      `${ENDPOINTS}/:key`,
      {
        config: { permission: 'configureRest' },
        schema: {
          summary: 'Change a REST API endpoint',
          description: 'Changing paginationType drops the settings of the old type; changing method to GET drops the body.',
          tags,
          params: KeyParams,
          body: Type.Object(EndpointPatchSchema.properties, odataBody),
          response: endpointResponses,
        },
      },
      async (request) =>
        entity(ENDPOINTS_CONTEXT, endpointViewOf(await updateEndpoint(db, endpointKey(request.params.key), request.body, clock))),
    );

    app.delete(
      `${ENDPOINTS}/:key`,
      {
        config: { permission: 'configureRest' },
        schema: {
          summary: 'Delete a REST API endpoint and its schedule',
          description: 'Refused with 409 while an import run of it is Queued or Running.',
          tags,
          params: KeyParams,
          response: { 204: Deleted, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteEndpoint(db, endpointKey(request.params.key), clock, deps.activeRunOf);
        return reply.status(204).send(null);
      },
    );

    const previewDescription =
      'Fetches the first page only and imports nothing. Answers 200 with {ok:true,url,status,recordCount,records,next}, or {ok:false,error:{pageNo,url,message,status}} when the remote call failed.';
    app.post(
      `${ENDPOINTS}/:key/Microsoft.NAV.previewFirstPage`,
      {
        config: { permission: 'configureRest' },
        schema: {
          summary: 'Preview the first page of a saved REST API endpoint',
          description: previewDescription,
          tags,
          params: KeyParams,
          response: { 200: PreviewAnswer, 404: ErrorSchema },
        },
      },
      async (request) => {
        const endpoint = await loadEndpoint(db, endpointKey(request.params.key));
        const connection = await loadConnection(db, endpoint.connectionCode, secrets);
        return probe(() => preview(connection, endpoint));
      },
    );

    app.post(
      `${ENDPOINTS}/Microsoft.NAV.previewFirstPage`,
      {
        config: { permission: 'configureRest' },
        schema: {
          summary: 'Preview the first page of a REST API endpoint that is not saved',
          description: `The body is an endpoint as for POST (code and integrationSortingOrder optional) on a saved connection, validated the same way. ${previewDescription}`,
          tags,
          body: Type.Object(EndpointProbeSchema.properties, odataBody),
          response: { 200: PreviewAnswer, 400: ErrorSchema },
        },
      },
      async (request) => {
        const { connection, endpoint } = await resolveUnsavedEndpoint(db, request.body, secrets);
        return probe(() => preview(connection, endpoint));
      },
    );
  };
}
