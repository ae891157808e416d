/**
 * Reading REST API connections and endpoints: storage rows to settings (connections as the API shows
 * them, secrets only as `…IsSet` flags; endpoints with their Pagination section as the union the
 * `pagination` column holds), and the resolved forms the fetch loop uses (`loadConnection` opens the
 * sealed secrets).
 */
import type { Selectable } from 'kysely';
import { notFound } from '../core/errors.js';
import type { Db } from '../storage/db.js';
import type { RestConnectionRow, RestEndpointRow } from '../storage/schema.js';
import type { AuthType, HttpMethod, RestConnection, RestEndpoint } from './model.js';
import { restConnectionOf, restEndpointOf } from './runtime-forms.js';
import type { SecretBox } from './secrets.js';
import {
  AUTH_USES,
  type ApiKeyLocation,
  type AuthSettingName,
  type ConnectionSecrets,
  type ConnectionSettings,
  type EndpointSettings,
  type SecretName,
} from './settings.js';
import { keptPaginationFromColumn, paginationFromColumn } from './stored-pagination.js';
import { responseActionsFromColumn } from './response-actions.js';
import type { EndpointBookmark, IncrementalSettings } from './cursor-values.js';
import { renderEndpoint, templateValuesOf } from './templates.js';

/** A connection as answers show it: settings, and for each secret only whether it is set. */
export interface ConnectionView extends ConnectionSettings {
  readonly passwordIsSet: boolean;
  readonly tokenIsSet: boolean;
  readonly apiKeyIsSet: boolean;
  readonly clientSecretIsSet: boolean;
}

type AuthConfig = Partial<Record<AuthSettingName, string>>;

const parseMap = (text: string): Record<string, string> => JSON.parse(text) as Record<string, string>;

export function toConnectionSettings(row: Selectable<RestConnectionRow>): ConnectionSettings {
  const auth = JSON.parse(row.auth_config) as AuthConfig;
  return {
    code: row.code,
    baseUrl: row.base_url,
    authType: row.auth_type as AuthType,
    username: auth.username ?? null,
    apiKeyName: auth.apiKeyName ?? null,
    apiKeyIn: (auth.apiKeyIn as ApiKeyLocation | undefined) ?? null,
    tokenUrl: auth.tokenUrl ?? null,
    clientId: auth.clientId ?? null,
    scope: auth.scope ?? null,
    headers: parseMap(row.headers),
    query: parseMap(row.query),
    timeoutMs: row.timeout_ms,
    maxRetries: row.max_retries,
    initialDelayMs: row.initial_delay_ms,
  };
}

/** The non-secret auth settings as stored in `auth_config` (only those set). */
export function authConfigOf(settings: ConnectionSettings): string {
  const config: AuthConfig = {};
  for (const name of AUTH_USES[settings.authType].settings) {
    const value = settings[name];
    if (value !== null) config[name] = value;
  }
  return JSON.stringify(config);
}

export function toConnectionView(row: Selectable<RestConnectionRow>): ConnectionView {
  const settings = toConnectionSettings(row);
  // Every secret an auth type uses is required, so a stored secrets value holds exactly those.
  const isSet = (name: SecretName) => row.secrets !== null && AUTH_USES[settings.authType].secrets.includes(name);
  return {
    ...settings,
    passwordIsSet: isSet('password'),
    tokenIsSet: isSet('token'),
    apiKeyIsSet: isSet('apiKey'),
    clientSecretIsSet: isSet('clientSecret'),
  };
}

/** Opens the sealed secrets of a connection row; {} when it has none. */
export function readSecrets(row: Pick<Selectable<RestConnectionRow>, 'secrets'>, box: SecretBox): ConnectionSecrets {
  return row.secrets === null ? {} : (JSON.parse(box.open(row.secrets)) as ConnectionSecrets);
}

export function toEndpointSettings(row: Selectable<RestEndpointRow>): EndpointSettings {
  return {
    code: row.code,
    connectionCode: row.connection_code,
    path: row.path,
    method: row.method as HttpMethod,
    headers: parseMap(row.headers),
    query: parseMap(row.query),
    body: row.body,
    integrationSortingOrder: row.integration_sorting_order,
    pagination: paginationFromColumn(row.pagination, row.code),
    keptPagination: keptPaginationFromColumn(row.pagination_kept, row.code),
    scheduleSeconds: row.schedule_seconds,
    responseActions: responseActionsFromColumn(row.response_actions, row.code),
    sessionCookies: row.session_cookies === 1,
    incremental: row.incremental === null ? null : (JSON.parse(row.incremental) as IncrementalSettings),
  };
}

