/**
 * What a caller may send for REST API connections and endpoints: the typebox schemas shared by the
 * HTTP API (bodies, and so the OpenAPI document) and `ifw apply` (document validation), their input
 * types, and the limits their descriptions quote and the rules enforce.
 */
import { Type, type Static } from 'typebox';
import { DEFAULT_MAX_PAGES, MAX_MAX_PAGES, MAX_PAGE_SIZE, PAGINATION_TYPES, titlesWhere } from '../pagination/index.js';
import { AUTH_TYPES, HTTP_METHODS, RESPONSE_ACTIONS } from './model.js';
import { CURSOR_FIELD_TYPES, DEFAULT_INITIAL } from './cursor-values.js';
import { PaginationInputs, SWITCH_SETTINGS } from './pagination-fields.js';
import { Integer } from '../http/schemas.js';

/** At most this many response actions per endpoint. */
export const MAX_RESPONSE_ACTIONS = 20;

/** Response Data Path value that means the same as blank ("the response root is the array"); the pagination engine reads it as ''. */
export const ROOT_ARRAY_PATH = '$';

export const LIMITS = {
  timeoutMs: { min: 100, max: 300_000, default: 30_000 },
  maxRetries: { min: 0, max: 10, default: 3 },
  initialDelayMs: { min: 0, max: 60_000, default: 500 },
  pageSize: { min: 1, max: MAX_PAGE_SIZE },
  maxPages: { min: 1, max: MAX_MAX_PAGES, default: DEFAULT_MAX_PAGES },
  scheduleSeconds: { min: 60, max: 604_800 },
} as const;

// No JSON-schema `default`s here: the HTTP validator would fill them into PATCH bodies and reset
// settings the caller did not send. The rules (connection-rules.ts, endpoint-rules.ts) apply them.
const nullableString = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Null()], { description }));
const secret = (usedBy: string) =>
  nullableString(`${usedBy}. Write-only: answers show <name>IsSet instead; omitted keeps the stored value, null clears it`);
const textOrNumber = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Null()], { description }));
const stringMap = (description: string) => Type.Optional(Type.Record(Type.String(), Type.String(), { description }));
/** Answers say `queryParameters` (`query` is a method of generated OData clients); the former name is still read. */
const formerQuery = Type.Optional(
  Type.Record(Type.String(), Type.String(), {
    description: 'Former name of queryParameters, still accepted (not both); answers say queryParameters',
    deprecated: true,
  }),
);
const { timeoutMs: T, maxRetries: R, initialDelayMs: D, pageSize: P, maxPages: M, scheduleSeconds: S } = LIMITS;

export const ConnectionProperties = {
  code: Type.String({ description: '1 to 50 letters, digits, "_", "." or "-", starting with a letter or digit' }),
  baseUrl: Type.String({
    description: 'Absolute http or https URL without credentials, query or fragment; endpoint paths are resolved against it',
  }),
  authType: Type.Optional(Type.String({ description: `One of ${AUTH_TYPES.join(', ')}; default none` })),
  username: nullableString('basic: the user name'),
  password: secret('basic: the password'),
  token: secret('bearer: the token sent as Authorization: Bearer <token>'),
  apiKeyName: nullableString('apiKey: the header or query parameter name'),
  apiKeyIn: nullableString('apiKey: header or query'),
  apiKey: secret('apiKey: the key'),
  tokenUrl: nullableString('oauth2ClientCredentials: the token endpoint (http or https)'),
  clientId: nullableString('oauth2ClientCredentials: the client id'),
  clientSecret: secret('oauth2ClientCredentials: the client secret'),
  scope: nullableString('oauth2ClientCredentials: optional scope'),
  headers: stringMap('Headers sent with every request of the connection'),
  queryParameters: stringMap('Query parameters added to every request of the connection'),
  query: formerQuery,
  timeoutMs: Type.Optional(Integer({ description: `Per request, ${T.min} to ${T.max}; default ${T.default}` })),
  maxRetries: Type.Optional(
    Integer({ description: `Retries for 429, 5xx and network errors, ${R.min} to ${R.max}; default ${R.default}` }),
  ),
  initialDelayMs: Type.Optional(Integer({ description: `First backoff delay, ${D.min} to ${D.max}; default ${D.default}` })),
};

/** The types that count records (and so need Page Size and Response Data Path), as a phrase. */
const COUNTED = titlesWhere('counted');
const DROPPED_SWITCHES = SWITCH_SETTINGS.map(({ setting }) => `${setting.field}: false`).join(', ');

