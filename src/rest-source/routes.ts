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
import { CONNECTION_EXAMPLES, ENDPOINT_EXAMPLES } from './body-examples.js';
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { notFound } from '../core/errors.js';
import { listIntegrations } from '../integrations/store.js';
import { answerOf, endpointAnswerOf } from './endpoint-answer.js';
import { NO_BOOKMARK } from './cursor-values.js';
import { titlesWhere } from '../pagination/index.js';
import { loadDryRunIntegration } from '../table-writer/dry-run.js';
import { detectRoutes } from './detect-routes.js';
import { testConnection } from './probe.js';
import type { SecretBox } from './secrets.js';
import type { OutboundPolicy } from './outbound-policy.js';
import {
  createConnection,
  createEndpoint,
  deleteConnection,
  deleteEndpoint,
  updateConnection,
  updateEndpoint,
  type ActiveRunLookup,
} from './service.js';
import { resolveUnsavedConnection, resolveUnsavedEndpoint } from './unsaved.js';
import {
  getConnection,
  getEndpoint,
  listBookmarks,
  listConnections,
  listEndpoints,
  loadConnection,
  loadEndpointWithConnection,
  type ConnectionView,
} from './store.js';
import {
  ConnectionPatchSchema,
  ConnectionProbeSchema,
  ConnectionProperties,
  EndpointPatchSchema,
  EndpointProbeSchema,
  EndpointProperties,
  LIMITS,
} from './schemas.js';
import type { EndpointSettings } from './settings.js';
import type { Database } from '../storage/database.js';
import type { RoutePlugin } from '../http/server.js';
import { Deleted, ErrorSchema, KeyParams, ODATA_BODY } from '../http/schemas.js';
import {
  type EndpointAnswer,
  PreviewAnswer,
  ReadOnlyIn,
  TestConnectionAnswer,
  preview,
  probe,
  restApiConnections as connections,
  restApiEndpoints as endpoints,
  answered,
  tags,
  withoutReadOnly,
} from './route-schemas.js';

export interface RestApiRouteDeps {
  /** The database itself (not a transaction): previews import page 1 in a transaction of their own and roll it back. */
  readonly db: Database;
  readonly clock: Clock;
  readonly secrets: SecretBox;
  /** Where test and preview requests may connect. */
  readonly outbound: OutboundPolicy;
  /** Deleting an endpoint is refused while it has a run in progress (import-runs' findActiveRun). */
  readonly activeRunOf: ActiveRunLookup;
}

