/**
 * REST API connections and endpoints as the rules return them and storage keeps them: defaults filled
 * in. A connection is flat (its auth settings are few and shown as they are; another auth type's are
 * dropped); an endpoint carries its Pagination section as the engine's tagged union (Response Data
 * Path as written), beside it the settings of the pagination types not in use (kept for when the type
 * is switched back), and the flat fields the API and `ifw apply` speak (`paginationType`, and every
 * type's own settings: pagination-fields.ts) are derived from both.
 */
import type { PaginationFields, PaginationType } from '../pagination/index.js';
import type { CursorFieldType, IncrementalSettings } from './cursor-values.js';
import type { AuthType, ResponseActionKind, RestEndpoint } from './model.js';
import { paginationFieldsOf, switchFieldsOf, textFieldsOf, type ConfiguredPagination, type KeptPagination } from './pagination-fields.js';
import type { ConnectionInput, EndpointInput } from './schemas.js';

// ---- connections ---------------------------------------------------------------------------

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

/** The input that reproduces stored settings (secrets aside): the base of a PATCH. */
export function connectionInputOf(settings: ConnectionSettings): ConnectionInput {
  const { query, ...rest } = settings;
  return { ...rest, headers: { ...settings.headers }, queryParameters: { ...query } };
}

// ---- endpoints -----------------------------------------------------------------------------

export type { ConfiguredPagination, KeptPagination } from './pagination-fields.js';

/**
 * An endpoint as stored: the shape the fetch loop uses (RestEndpoint), but with the Pagination section
 * as configured, and the other types' kept settings. runtime-forms.ts turns it into a RestEndpoint.
 */
export interface EndpointSettings extends Omit<RestEndpoint, 'pagination' | 'cursorAtLoad'> {
  readonly pagination: ConfiguredPagination;
  readonly keptPagination: KeptPagination;
  readonly incremental: IncrementalSettings | null;
}

/**
 * An endpoint as answers show it: the Pagination section flat. `paginationType` says which type is in
 * use; the settings of the other types show their kept values (null or false when none is kept).
 */
export interface EndpointView extends PaginationFields {
  readonly code: string;
  readonly connectionCode: string;
  readonly path: string;
  readonly method: RestEndpoint['method'];
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly body: string | null;
  readonly integrationSortingOrder: number;
  readonly paginationType: PaginationType;
  readonly maxPages: number;
  readonly scheduleSeconds: number | null;
  readonly pageSize: number | null;
  /** As configured: null when not set, '' or `$` for blank, or a path. */
  readonly responseDataPath: string | null;
  readonly responseActions: { status: number; action: ResponseActionKind }[];
  readonly sessionCookies: boolean;
  /** The incremental settings flat (cursor-values.ts); all null when the endpoint has no cursor field. */
  readonly cursorField: string | null;
  readonly cursorFieldType: CursorFieldType | null;
  readonly cursorFieldInitialValue: string | null;
  readonly cursorFieldLookback: string | null;
}

export function endpointViewOf(settings: EndpointSettings): EndpointView {
  const { pagination } = settings;
  const fields = paginationFieldsOf(pagination, settings.keptPagination);
  // Keys in the order the settings have always had: `ifw apply` lists changed settings in this order.
  return {
    code: settings.code,
    connectionCode: settings.connectionCode,
    path: settings.path,
    method: settings.method,
    headers: settings.headers,
    query: settings.query,
    body: settings.body,
    integrationSortingOrder: settings.integrationSortingOrder,
    paginationType: pagination.type,
    ...textFieldsOf(fields),
    maxPages: pagination.maxPages,
    ...switchFieldsOf(fields),
    scheduleSeconds: settings.scheduleSeconds,
    pageSize: pagination.pageSize,
    responseDataPath: pagination.responseDataPath,
    responseActions: settings.responseActions.map((a) => ({ ...a })),
    sessionCookies: settings.sessionCookies,
    cursorField: settings.incremental?.cursorField ?? null,
    cursorFieldType: settings.incremental?.cursorFieldType ?? null,
    cursorFieldInitialValue: settings.incremental?.cursorFieldInitialValue ?? null,
    cursorFieldLookback: settings.incremental?.cursorFieldLookback ?? null,
  };
}

/** The input that reproduces stored settings (kept ones included): the base of a PATCH. */
export function endpointInputOf(settings: EndpointSettings): EndpointInput {
  const view = endpointViewOf(settings);
  const { query, ...rest } = view;
  return {
    ...rest,
    headers: { ...view.headers },
    queryParameters: { ...query },
    responseActions: view.responseActions.map((a) => ({ ...a })),
  };
}
