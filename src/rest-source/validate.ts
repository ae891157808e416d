/**
 * The rules of REST API connections and endpoints, as pure functions over what a caller sent (typebox
 * schemas shared by the HTTP API and `ifw apply`). Each returns the normalized settings, with defaults
 * filled in, or throws a 400 whose message starts with the offending property's path.
 *
 * Settings that belong to another authentication or pagination type are refused when sent, so a typo
 * in `authType` or `paginationType` does not go unnoticed; the service drops the stored ones of the
 * old type when a PATCH changes the type.
 */
import { Type, type Static } from 'typebox';
import { AppError } from '../core/errors.js';
import { PAGINATION_TYPES, paginationProblems, pathProblem, type PaginationSettings, type PaginationType } from '../pagination/index.js';
import { invalidAt, pathOf } from '../core/validation.js';
import {
  AUTH_TYPES,
  HTTP_METHODS,
  type AuthType,
  type ConnectionAuth,
  type HttpMethod,
  type RestConnection,
  type RestEndpoint,
} from './model.js';

export const CODE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,49}$/;

export const API_KEY_LOCATIONS = ['header', 'query'] as const;
export type ApiKeyLocation = (typeof API_KEY_LOCATIONS)[number];

/** Write-only: accepted on input, never shown (answers carry `<name>IsSet`), stored sealed. */
export const SECRET_NAMES = ['password', 'token', 'apiKey', 'clientSecret'] as const;
export type SecretName = (typeof SECRET_NAMES)[number];
export type ConnectionSecrets = Partial<Record<SecretName, string>>;

export const AUTH_SETTING_NAMES = ['username', 'apiKeyName', 'apiKeyIn', 'tokenUrl', 'clientId', 'scope'] as const;
export type AuthSettingName = (typeof AUTH_SETTING_NAMES)[number];

/** Which authentication type uses which settings and secrets. */
export const AUTH_USES: Readonly<
  Record<AuthType, { readonly settings: readonly AuthSettingName[]; readonly secrets: readonly SecretName[] }>
> = {
  none: { settings: [], secrets: [] },
  basic: { settings: ['username'], secrets: ['password'] },
  bearer: { settings: [], secrets: ['token'] },
  apiKey: { settings: ['apiKeyName', 'apiKeyIn'], secrets: ['apiKey'] },
  oauth2ClientCredentials: { settings: ['tokenUrl', 'clientId', 'scope'], secrets: ['clientSecret'] },
};

export const PAGINATION_FIELD_NAMES = [
  'nextLinkJsonPath',
  'allowCrossOrigin',
  'pageParameterName',
  'offsetParameterName',
  'limitParameterName',
] as const;
export type PaginationFieldName = (typeof PAGINATION_FIELD_NAMES)[number];

/** Which pagination type uses which of its own settings (Page Size, Max Pages and Response Data Path serve all). */
export const PAGINATION_USES: Readonly<Record<PaginationType, readonly PaginationFieldName[]>> = {
  none: [],
  nextLink: ['nextLinkJsonPath', 'allowCrossOrigin'],
  pageNumber: ['pageParameterName'],
  offsetLimit: ['offsetParameterName', 'limitParameterName'],
};

/** The spec's names of the pagination types, for messages. */
const PAGINATION_TITLES: Readonly<Record<PaginationType, string>> = {
  none: 'None',
  nextLink: 'Next Link',
  pageNumber: 'Page Number',
  offsetLimit: 'Offset/Limit',
};

/** Response Data Path value that says "the response root is the array"; the pagination engine reads it as ''. */
export const ROOT_ARRAY_PATH = '$';

export const LIMITS = {
  timeoutMs: { min: 100, max: 300_000, default: 30_000 },
  maxRetries: { min: 0, max: 10, default: 3 },
  initialDelayMs: { min: 0, max: 60_000, default: 500 },
  pageSize: { min: 1, max: 100_000 },
  maxPages: { min: 1, max: 100_000, default: 100 },
  scheduleSeconds: { min: 60, max: 604_800 },
} as const;

// ---- schemas -------------------------------------------------------------------------------

// No JSON-schema `default`s here: the HTTP validator would fill them into PATCH bodies and reset
// settings the caller did not send. Defaults are applied by the validate functions below.
const nullableString = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Null()], { description }));
const secret = (usedBy: string) =>
  nullableString(`${usedBy}. Write-only: answers show <name>IsSet instead; omitted keeps the stored value, null clears it`);
