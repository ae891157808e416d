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
import { getIntegration, listIntegrations } from '../integrations/store.js';
import { FetchError } from './http-client.js';
import { recordsFoundBy } from './page-records.js';
import { loadPreviewIntegration, previewFirstPage, type PagePreview, type PreviewIntegration } from './preview.js';
import { testConnection } from './probe.js';
import type { RestConnection, RestEndpoint } from './model.js';
import { enginePagination } from './runtime-forms.js';
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
import { endpointViewOf, type EndpointSettings, type EndpointView } from './settings.js';
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
const RECORDS_FOUND_BY =
  "Read-only, ignored on input: which setting finds a page's records (the integration's records path, else Response Data Path, else the response root) and why that one";
/** An answer may be sent back as it is (GET, change, PATCH): its read-only property is accepted there and ignored. */
const ReadOnlyIn = { recordsFoundBy: Type.Optional(Type.String({ description: RECORDS_FOUND_BY })) };
const withoutReadOnly = <T extends { recordsFoundBy?: string }>({ recordsFoundBy: _ignored, ...input }: T): Omit<T, 'recordsFoundBy'> =>
  input;
type EndpointAnswer = EndpointView & { readonly recordsFoundBy: string };

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
  responseDataPath: nullable(Type.String({ description: 'As configured: null when not set, "" or "$" when blank' })),
  allowCrossOrigin: Type.Boolean(),
  scheduleSeconds: nullable(Type.Integer()),
  recordsFoundBy: Type.String({ description: RECORDS_FOUND_BY }),
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
const PreviewRow = Type.Object({
  recordNo: Type.Integer(),
  row: Type.Optional(
    Type.Record(Type.String(), nullable(Type.Union([Type.String(), Type.Number()])), {
      description: 'The row the integration would write: target field → value',
    }),
  ),
  errors: Type.Optional(Type.Array(Type.String(), { description: "The record's errors, worded as a bulk import words them" })),
});
const PreviewAnswer = Type.Object({
  ok: Type.Boolean(),
  url: Type.Optional(Type.String({ description: 'Page 1 as sent, secrets redacted' })),
  status: Type.Optional(Type.Integer()),
  recordsFoundBy: Type.Optional(Type.String({ description: RECORDS_FOUND_BY })),
  recordCount: Type.Optional(Type.Integer({ description: 'Records on page 1, found as a run finds them' })),
  records: Type.Optional(Type.Array(Type.Unknown(), { description: 'The first 5 records' })),
  rows: Type.Optional(
    Type.Array(PreviewRow, {
      description: "The first 5 records through the endpoint's integration: each its row, or its errors (nothing is written)",
    }),
  ),
  integrationError: Type.Optional(Type.String({ description: 'Why the integration cannot run: a run fails with this message' })),
  next: Type.Optional(PreviewNext),
  error: Type.Optional(ProbeError),
});

/** The preview as the answer schema types it (mutable arrays). */
const preview = async (connection: RestConnection, endpoint: RestEndpoint, integration: PreviewIntegration | undefined) => {
  const { rows, ...page }: PagePreview = await previewFirstPage(connection, endpoint, integration);
  return {
    ...page,
    records: [...page.records],
    ...(rows === undefined ? {} : { rows: rows.map((r) => ('row' in r ? { ...r, row: { ...r.row } } : { ...r, errors: [...r.errors] })) }),
    next: { ...page.next },
  };
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
  /** The endpoint as answers show it, with the sentence saying which setting finds its records. */
  const answerOf = (endpoint: EndpointSettings, recordsPath: string | undefined): EndpointAnswer => ({
    ...endpointViewOf(endpoint),
    recordsFoundBy: recordsFoundBy(enginePagination(endpoint.pagination).responseDataPath, recordsPath ?? ''),
  });
  async function endpointAnswer(endpoint: EndpointSettings): Promise<EndpointAnswer> {
    return answerOf(endpoint, (await getIntegration(db.kysely, endpoint.integrationSortingOrder))?.recordsPath);
  }
  async function readEndpoint(code: string): Promise<EndpointAnswer> {
    const endpoint = await getEndpoint(db.kysely, code);
    if (endpoint === undefined) throw notFound(`No REST API endpoint with code '${code}'.`);
    return endpointAnswer(endpoint);
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
      async () => {
        const recordsPaths = new Map((await listIntegrations(db.kysely)).map((i) => [i.sortingOrder, i.recordsPath]));
        const endpoints = await listEndpoints(db.kysely);
        return {
          '@odata.context': ENDPOINTS_CONTEXT,
          value: endpoints.map((e) => answerOf(e, recordsPaths.get(e.integrationSortingOrder))),
        };
      },
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
            'Defaults: method GET, paginationType none, maxPages 100, scheduleSeconds null. Page Number and Offset/Limit need pageSize and a responseDataPath that is set: a path, or "" (also "$") when the records are the response root or where the integration\'s records path says. A setting of another pagination type is refused.',
          tags,
          body: Type.Object({ ...EndpointProperties, ...ReadOnlyIn }, odataBody),
          response: { ...endpointResponses, 201: EndpointEntity },
        },
      },
      async (request, reply) => {
        const endpoint = await createEndpoint(db, withoutReadOnly(request.body), clock);
        return reply
          .status(201)
          .header('location', endpointUrl(endpoint.code))
          .send(entity(ENDPOINTS_CONTEXT, await endpointAnswer(endpoint)));
      },
    );

    app.patch(
      `${ENDPOINTS}/:key`,
      {
        config: { permission: 'configureRest' },
        schema: {
          summary: 'Change a REST API endpoint',
          description:
            'Changing paginationType keeps the settings of the old type (answers show them; switching back uses them) and takes those kept for the new type. A setting of a type not in use may be sent with its kept value (or null, false, to drop it), never a new value. Changing method to GET drops the body.',
          tags,
          params: KeyParams,
          body: Type.Object({ ...EndpointPatchSchema.properties, ...ReadOnlyIn }, odataBody),
          response: endpointResponses,
        },
      },
      async (request) => {
        const endpoint = await updateEndpoint(db, endpointKey(request.params.key), withoutReadOnly(request.body), clock);
        return entity(ENDPOINTS_CONTEXT, await endpointAnswer(endpoint));
      },
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
      "Fetches the first page only and writes nothing. Its records are found as a run finds them (recordsFoundBy), the first 5 go through the endpoint's integration (rows: each record's row or its errors). Answers 200 with {ok:true,url,status,recordsFoundBy,recordCount,records,rows,next}, or {ok:false,error:{pageNo,url,message,status}} when page 1 fails as a run would fail on it (a remote error, or no records where the settings say).";
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
        const integration = await loadPreviewIntegration(db, endpoint.integrationSortingOrder);
        return probe(() => preview(connection, endpoint, integration));
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
          body: Type.Object({ ...EndpointProbeSchema.properties, ...ReadOnlyIn }, odataBody),
          response: { 200: PreviewAnswer, 400: ErrorSchema },
        },
      },
      async (request) => {
        const { connection, endpoint } = await resolveUnsavedEndpoint(db, withoutReadOnly(request.body), secrets);
        const sortingOrder = request.body.integrationSortingOrder;
        const integration = sortingOrder === undefined ? undefined : await loadPreviewIntegration(db, sortingOrder);
        return probe(() => preview(connection, endpoint, integration));
      },
    );
  };
}
