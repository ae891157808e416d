/**
 * `restApiEndpoints('<code>')/Microsoft.NAV.detectPagination` and its unbound twin for an endpoint
 * that is not saved: detect-pagination.ts's probe, answered with the proposal in the API's own field
 * names (so that it can be sent back as it is in a PATCH), the evidence, the pages fetched and the
 * problems of the endpoint's current settings. Like the other probes, a remote failure of page 1 is
 * `{"ok":false,"error":…}` with 200; a configuration that is not valid is a 400 as on save.
 */
import { Type, type Static } from 'typebox';
import { Integer, ErrorSchema, KeyParams, ODATA_BODY } from '../http/schemas.js';
import type { App } from '../http/server.js';
import { getIntegration } from '../integrations/store.js';
import { OWN_SETTINGS, PAGINATION_SYMPTOMS, type PaginationSettings } from '../pagination/index.js';
import { detectPagination, type PaginationDetection } from './detect-pagination.js';
import type { FetchOptions } from './fetch-pages.js';
import type { RestConnection, RestEndpoint } from './model.js';
import { PaginationAnswers, paginationFieldsOf } from './pagination-fields.js';
import { nullable, probe, ProbeError, ReadOnlyIn, restApiEndpoints as endpoints, tags, withoutReadOnly } from './route-schemas.js';
import { EndpointProbeSchema } from './schemas.js';
import type { SecretBox } from './secrets.js';
import { loadEndpointWithConnection } from './store.js';
import { resolveUnsavedEndpoint } from './unsaved.js';
import type { Database } from '../storage/database.js';

const ProposedSchema = Type.Object(
  {
    paginationType: Type.String(),
    ...Type.Partial(Type.Object({ ...PaginationAnswers.texts, ...PaginationAnswers.switches })).properties,
    pageSize: nullable(Integer()),
    responseDataPath: Type.String({ description: '"" when the response root is the record array' }),
  },
  { description: "The proposed Pagination section in the endpoint's field names: send it as it is in a PATCH to use it" },
);
/** The proposed settings as the API's fields: the type, its own settings, Page Size and Response Data Path. */
export type ProposedFields = Static<typeof ProposedSchema>;

/** The proposal in the API's flat field names: what a PATCH of the endpoint takes. */
export function proposedFields(settings: PaginationSettings): ProposedFields {
  const flat = paginationFieldsOf(settings, {}) as unknown as Record<string, string | boolean | null>;
  const own = OWN_SETTINGS.filter((s) => s.types.includes(settings.type)).map((s) => [s.setting.field, flat[s.setting.field] ?? null]);
  return {
    paginationType: settings.type,
    ...Object.fromEntries(own),
    pageSize: settings.pageSize,
    responseDataPath: settings.responseDataPath,
  } as ProposedFields;
}

export const DetectAnswer = Type.Object({
  ok: Type.Boolean(),
  url: Type.Optional(Type.String({ description: 'Page 1 as sent, secrets redacted' })),
  status: Type.Optional(Integer()),
  proposal: Type.Optional(ProposedSchema),
  evidence: Type.Optional(Type.Array(Type.String(), { description: 'What the responses showed, and the setting each led to' })),
  notes: Type.Optional(Type.Array(Type.String(), { description: 'What was guessed or could not be seen: check before saving' })),
  pages: Type.Optional(
    Type.Array(Type.Object({ pageNo: Integer(), url: Type.String(), recordCount: nullable(Integer()) }), {
      description: 'The pages fetched with the proposal: page 1 and at most two more',
    }),
  ),
  problems: Type.Optional(
    Type.Array(
      Type.Object({
        symptom: Type.String({ description: `One of: ${PAGINATION_SYMPTOMS.join('; ')}` }),
        message: Type.String(),
        remedy: Type.String(),
      }),
      {
        description: "Where the endpoint's current settings and the API disagree, in the spec's Pagination problems words, with the remedy",
      },
    ),
  ),
  error: Type.Optional(ProbeError),
});

const answerOf = ({ settings, evidence, notes, pages, problems, ...page }: PaginationDetection) => ({
  ...page,
  proposal: proposedFields(settings),
  evidence: [...evidence],
  notes: [...notes],
  pages: pages.map((p) => ({ ...p })),
  problems: problems.map((p) => ({ ...p })),
});

/** The probe as routes and the console run it: the endpoint's integration's records path, and the answer shaped. */
export async function detectFor(
  db: Database,
  connection: RestConnection,
  endpoint: RestEndpoint,
  integration: number | undefined,
  options: FetchOptions,
) {
  const recordsPath = integration === undefined ? '' : ((await getIntegration(db, integration))?.recordsPath ?? '');
  return probe(async () => answerOf(await detectPagination(connection, endpoint, recordsPath, options)));
}

const description =
  "Fetches page 1 and at most two more, writes nothing, and proposes the Pagination section: the record array (responseDataPath), paginationType and its settings, the real pageSize, each with its evidence; notes say what was guessed. problems are where the endpoint's current settings and the API disagree (the spec's Pagination problems), each with its remedy. Answers 200 with {ok:true,url,status,proposal,evidence,notes,pages,problems}, or {ok:false,error} when page 1 fails.";

export function detectRoutes(app: App, deps: { db: Database; secrets: SecretBox; fetchOptions: FetchOptions }): void {
  const { db, secrets, fetchOptions } = deps;
  app.post(
    endpoints.action('detectPagination'),
    {
      config: endpoints.config('configureRest'),
      schema: {
        summary: 'Detect and check the pagination of a saved REST API endpoint',
        description,
        tags,
        params: KeyParams,
        response: { 200: DetectAnswer, 404: ErrorSchema },
      },
    },
    async (request) => {
      const { endpoint, connection } = await loadEndpointWithConnection(db, endpoints.key(request.params.key), secrets);
      return detectFor(db, connection, endpoint, endpoint.integrationSortingOrder, fetchOptions);
    },
  );
  app.post(
    endpoints.collectionAction('detectPagination'),
    {
      config: endpoints.config('configureRest'),
      schema: {
        summary: 'Detect the pagination of a REST API endpoint that is not saved',
        description: `The body is an endpoint as for POST (code and integrationSortingOrder optional; the pagination settings it carries are checked) on a saved connection, validated the same way. ${description}`,
        tags,
        body: Type.Object({ ...EndpointProbeSchema.properties, ...ReadOnlyIn }, ODATA_BODY),
        response: { 200: DetectAnswer, 400: ErrorSchema },
      },
    },
    async (request) => {
      const input = withoutReadOnly(request.body);
      const { connection, endpoint } = await resolveUnsavedEndpoint(db, input, secrets);
      return detectFor(db, connection, endpoint, input.integrationSortingOrder, fetchOptions);
    },
  );
}