const stringMap = (description: string) => Type.Optional(Type.Record(Type.String(), Type.String(), { description }));
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
  query: stringMap('Query parameters added to every request of the connection'),
  timeoutMs: Type.Optional(Type.Integer({ description: `Per request, ${T.min} to ${T.max}; default ${T.default}` })),
  maxRetries: Type.Optional(
    Type.Integer({ description: `Retries for 429, 5xx and network errors, ${R.min} to ${R.max}; default ${R.default}` }),
  ),
  initialDelayMs: Type.Optional(Type.Integer({ description: `First backoff delay, ${D.min} to ${D.max}; default ${D.default}` })),
};

export const EndpointProperties = {
  code: Type.String({ description: '1 to 50 letters, digits, "_", "." or "-", starting with a letter or digit' }),
  connectionCode: Type.String({ description: 'The REST API connection it calls' }),
  path: Type.String({ description: "Relative to the connection's base URL, or absolute on the connection's origin; may carry a query" }),
  method: Type.Optional(Type.String({ description: `One of ${HTTP_METHODS.join(', ')}; default GET` })),
  headers: stringMap('Headers added to (or overriding) the connection headers'),
  query: stringMap('Query parameters added to (or overriding) the connection query'),
  body: nullableString('POST only: a JSON text sent with every page request'),
  integrationSortingOrder: Type.Integer({ description: 'The integration the records are imported through' }),
  paginationType: Type.Optional(Type.String({ description: `One of ${PAGINATION_TYPES.join(', ')}; default none` })),
  nextLinkJsonPath: nullableString(
    'Next Link: where the next page URL is (a property name such as @odata.nextLink, a dot path or a JSONPath starting with $)',
  ),
  pageParameterName: nullableString('Page Number: the query parameter that carries the page number (first page 1)'),
  offsetParameterName: nullableString('Offset/Limit: the query parameter for the start position (first 0)'),
  limitParameterName: nullableString('Offset/Limit: the query parameter for the page size'),
  pageSize: Type.Optional(
    Type.Union([Type.Integer(), Type.Null()], {
      description: `Records per page, ${P.min} to ${P.max}; required for Page Number and Offset/Limit`,
    }),
  ),
  maxPages: Type.Optional(Type.Integer({ description: `Safety limit, ${M.min} to ${M.max}; default ${M.default}` })),
  responseDataPath: nullableString(
    `Where the data array is in a response (e.g. data, value, results.items); "${ROOT_ARRAY_PATH}" for a root array. Required for Page Number and Offset/Limit; blank means the root for None and Next Link`,
  ),
  allowCrossOrigin: Type.Optional(
    Type.Boolean({ description: 'Next Link: follow links to another origin (credentials are never sent there); default false' }),
  ),
  scheduleSeconds: Type.Optional(
    Type.Union([Type.Integer(), Type.Null()], { description: `Import every N seconds (${S.min} to ${S.max}); null: on demand only` }),
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

// ---- normalized settings -------------------------------------------------------------------

/** A connection as stored and shown, without its secrets. Settings of other auth types are null. */
export interface ConnectionSettings {
  readonly code: string;
  readonly baseUrl: string;
  readonly authType: AuthType;
  readonly username: string | null;
  readonly apiKeyName: string | null;
  readonly apiKeyIn: ApiKeyLocation | null;
  readonly tokenUrl: string | null;
  readonly clientId: string | null;
  readonly scope: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly initialDelayMs: number;
}

export interface ValidConnection {
  readonly settings: ConnectionSettings;
  /** Exactly the secrets the auth type uses. */
  readonly secrets: ConnectionSecrets;
}

/** An endpoint as stored and shown. Settings of other pagination types are null (false). */
export interface EndpointSettings {
  readonly code: string;
  readonly connectionCode: string;
  readonly path: string;
  readonly method: HttpMethod;
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly body: string | null;
  readonly integrationSortingOrder: number;
  readonly paginationType: PaginationType;
  readonly nextLinkJsonPath: string | null;
  readonly pageParameterName: string | null;
  readonly offsetParameterName: string | null;
  readonly limitParameterName: string | null;
  readonly pageSize: number | null;
  readonly maxPages: number;
  /** As configured: '' or `$` for a root array. */
  readonly responseDataPath: string;
  readonly allowCrossOrigin: boolean;
  readonly scheduleSeconds: number | null;
}

export interface EndpointContext {
  /** The connection named by `connectionCode`, undefined when there is none. */
  readonly connection: ConnectionSettings | undefined;
  /** Whether the integration named by `integrationSortingOrder` exists. */
  readonly integrationExists: boolean;
}

// ---- small rules ---------------------------------------------------------------------------

const CONTROL = /\p{Cc}/u;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Set by the HTTP client from the request itself; configuring them breaks requests. */
const RESERVED_HEADERS = ['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer'];
const NAME_LIMIT = 256;
const SECRET_LIMIT = 8192;
const URL_LIMIT = 2048;
const PATH_LIMIT = 250;
const BODY_LIMIT = 1_048_576;

function oneOf<T extends string>(values: readonly T[], value: string | null | undefined, fallback: T, at: string): T {
  if (value === undefined || value === null) return fallback;
  if (!(values as readonly string[]).includes(value)) throw invalidAt(at, `"${value}" is not allowed; use one of ${values.join(', ')}`);
  return value as T;
}

function intIn(
  value: number | null | undefined,
  range: { readonly min: number; readonly max: number; readonly default: number },
  at: string,
): number {
  const n = value ?? range.default;
  if (!Number.isInteger(n) || n < range.min || n > range.max)
    throw invalidAt(at, `must be a whole number from ${range.min} to ${range.max}, got ${n}`);
  return n;
}

export function validateCode(code: string, at: string): string {
  if (!CODE_PATTERN.test(code))
    throw invalidAt(at, `"${code}" is not a valid code: use 1 to 50 letters, digits, "_", "." or "-", starting with a letter or digit`);
  return code;
}

/** A name or text that must be there: `missing` says why when it is not. */
function required(value: string | null | undefined, at: string, missing: string, limit = NAME_LIMIT): string {
  if (value === undefined || value === null || value.trim() === '') throw invalidAt(at, missing);
  if (value.length > limit) throw invalidAt(at, `must be at most ${limit} characters, got ${value.length}`);
  if (CONTROL.test(value)) throw invalidAt(at, 'must not contain line breaks or other control characters');
  return value;
}

/** An absolute http(s) URL; credentials belong in the connection's authentication, never in a URL. */
function httpUrl(value: string, at: string, baseOnly: boolean): string {
  const text = value.trim();
  if (text.length > URL_LIMIT) throw invalidAt(at, `must be at most ${URL_LIMIT} characters, got ${text.length}`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidAt(at, `"${value}" is not an absolute URL; write it as https://host[:port]/path`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalidAt(at, `must be an http or https URL, not ${url.protocol.slice(0, -1)}`);
  if (url.username !== '' || url.password !== '')
    throw invalidAt(at, 'must not carry credentials (user:password@); set them in the authentication settings');
  if (baseOnly && url.search !== '') throw invalidAt(at, 'must not carry a query; put query parameters in "query"');
  if (url.hash !== '') throw invalidAt(at, 'must not carry a fragment (#…)');
  return text;
}

function headerMap(headers: Readonly<Record<string, string>> | undefined, at: string): Record<string, string> {
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers ?? {})) {
    const where = pathOf(at, name);
    if (!HEADER_NAME.test(name)) throw invalidAt(where, `"${name}" is not a valid header name (letters, digits and !#$%&'*+.^_\`|~- only)`);
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.includes(lower)) throw invalidAt(where, `${name} is set by the HTTP client and cannot be configured`);
    const earlier = seen.get(lower);
    if (earlier !== undefined)
      throw invalidAt(where, `"${name}" is given twice (also "${earlier}"); header names are compared without case`);
    seen.set(lower, name);
    if (CONTROL.test(value)) throw invalidAt(where, 'the value must not contain line breaks or other control characters');
    if (value.length > SECRET_LIMIT) throw invalidAt(where, `the value must be at most ${SECRET_LIMIT} characters, got ${value.length}`);
  }
  return { ...headers };
}

function queryMap(query: Readonly<Record<string, string>> | undefined, at: string): Record<string, string> {
  for (const [name, value] of Object.entries(query ?? {})) {
    const where = pathOf(at, name);
    if (name === '' || name.length > NAME_LIMIT) throw invalidAt(at, `parameter names must be 1 to ${NAME_LIMIT} characters`);
    if (CONTROL.test(name) || CONTROL.test(value)) throw invalidAt(where, 'must not contain line breaks or other control characters');
  }
  return { ...query };
}

const findKey = (map: Readonly<Record<string, string>>, name: string, ignoreCase: boolean): string | undefined =>
  Object.keys(map).find((k) => (ignoreCase ? k.toLowerCase() === name.toLowerCase() : k === name));

// ---- connections ---------------------------------------------------------------------------

const AUTH_OWNER: Readonly<Record<AuthSettingName | SecretName, AuthType>> = {
  username: 'basic',
  password: 'basic',
  token: 'bearer',
  apiKeyName: 'apiKey',
  apiKeyIn: 'apiKey',
  apiKey: 'apiKey',
  tokenUrl: 'oauth2ClientCredentials',
  clientId: 'oauth2ClientCredentials',
  clientSecret: 'oauth2ClientCredentials',
  scope: 'oauth2ClientCredentials',
};

/** A secret as sent or, when not sent, as stored; `null` clears it. */
function secretValue(input: ConnectionInput, stored: ConnectionSecrets, name: SecretName): string | undefined {
  const given = input[name];
  return given === undefined ? stored[name] : (given ?? undefined);
}

/**
 * `stored` holds the secrets saved before (a PATCH or a redeclaration keeps those it does not send).
 * The result holds exactly the secrets `authType` uses.
 */
export function validateConnection(input: ConnectionInput, stored: ConnectionSecrets = {}, at = ''): ValidConnection {
  const code = validateCode(input.code, pathOf(at, 'code'));
  const baseUrl = httpUrl(input.baseUrl, pathOf(at, 'baseUrl'), true);
  const authType: AuthType = oneOf(AUTH_TYPES, input.authType, 'none', pathOf(at, 'authType'));
  const uses = AUTH_USES[authType];
  for (const name of [...AUTH_SETTING_NAMES, ...SECRET_NAMES]) {
    const value = input[name];
    if (value === undefined || value === null) continue;
    if (!(uses.settings as readonly string[]).includes(name) && !(uses.secrets as readonly string[]).includes(name)) {
      throw invalidAt(pathOf(at, name), `only authType ${AUTH_OWNER[name]} uses ${name}; authType is ${authType}`);
    }
  }

  const headers = headerMap(input.headers, pathOf(at, 'headers'));
  const query = queryMap(input.query, pathOf(at, 'query'));
  let auth: Pick<ConnectionSettings, AuthSettingName> = {
    username: null,
    apiKeyName: null,
    apiKeyIn: null,
    tokenUrl: null,
    clientId: null,
    scope: null,
  };
  const secrets: ConnectionSecrets = {};
  const needSecret = (name: SecretName, missing: string, allowEmpty: boolean): void => {
    const value = secretValue(input, stored, name);
    const where = pathOf(at, name);
    if (value === undefined || (!allowEmpty && value === '')) {
      throw invalidAt(where, input[name] === null ? `cannot be cleared: ${missing}` : missing);
    }
    if (value.length > SECRET_LIMIT) throw invalidAt(where, `must be at most ${SECRET_LIMIT} characters`);
    secrets[name] = value;
  };
  const authorizationHeader = () => {
    const name = findKey(headers, 'authorization', true);
    if (name !== undefined)
      throw invalidAt(pathOf(pathOf(at, 'headers'), name), `authType ${authType} sets the Authorization header; remove it from headers`);
  };

  switch (authType) {
    case 'none':
      break;
    case 'basic': {
      const username = required(input.username, pathOf(at, 'username'), 'basic authentication needs a username');
      if (username.includes(':'))
        throw invalidAt(pathOf(at, 'username'), 'must not contain ":" (basic authentication separates user and password with it)');
      // An empty password is allowed: some APIs take a key as the user name and no password.
      needSecret('password', 'basic authentication needs a password (it may be empty: "")', true);
      authorizationHeader();
      auth = { ...auth, username };
      break;
    }
    case 'bearer': {
      needSecret('token', 'bearer authentication needs a token', false);
      if (CONTROL.test(secrets.token ?? ''))
        throw invalidAt(pathOf(at, 'token'), 'must not contain line breaks or other control characters');
      authorizationHeader();
      break;
    }
    case 'apiKey': {
      const apiKeyName = required(
        input.apiKeyName,
        pathOf(at, 'apiKeyName'),
        'API key authentication needs apiKeyName (the header or query parameter that carries the key)',
      );
      if (input.apiKeyIn === undefined || input.apiKeyIn === null)
        throw invalidAt(pathOf(at, 'apiKeyIn'), 'API key authentication needs apiKeyIn: header or query');
      const apiKeyIn = oneOf(API_KEY_LOCATIONS, input.apiKeyIn, 'header', pathOf(at, 'apiKeyIn'));
      needSecret('apiKey', 'API key authentication needs apiKey (the key itself)', false);
      if (CONTROL.test(secrets.apiKey ?? ''))
        throw invalidAt(pathOf(at, 'apiKey'), 'must not contain line breaks or other control characters');
      if (apiKeyIn === 'header') {
        if (!HEADER_NAME.test(apiKeyName)) throw invalidAt(pathOf(at, 'apiKeyName'), `"${apiKeyName}" is not a valid header name`);
        const clash = findKey(headers, apiKeyName, true);
        if (clash !== undefined)
          throw invalidAt(pathOf(pathOf(at, 'headers'), clash), `the API key is sent in header ${apiKeyName}; remove it from headers`);
      } else {
        const clash = findKey(query, apiKeyName, false);
        if (clash !== undefined)
          throw invalidAt(pathOf(pathOf(at, 'query'), clash), `the API key is sent in query parameter ${apiKeyName}; remove it from query`);
      }
      auth = { ...auth, apiKeyName, apiKeyIn };
      break;
    }
    case 'oauth2ClientCredentials': {
      const tokenUrl = httpUrl(
        required(input.tokenUrl, pathOf(at, 'tokenUrl'), 'OAuth2 client credentials need a tokenUrl', URL_LIMIT),
        pathOf(at, 'tokenUrl'),
        false,
      );
      const clientId = required(input.clientId, pathOf(at, 'clientId'), 'OAuth2 client credentials need a clientId');
      needSecret('clientSecret', 'OAuth2 client credentials need a clientSecret', false);
      const scope =
        input.scope === undefined || input.scope === null || input.scope.trim() === ''
          ? null
          : required(input.scope, pathOf(at, 'scope'), '', 1024);
      authorizationHeader();
      auth = { ...auth, tokenUrl, clientId, scope };
      break;
    }
    default: {
      const never: never = authType;
      throw new Error(`unknown auth type ${String(never)}`);
    }
  }

  return {
    settings: {
      code,
      baseUrl,
      authType,
      ...auth,
      headers,
      query,
      timeoutMs: intIn(input.timeoutMs, LIMITS.timeoutMs, pathOf(at, 'timeoutMs')),
      maxRetries: intIn(input.maxRetries, LIMITS.maxRetries, pathOf(at, 'maxRetries')),
      initialDelayMs: intIn(input.initialDelayMs, LIMITS.initialDelayMs, pathOf(at, 'initialDelayMs')),
    },
    secrets,
  };
}

/** The input that reproduces stored settings (secrets aside): the base of a PATCH. */
export function connectionInputOf(settings: ConnectionSettings): ConnectionInput {
  return { ...settings, headers: { ...settings.headers }, query: { ...settings.query } };
}

/** The connection with its secrets, as the fetch loop and the probes use it. */
export function restConnectionOf(settings: ConnectionSettings, secrets: ConnectionSecrets): RestConnection {
  const secret = (name: SecretName): string => {
    const value = secrets[name];
    if (value === undefined)
      throw new AppError(500, 'internalError', `REST API connection "${settings.code}" has no stored ${name}; enter it again`);
    return value;
  };
  const setting = (value: string | null): string => value ?? '';
  let auth: ConnectionAuth;
  switch (settings.authType) {
    case 'none':
      auth = { type: 'none' };
      break;
    case 'basic':
      auth = { type: 'basic', username: setting(settings.username), password: secret('password') };
      break;
    case 'bearer':
      auth = { type: 'bearer', token: secret('token') };
      break;
    case 'apiKey':
      auth = { type: 'apiKey', name: setting(settings.apiKeyName), in: settings.apiKeyIn ?? 'header', value: secret('apiKey') };
      break;
    case 'oauth2ClientCredentials':
      auth = {
        type: 'oauth2ClientCredentials',
        tokenUrl: setting(settings.tokenUrl),
        clientId: setting(settings.clientId),
        clientSecret: secret('clientSecret'),
        scope: settings.scope,
      };
      break;
    default: {
      const never: never = settings.authType;
      throw new Error(`unknown auth type ${String(never)}`);
    }
  }
  return {
    code: settings.code,
    baseUrl: settings.baseUrl,
    auth,
    headers: settings.headers,
    query: settings.query,
    timeoutMs: settings.timeoutMs,
    retry: { maxRetries: settings.maxRetries, initialDelayMs: settings.initialDelayMs },
  };
}

// ---- endpoints -----------------------------------------------------------------------------

/**
 * The URL the fetch loop calls (src/rest/fetch-pages.ts `buildFirstUrl`): an absolute http(s) path is
 * used as is, anything else is appended to the base URL as text, so a base path such as `/v1` is kept.
 */
function joinedUrl(baseUrl: string, path: string): string {
  const trimmed = path.trim();
  if (/^https?:\/\//i.test(trimmed)) return trimmed;
  return trimmed === '' ? baseUrl : `${baseUrl.replace(/\/+$/, '')}/${trimmed.replace(/^\/+/, '')}`;
}

/** The path stays on the connection's origin: credentials are only ever sent there. */
function endpointPath(value: string, connection: ConnectionSettings, at: string): string {
  if (value.length > URL_LIMIT) throw invalidAt(at, `must be at most ${URL_LIMIT} characters, got ${value.length}`);
  if (/\s/u.test(value.trim()) || CONTROL.test(value))
    throw invalidAt(at, 'must not contain spaces or control characters; percent-encode them (a space is %20)');
  const text = value.trim();
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text) && !/^https?:\/\//i.test(text))
    throw invalidAt(at, "must be a path, or an http or https URL on the connection's origin");
  if (text.startsWith('//'))
    throw invalidAt(at, 'must not start with "//"; write a path ("/customers") or a full URL on the connection\'s origin');
  let url: URL;
  try {
    url = new URL(joinedUrl(connection.baseUrl, text));
  } catch {
    throw invalidAt(at, `"${value}" is not a valid path or URL`);
  }
  if (url.username !== '' || url.password !== '')
    throw invalidAt(at, "must not carry credentials (user:password@); set them in the connection's authentication");
  if (url.hash !== '') throw invalidAt(at, 'must not carry a fragment (#…)');
  const origin = new URL(connection.baseUrl).origin;
  if (url.origin !== origin) {
    throw invalidAt(
      at,
      `is on ${url.origin}, not on the origin of connection "${connection.code}" (${origin}); an endpoint calls only its connection's origin`,
    );
  }
  return value;
}

function jsonBody(value: string, at: string): string {
  if (value.length > BODY_LIMIT) throw invalidAt(at, `must be at most ${BODY_LIMIT} characters, got ${value.length}`);
  try {
    JSON.parse(value);
  } catch (err) {
    throw invalidAt(at, `is not a JSON text: ${err instanceof Error ? err.message : String(err)}`);
  }
  return value;
}

/** Response Data Path and Next Link JSON Path are read by the pagination engine's own path reader. */
function responsePath(value: string, at: string): string {
  if (value === ROOT_ARRAY_PATH) return value;
  if (value.length > PATH_LIMIT) throw invalidAt(at, `must be at most ${PATH_LIMIT} characters, got ${value.length}`);
  if (CONTROL.test(value)) throw invalidAt(at, 'must not contain control characters');
  const problem = pathProblem(value);
  if (problem !== null) throw invalidAt(at, problem);
  return value;
}

/** A query parameter name the paginator sets on every request. */
function paginatorParam(
  value: string | null | undefined,
  at: string,
  missing: string,
  taken: readonly [Readonly<Record<string, string>>, string][],
): string {
  const name = required(value, at, missing, 100);
  if (/[\s&=#?]/u.test(name)) throw invalidAt(at, `"${name}" is not a usable query parameter name (no spaces, &, =, # or ?)`);
  for (const [query, where] of taken) {
    if (Object.hasOwn(query, name))
      throw invalidAt(at, `"${name}" is also set in ${where}; the paginator sets it on every request, so remove it there`);
  }
  return name;
}

function optionalPageSize(value: number | null | undefined, at: string): number | null {
  if (value === undefined || value === null) return null;
  return intIn(value, { ...LIMITS.pageSize, default: 0 }, at);
}

export function validateEndpoint(input: EndpointInput, context: EndpointContext, at = ''): EndpointSettings {
  const code = validateCode(input.code, pathOf(at, 'code'));
  const { connection } = context;
  if (connection === undefined)
    throw invalidAt(pathOf(at, 'connectionCode'), `no REST API connection "${input.connectionCode}"; create it first`);
  const integrationSortingOrder = input.integrationSortingOrder;
  if (!context.integrationExists)
    throw invalidAt(pathOf(at, 'integrationSortingOrder'), `no integration with sortingOrder ${integrationSortingOrder}; create it first`);

  const path = endpointPath(input.path, connection, pathOf(at, 'path'));
  const method: HttpMethod = oneOf(HTTP_METHODS, input.method, 'GET', pathOf(at, 'method'));
  let body: string | null = input.body ?? null;
  if (body !== null && method !== 'POST') throw invalidAt(pathOf(at, 'body'), `only POST requests carry a body; method is ${method}`);
  if (body !== null) body = jsonBody(body, pathOf(at, 'body'));

  const headers = headerMap(input.headers, pathOf(at, 'headers'));
  if (connection.authType !== 'none' && connection.authType !== 'apiKey') {
    const name = findKey(headers, 'authorization', true);
    if (name !== undefined)
      throw invalidAt(
        pathOf(pathOf(at, 'headers'), name),
        `connection "${connection.code}" (authType ${connection.authType}) sets the Authorization header; remove it from headers`,
      );
  }
  if (connection.authType === 'apiKey' && connection.apiKeyName !== null) {
    const clash = connection.apiKeyIn === 'header' ? findKey(headers, connection.apiKeyName, true) : undefined;
    if (clash !== undefined)
      throw invalidAt(
        pathOf(pathOf(at, 'headers'), clash),
        `connection "${connection.code}" sends its API key in header ${connection.apiKeyName}; remove it from headers`,
      );
  }
  const query = queryMap(input.query, pathOf(at, 'query'));
  if (
    connection.authType === 'apiKey' &&
    connection.apiKeyIn === 'query' &&
    connection.apiKeyName !== null &&
    Object.hasOwn(query, connection.apiKeyName)
  ) {
    throw invalidAt(
      pathOf(pathOf(at, 'query'), connection.apiKeyName),
      `connection "${connection.code}" sends its API key in query parameter ${connection.apiKeyName}; remove it from query`,
    );
  }

  const paginationType: PaginationType = oneOf(PAGINATION_TYPES, input.paginationType, 'none', pathOf(at, 'paginationType'));
  const title = PAGINATION_TITLES[paginationType];
  for (const name of PAGINATION_FIELD_NAMES) {
    const value = input[name];
    if (value === undefined || value === null || value === false) continue;
    if (!PAGINATION_USES[paginationType].includes(name)) {
      const owner = PAGINATION_TYPES.find((t) => PAGINATION_USES[t].includes(name)) ?? 'none';
      throw invalidAt(pathOf(at, name), `only ${PAGINATION_TITLES[owner]} pagination uses ${name}; paginationType is ${paginationType}`);
    }
  }

  const maxPages = intIn(input.maxPages, LIMITS.maxPages, pathOf(at, 'maxPages'));
  const rawDataPath = input.responseDataPath?.trim() ?? '';
  const scheduleSeconds = input.scheduleSeconds ?? null;
  if (
    scheduleSeconds !== null &&
    (!Number.isInteger(scheduleSeconds) || scheduleSeconds < LIMITS.scheduleSeconds.min || scheduleSeconds > LIMITS.scheduleSeconds.max)
  ) {
    throw invalidAt(
      pathOf(at, 'scheduleSeconds'),
      `must be from ${LIMITS.scheduleSeconds.min} to ${LIMITS.scheduleSeconds.max} seconds (1 minute to 7 days), or null to import on demand only; got ${scheduleSeconds}`,
    );
  }
  const taken: [Readonly<Record<string, string>>, string][] = [
    [query, 'the endpoint query'],
    [connection.query, `the query of connection "${connection.code}"`],
  ];
  if (connection.authType === 'apiKey' && connection.apiKeyIn === 'query' && connection.apiKeyName !== null) {
    taken.push([{ [connection.apiKeyName]: '' }, `connection "${connection.code}" as its API key parameter`]);
  }

  const common = {
    code,
    connectionCode: connection.code,
    path,
    method,
    headers,
    query,
    body,
    integrationSortingOrder,
    paginationType,
    nextLinkJsonPath: null,
    pageParameterName: null,
    offsetParameterName: null,
    limitParameterName: null,
    maxPages,
    allowCrossOrigin: false,
    scheduleSeconds,
  };
  const countedPagination = (): { pageSize: number; responseDataPath: string } => {
    const pageSize = input.pageSize;
    if (pageSize === undefined || pageSize === null) {
      throw invalidAt(
        pathOf(at, 'pageSize'),
        `${title} pagination needs a Page Size: the number of records the API really returns per page (${LIMITS.pageSize.min} to ${LIMITS.pageSize.max})`,
      );
    }
    if (rawDataPath === '') {
      throw invalidAt(
        pathOf(at, 'responseDataPath'),
        `${title} pagination needs a Response Data Path (the JSON path of the data array, e.g. "data" or "value") to count records; use "${ROOT_ARRAY_PATH}" when the response root is the array`,
      );
    }
    return {
      pageSize: optionalPageSize(pageSize, pathOf(at, 'pageSize'))!,
      responseDataPath: responsePath(rawDataPath, pathOf(at, 'responseDataPath')),
    };
  };

  const settings = ((): EndpointSettings => {
    switch (paginationType) {
      case 'none':
        return {
          ...common,
          pageSize: optionalPageSize(input.pageSize, pathOf(at, 'pageSize')),
          responseDataPath: responsePath(rawDataPath, pathOf(at, 'responseDataPath')),
        };
      case 'nextLink': {
        const nextLinkJsonPath = responsePath(
          required(
            input.nextLinkJsonPath,
            pathOf(at, 'nextLinkJsonPath'),
            'Next Link pagination needs a Next Link JSON Path: where the next page URL is in a response (e.g. "@odata.nextLink", "links.next" or "$.paging.next")',
            PATH_LIMIT,
          ),
          pathOf(at, 'nextLinkJsonPath'),
        );
        return {
          ...common,
          nextLinkJsonPath,
          allowCrossOrigin: input.allowCrossOrigin ?? false,
          pageSize: optionalPageSize(input.pageSize, pathOf(at, 'pageSize')),
          responseDataPath: responsePath(rawDataPath, pathOf(at, 'responseDataPath')),
        };
      }
      case 'pageNumber': {
        const pageParameterName = paginatorParam(
          input.pageParameterName,
          pathOf(at, 'pageParameterName'),
          'Page Number pagination needs a Page Parameter Name: the query parameter that carries the page number (e.g. "page")',
          taken,
        );
        return { ...common, pageParameterName, ...countedPagination() };
      }
      case 'offsetLimit': {
        const offsetParameterName = paginatorParam(
          input.offsetParameterName,
          pathOf(at, 'offsetParameterName'),
          'Offset/Limit pagination needs an Offset Parameter Name: the query parameter for the start position (e.g. "offset")',
          taken,
        );
        const limitParameterName = paginatorParam(
          input.limitParameterName,
          pathOf(at, 'limitParameterName'),
          'Offset/Limit pagination needs a Limit Parameter Name: the query parameter for the page size (e.g. "limit")',
          taken,
        );
        if (limitParameterName === offsetParameterName) {
          throw invalidAt(pathOf(at, 'limitParameterName'), `must differ from offsetParameterName (both are "${limitParameterName}")`);
        }
        return { ...common, offsetParameterName, limitParameterName, ...countedPagination() };
      }
      default: {
        const never: never = paginationType;
        throw new Error(`unknown pagination type ${String(never)}`);
      }
    }
  })();
  // The engine's own rules, last: whatever they refuse, a run could not do.
  const [problem] = paginationProblems(paginationOf(settings));
  if (problem !== undefined) throw invalidAt(pathOf(at, 'paginationType'), problem);
  return settings;
}

/** The input that reproduces stored settings: the base of a PATCH. */
export function endpointInputOf(settings: EndpointSettings): EndpointInput {
  return { ...settings, headers: { ...settings.headers }, query: { ...settings.query } };
}

/** The pagination engine reads '' as "the root is the array". */
const engineDataPath = (path: string): string => (path === ROOT_ARRAY_PATH ? '' : path);

export function paginationOf(s: EndpointSettings): PaginationSettings {
  const common = { maxPages: s.maxPages, pageSize: s.pageSize, responseDataPath: engineDataPath(s.responseDataPath) };
  const missing = (name: string) => new AppError(500, 'internalError', `REST API endpoint "${s.code}" has no ${name}; save it again`);
  switch (s.paginationType) {
    case 'none':
      return { ...common, type: 'none' };
    case 'nextLink':
      if (s.nextLinkJsonPath === null) throw missing('nextLinkJsonPath');
      return { ...common, type: 'nextLink', nextLinkPath: s.nextLinkJsonPath, allowCrossOrigin: s.allowCrossOrigin };
    case 'pageNumber':
      if (s.pageParameterName === null || s.pageSize === null) throw missing('pageParameterName or pageSize');
      return { ...common, type: 'pageNumber', pageParam: s.pageParameterName, pageSize: s.pageSize };
    case 'offsetLimit':
      if (s.offsetParameterName === null || s.limitParameterName === null || s.pageSize === null)
        throw missing('offset/limit parameter names or pageSize');
      return { ...common, type: 'offsetLimit', offsetParam: s.offsetParameterName, limitParam: s.limitParameterName, pageSize: s.pageSize };
    default: {
      const never: never = s.paginationType;
      throw new Error(`unknown pagination type ${String(never)}`);
    }
  }
}

export function restEndpointOf(s: EndpointSettings): RestEndpoint {
  return {
    code: s.code,
    connectionCode: s.connectionCode,
    path: s.path,
    method: s.method,
    headers: s.headers,
    query: s.query,
    body: s.body,
    integrationSortingOrder: s.integrationSortingOrder,
    pagination: paginationOf(s),
    scheduleSeconds: s.scheduleSeconds,
  };
}
