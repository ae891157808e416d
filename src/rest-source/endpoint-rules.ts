/**
 * The rules of a REST API endpoint: its connection and integration exist, the request (path on the
 * connection's origin, method, a JSON body for POST only, headers and query that do not fight the
 * connection's authentication), the schedule, and the Pagination section (pagination-rules.ts).
 */
import { invalidAt, pathOf } from '../core/validation.js';
import { CONTROL, URL_LIMIT, findKey, headerMap, intIn, oneOf, queryParametersOf, validateCode } from './common-rules.js';
import { HTTP_METHODS, type HttpMethod } from './model.js';
import { paginationTypeOf, validatePagination } from './pagination-rules.js';
import { validateResponseActions } from './response-actions.js';
import { refuseBadTemplates, validateIncremental } from './incremental-rules.js';
import { LIMITS, type EndpointInput } from './schemas.js';
import type { PaginationFields } from '../pagination/index.js';
import type { ConnectionSettings, EndpointSettings } from './settings.js';

const BODY_LIMIT = 1_048_576;

export interface EndpointContext {
  /** The connection named by `connectionCode`, undefined when there is none. */
  readonly connection: ConnectionSettings | undefined;
  /** Whether the integration named by `integrationSortingOrder` exists. */
  readonly integrationExists: boolean;
  /**
   * The type-specific pagination settings of every type as the endpoint has them saved (its answer's
   * values); absent for a new endpoint. Another type's setting may repeat them (pagination-rules.ts).
   */
  readonly storedPagination?: PaginationFields;
}

/**
 * The URL the fetch loop calls (fetch-pages.ts `buildFirstUrl`): an absolute http(s) path is
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

/** Parameters sent in the body (Send Parameters In: body) need a POST endpoint whose body, if any, is a JSON object. */
function bodyTakesParameters(method: HttpMethod, body: string | null, at: string): void {
  if (method !== 'POST')
    throw invalidAt(
      pathOf(at, 'parametersIn'),
      `the paginator's parameters go in the JSON body, so the method must be POST; it is ${method}`,
    );
  const parsed: unknown = body === null ? {} : JSON.parse(body);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw invalidAt(pathOf(at, 'body'), "must be a JSON object: the paginator's parameters are set in it (parametersIn is body)");
}

export function validateEndpoint(input: EndpointInput, context: EndpointContext, at = ''): EndpointSettings {
  const code = validateCode(input.code, pathOf(at, 'code'));
  const { connection } = context;
  if (connection === undefined)
    throw invalidAt(pathOf(at, 'connectionCode'), `no REST API connection "${input.connectionCode}"; create it first`);
  const integrationSortingOrder = input.integrationSortingOrder;
  if (!context.integrationExists)
    throw invalidAt(pathOf(at, 'integrationSortingOrder'), `no integration with sortingOrder ${integrationSortingOrder}; create it first`);

  // Template variables (templates.ts) are checked where they stand, the path as it is with a value in their place.
  const path = input.path;
  endpointPath(input.path.replace(/\{\{[^{}]*\}\}/g, '0'), connection, pathOf(at, 'path'));
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
  const { query, at: queryAt } = queryParametersOf(input, at);
  if (
    connection.authType === 'apiKey' &&
    connection.apiKeyIn === 'query' &&
    connection.apiKeyName !== null &&
    Object.hasOwn(query, connection.apiKeyName)
  ) {
    throw invalidAt(
      pathOf(queryAt, connection.apiKeyName),
      `connection "${connection.code}" sends its API key in query parameter ${connection.apiKeyName}; remove it from ${queryAt}`,
    );
  }

  // The schedule is checked between the Pagination section's type and its own settings, as it always
  // was: an input with several problems reports the same one first.
  const { type: paginationType, kept: keptPagination } = paginationTypeOf(input, context.storedPagination, at);
  const maxPages = intIn(input.maxPages, LIMITS.maxPages, pathOf(at, 'maxPages'));
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
  const pagination = validatePagination(input, paginationType, maxPages, taken, at);
  const responseActions = validateResponseActions(input.responseActions, paginationType, pathOf(at, 'responseActions'));
  const sessionCookies = input.sessionCookies ?? false;
  if ('parametersIn' in pagination && pagination.parametersIn === 'body') bodyTakesParameters(method, body, at);
  const incremental = validateIncremental(input, at);
  refuseBadTemplates({ path, query, queryAt, headers, body }, incremental, at);

  return {
    code,
    connectionCode: connection.code,
    path,
    method,
    headers,
    query,
    body,
    integrationSortingOrder,
    pagination,
    keptPagination,
    scheduleSeconds,
    responseActions,
    sessionCookies,
    incremental,
  };
}