export function restApiRoutes(deps: RestApiRouteDeps): RoutePlugin {
  const { db, clock, secrets } = deps;
  const fetchOptions = { outbound: deps.outbound };

  async function readConnection(code: string): Promise<ConnectionView> {
    const connection = await getConnection(db, code);
    if (connection === undefined) throw notFound(`No REST API connection with code '${code}'.`);
    return connection;
  }
  const endpointAnswer = (endpoint: EndpointSettings): Promise<EndpointAnswer> => endpointAnswerOf(db, endpoint);
  async function readEndpoint(code: string): Promise<EndpointAnswer> {
    const endpoint = await getEndpoint(db, code);
    if (endpoint === undefined) throw notFound(`No REST API endpoint with code '${code}'.`);
    return endpointAnswer(endpoint);
  }

  return (app) => {
    // ---- connections -----------------------------------------------------------------------
    const connectionResponses = { 200: connections.Entity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };

    app.get(
      connections.path,
      { config: connections.config('read'), schema: { summary: 'List REST API connections', tags, response: { 200: connections.List } } },
      async () => connections.list((await listConnections(db)).map(answered)),
    );

    app.get(
      connections.itemPath,
      {
        config: connections.config('read'),
        schema: { summary: 'Read a REST API connection', tags, params: KeyParams, response: connectionResponses },
      },
      async (request) => connections.entity(answered(await readConnection(connections.key(request.params.key)))),
    );

    app.post(
      connections.path,
      {
        config: { ...connections.config('configureConnections'), bodyExamples: CONNECTION_EXAMPLES },
        schema: {
          summary: 'Create a REST API connection',
          description:
            'Defaults: authType none, headers {}, queryParameters {}, timeoutMs 30000, maxRetries 3, initialDelayMs 500. Secrets (password, token, apiKey, clientSecret) are write-only: answers carry …IsSet flags.',
          tags,
          body: Type.Object(ConnectionProperties, ODATA_BODY),
          response: { ...connectionResponses, 201: connections.Entity },
        },
      },
      async (request, reply) => {
        const connection = await createConnection(db, request.body, clock, secrets);
        return reply
          .status(201)
          .header('location', connections.url(connection.code))
          .send(connections.entity(answered(connection)));
      },
    );

    app.patch(
      connections.itemPath,
      {
        config: connections.config('configureConnections'),
        schema: {
          summary: 'Change a REST API connection',
          description:
            'A secret left out keeps its stored value. Changing authType drops the settings and secrets of the old type. Refused (409) when an endpoint of the connection would no longer be valid.',
          tags,
          params: KeyParams,
          body: Type.Object(ConnectionPatchSchema.properties, ODATA_BODY),
          response: connectionResponses,
        },
      },
      async (request) =>
        connections.entity(answered(await updateConnection(db, connections.key(request.params.key), request.body, clock, secrets))),
    );

    app.delete(
      connections.itemPath,
      {
        config: connections.config('configureConnections'),
        schema: {
          summary: 'Delete a REST API connection',
          description: 'Refused with 409 while endpoints use it.',
          tags,
          params: KeyParams,
          response: { 204: Deleted, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteConnection(db, connections.key(request.params.key));
        return reply.status(204).send(null);
      },
    );

    const testDescription =
      'Answers 200 with {ok:true,status,url,message}, or {ok:false,error:{pageNo,url,message,status}} when the remote call failed.';
    app.post(
      connections.action('testConnection'),
      {
        config: connections.config('configureRest'),
        schema: {
          summary: 'Test a saved REST API connection',
          description: testDescription,
          tags,
          params: KeyParams,
          response: { 200: TestConnectionAnswer, 404: ErrorSchema },
        },
      },
      async (request) => {
        const connection = await loadConnection(db, connections.key(request.params.key), secrets);
        return probe(() => testConnection(connection, fetchOptions));
      },
    );

    app.post(
      connections.collectionAction('testConnection'),
      {
        config: connections.config('configureConnections'),
        schema: {
          summary: 'Test a REST API connection that is not saved',
          description: `The body is a connection as for POST (code optional), validated the same way; it uses only the secrets it carries. ${testDescription}`,
          tags,
          body: Type.Object(ConnectionProbeSchema.properties, ODATA_BODY),
          response: { 200: TestConnectionAnswer, 400: ErrorSchema },
        },
      },
      async (request) => {
        const connection = resolveUnsavedConnection(request.body);
        return probe(() => testConnection(connection, fetchOptions));
      },
    );

    // ---- endpoints -------------------------------------------------------------------------
    const endpointResponses = { 200: endpoints.Entity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };

    app.get(
      endpoints.path,
      { config: endpoints.config('read'), schema: { summary: 'List REST API endpoints', tags, response: { 200: endpoints.List } } },
      async () => {
        const recordsPaths = new Map((await listIntegrations(db)).map((i) => [i.sortingOrder, i.recordsPath]));
        const [stored, bookmarks] = await Promise.all([listEndpoints(db), listBookmarks(db)]);
        return endpoints.list(
          stored.map((e) => answerOf(e, recordsPaths.get(e.integrationSortingOrder), bookmarks.get(e.code) ?? NO_BOOKMARK)),
        );
      },
    );

    app.get(
      endpoints.itemPath,
      {
        config: endpoints.config('read'),
        schema: { summary: 'Read a REST API endpoint', tags, params: KeyParams, response: endpointResponses },
      },
      async (request) => endpoints.entity(await readEndpoint(endpoints.key(request.params.key))),
    );

    app.post(
      endpoints.path,
      {
        config: { ...endpoints.config('configureRest'), bodyExamples: ENDPOINT_EXAMPLES },
        schema: {
          summary: 'Create a REST API endpoint',
          description: `Defaults: method GET, paginationType none, maxPages ${LIMITS.maxPages.default}, scheduleSeconds null. ${titlesWhere('counted')} need pageSize and a responseDataPath that is set: a path, or "" (also "$") when the records are the response root or where the integration's records path says. A setting of another pagination type is refused.`,
          tags,
          body: Type.Object({ ...EndpointProperties, ...ReadOnlyIn }, ODATA_BODY),
          response: { ...endpointResponses, 201: endpoints.Entity },
        },
      },
      async (request, reply) => {
        const endpoint = await createEndpoint(db, withoutReadOnly(request.body), clock);
        return reply
          .status(201)
          .header('location', endpoints.url(endpoint.code))
          .send(endpoints.entity(await endpointAnswer(endpoint)));
      },
    );

    app.patch(
      endpoints.itemPath,
      {
        config: endpoints.config('configureRest'),
        schema: {
          summary: 'Change a REST API endpoint',
          description:
            'Changing paginationType keeps the settings of the old type (answers show them; switching back uses them) and takes those kept for the new type. A setting of a type not in use may be sent with its kept value (or null, false, to drop it), never a new value. Changing method to GET drops the body.',
          tags,
          params: KeyParams,
          body: Type.Object({ ...EndpointPatchSchema.properties, ...ReadOnlyIn }, ODATA_BODY),
          response: endpointResponses,
        },
      },
      async (request) => {
        const endpoint = await updateEndpoint(db, endpoints.key(request.params.key), withoutReadOnly(request.body), clock);
        return endpoints.entity(await endpointAnswer(endpoint));
      },
    );

    app.delete(
      endpoints.itemPath,
      {
        config: endpoints.config('configureRest'),
        schema: {
          summary: 'Delete a REST API endpoint and its schedule',
          description: 'Refused with 409 while an import run of it is Queued or Running.',
          tags,
          params: KeyParams,
          response: { 204: Deleted, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteEndpoint(db, endpoints.key(request.params.key), clock, deps.activeRunOf);
        return reply.status(204).send(null);
      },
    );

    const previewDescription =
      "Fetches the first page only and writes nothing. Its records are found as a run finds them (recordsFoundBy) and imported through the endpoint's integration as a run imports them, in a transaction that is rolled back: outcome is what the run would do with them (status, counts, messages), rows shows the first 5 (each record's row or its errors). warnings are amber: pagination that would stop after page 1 too early, source paths that match nothing, each with its likely fix. Answers 200 with {ok:true,url,status,recordsFoundBy,recordCount,records,rows,outcome,warnings,next}, or {ok:false,error:{pageNo,url,message,status}} when page 1 fails as a run would fail on it (a remote error, or no records where the settings say).";
    app.post(
      endpoints.action('previewFirstPage'),
      {
        config: endpoints.config('configureRest'),
        schema: {
          summary: 'Preview the first page of a saved REST API endpoint',
          description: previewDescription,
          tags,
          params: KeyParams,
          response: { 200: PreviewAnswer, 404: ErrorSchema },
        },
      },
      async (request) => {
        const { endpoint, connection } = await loadEndpointWithConnection(db, endpoints.key(request.params.key), secrets);
        const integration = await loadDryRunIntegration(db, endpoint.integrationSortingOrder);
        return probe(() => preview(connection, endpoint, integration, fetchOptions));
      },
    );

    app.post(
      endpoints.collectionAction('previewFirstPage'),
      {
        config: endpoints.config('configureRest'),
        schema: {
          summary: 'Preview the first page of a REST API endpoint that is not saved',
          description: `The body is an endpoint as for POST (code and integrationSortingOrder optional) on a saved connection, validated the same way. ${previewDescription}`,
          tags,
          body: Type.Object({ ...EndpointProbeSchema.properties, ...ReadOnlyIn }, ODATA_BODY),
          response: { 200: PreviewAnswer, 400: ErrorSchema },
        },
      },
      async (request) => {
        const { connection, endpoint } = await resolveUnsavedEndpoint(db, withoutReadOnly(request.body), secrets);
        const sortingOrder = request.body.integrationSortingOrder;
        const integration = sortingOrder === undefined ? undefined : await loadDryRunIntegration(db, sortingOrder);
        return probe(() => preview(connection, endpoint, integration, fetchOptions));
      },
    );

    detectRoutes(app, { db, secrets, fetchOptions });
  };
}