/** The bookmark and last successful run as stored on the endpoint row. */
export const bookmarkOf = (row: Selectable<RestEndpointRow>): EndpointBookmark => ({
  cursorValue: row.cursor_value,
  cursorUpdatedAt: row.cursor_updated_at,
  lastSuccessfulRunStartedAt: row.last_success_started_at,
});

export async function getBookmark(db: Db, code: string): Promise<EndpointBookmark | undefined> {
  const row = await getEndpointRow(db, code);
  return row === undefined ? undefined : bookmarkOf(row);
}

export async function listBookmarks(db: Db): Promise<Map<string, EndpointBookmark>> {
  const rows = await db.selectFrom('ifw_rest_endpoint').selectAll().execute();
  return new Map(rows.map((row) => [row.code, bookmarkOf(row)]));
}

/**
 * The endpoint as the fetch loop uses it (a stored `$` or null Response Data Path becomes '', blank),
 * its template variables rendered from the stored bookmark and last successful run (templates.ts).
 */
export function toRestEndpoint(row: Selectable<RestEndpointRow>): RestEndpoint {
  const endpoint = restEndpointOf(toEndpointSettings(row));
  const values = templateValuesOf(endpoint.incremental, row.cursor_value, row.last_success_started_at);
  return { ...renderEndpoint(endpoint, values), cursorAtLoad: row.cursor_value };
}

// ---- queries -------------------------------------------------------------------------------

export async function getConnectionRow(db: Db, code: string): Promise<Selectable<RestConnectionRow> | undefined> {
  return db.selectFrom('ifw_rest_connection').selectAll().where('code', '=', code).executeTakeFirst();
}

export async function getConnection(db: Db, code: string): Promise<ConnectionView | undefined> {
  const row = await getConnectionRow(db, code);
  return row === undefined ? undefined : toConnectionView(row);
}

export async function listConnections(db: Db): Promise<ConnectionView[]> {
  const rows = await db.selectFrom('ifw_rest_connection').selectAll().orderBy('code').execute();
  return rows.map(toConnectionView);
}

export async function getEndpointRow(db: Db, code: string): Promise<Selectable<RestEndpointRow> | undefined> {
  return db.selectFrom('ifw_rest_endpoint').selectAll().where('code', '=', code).executeTakeFirst();
}

export async function getEndpoint(db: Db, code: string): Promise<EndpointSettings | undefined> {
  const row = await getEndpointRow(db, code);
  return row === undefined ? undefined : toEndpointSettings(row);
}

export async function listEndpoints(db: Db, filter: { readonly connectionCode?: string } = {}): Promise<EndpointSettings[]> {
  let query = db.selectFrom('ifw_rest_endpoint').selectAll();
  if (filter.connectionCode !== undefined) query = query.where('connection_code', '=', filter.connectionCode);
  const rows = await query.orderBy('code').execute();
  return rows.map(toEndpointSettings);
}

/** The connection with its secrets opened, ready for the fetch loop; 404 when there is none. */
export async function loadConnection(db: Db, code: string, box: SecretBox): Promise<RestConnection> {
  const row = await getConnectionRow(db, code);
  if (row === undefined) throw notFound(`No REST API connection with code '${code}'.`);
  return restConnectionOf(toConnectionSettings(row), readSecrets(row, box));
}

/** The endpoint as the fetch loop uses it; 404 when there is none. */
export async function loadEndpoint(db: Db, code: string): Promise<RestEndpoint> {
  const row = await getEndpointRow(db, code);
  if (row === undefined) throw notFound(`No REST API endpoint with code '${code}'.`);
  return toRestEndpoint(row);
}

/** An endpoint with its connection, secrets opened: what a preview or a detection of a saved endpoint sends with. */
export async function loadEndpointWithConnection(
  db: Db,
  code: string,
  box: SecretBox,
): Promise<{ endpoint: RestEndpoint; connection: RestConnection }> {
  const endpoint = await loadEndpoint(db, code);
  return { endpoint, connection: await loadConnection(db, endpoint.connectionCode, box) };
}