export const EndpointProperties = {
  code: Type.String({ description: '1 to 50 letters, digits, "_", "." or "-", starting with a letter or digit' }),
  connectionCode: Type.String({ description: 'The REST API connection it calls' }),
  path: Type.String({ description: "Relative to the connection's base URL, or absolute on the connection's origin; may carry a query" }),
  method: Type.Optional(Type.String({ description: `One of ${HTTP_METHODS.join(', ')}; default GET` })),
  headers: stringMap('Headers added to (or overriding) the connection headers'),
  queryParameters: stringMap("Query parameters added to (or overriding) the connection's"),
  query: formerQuery,
  body: nullableString('POST only: a JSON text sent with every page request'),
  integrationSortingOrder: Integer({ description: 'The integration the records are imported through' }),
  paginationType: Type.Optional(
    Type.String({
      description: `One of ${PAGINATION_TYPES.join(', ')}; default none. The settings of the other types are kept (answers show them) and used again when the type is switched back; one of them may be sent only with its kept value, or null (${DROPPED_SWITCHES}) to drop it`,
    }),
  ),
  ...PaginationInputs.texts,
  pageSize: Type.Optional(
    Type.Union([Integer(), Type.Null()], {
      description: `Records per page, ${P.min} to ${P.max}; required for ${COUNTED}`,
    }),
  ),
  maxPages: Type.Optional(Integer({ description: `Safety limit, ${M.min} to ${M.max}; default ${M.default}` })),
  responseDataPath: nullableString(
    `Where the record array is in a response, to count records (e.g. data, value, results.items). "" (blank, or "${ROOT_ARRAY_PATH}"): the records are the response root, or where the integration's records path says when that is set. ` +
      `null or left out: not set, which ${COUNTED} refuse (${titlesWhere('counted', true)} read it as blank). When the integration's records path is blank, this also finds the records imported`,
  ),
  ...PaginationInputs.switches,
  scheduleSeconds: Type.Optional(
    Type.Union([Integer(), Type.Null()], { description: `Import every N seconds (${S.min} to ${S.max}); null: on demand only` }),
  ),
  responseActions: Type.Optional(
    Type.Union(
      [
        Type.Array(
          Type.Object(
            {
              status: Integer({ description: 'An HTTP status: a 2xx other than 200, or a 4xx other than 401, 403, 407, 408 and 429' }),
              action: Type.String({ description: `${RESPONSE_ACTIONS.join(' or ')}` }),
            },
            { additionalProperties: false },
          ),
          { maxItems: MAX_RESPONSE_ACTIONS },
        ),
        Type.Null(),
      ],
      {
        description:
          'What an answer of a given status means instead of failing the run: stop (no more records; the pages before it are imported) or skip (this page has no records; fetching goes on, Page Number and Offset/Limit only). Each status once; default [] (every status as before); null: []',
      },
    ),
  ),
  sessionCookies: Type.Optional(
    Type.Boolean({
      description:
        "Keep the cookies the connection's origin sets during a run and send them back to that origin (a new jar per run; never to another origin, never shown); default false",
    }),
  ),
  cursorField: nullableString(
    'Incremental imports: the record field the bookmark follows (a property name, dot path or JSONPath, e.g. updated_at). After a Completed run the highest value imported is stored and {{cursor}} sends it on the next run. null: no bookmark',
  ),
  cursorFieldType: nullableString(
    `${CURSOR_FIELD_TYPES.join(' or ')}: how the cursor field's values are read and compared; default dateTime`,
  ),
  cursorFieldInitialValue: textOrNumber(
    `What {{cursor}} sends while there is no bookmark (first run, after a reset); null: ${DEFAULT_INITIAL.dateTime} (dateTime) or ${DEFAULT_INITIAL.number} (number)`,
  ),
  cursorFieldLookback: textOrNumber(
    'Subtracted from the bookmark before it is sent, to catch late writes: a duration for dateTime (30s, 15m, 2h, 1d or ISO 8601 PT15M), a number for number; null: none',
  ),
};

const closed = { additionalProperties: false } as const;
export const ConnectionSchema = Type.Object(ConnectionProperties, closed);
export const ConnectionPatchSchema = Type.Object(Type.Partial(ConnectionSchema).properties, closed);
export const EndpointSchema = Type.Object(EndpointProperties, closed);
export const EndpointPatchSchema = Type.Object(Type.Partial(EndpointSchema).properties, closed);

/** Probe bodies: a configuration that is not saved (yet), so its code (and the endpoint's integration) may be left out. */
export const ConnectionProbeSchema = Type.Object({ ...ConnectionProperties, code: Type.Optional(ConnectionProperties.code) }, closed);
export const EndpointProbeSchema = Type.Object(
  {
    ...EndpointProperties,
    code: Type.Optional(EndpointProperties.code),
    integrationSortingOrder: Type.Optional(EndpointProperties.integrationSortingOrder),
  },
  closed,
);

export type ConnectionInput = Static<typeof ConnectionSchema>;
export type ConnectionProbeInput = Static<typeof ConnectionProbeSchema>;
export type EndpointProbeInput = Static<typeof EndpointProbeSchema>;
export type ConnectionPatch = Static<typeof ConnectionPatchSchema>;
export type EndpointInput = Static<typeof EndpointSchema>;
export type EndpointPatch = Static<typeof EndpointPatchSchema>;
