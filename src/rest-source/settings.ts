/**
 * REST API connections and endpoints as the rules return them and storage keeps them: defaults filled
 * in. A connection is flat (its auth settings are few and shown as they are; another auth type's are
 * dropped); an endpoint carries its Pagination section as the engine's tagged union (Response Data
 * Path as written), beside it the settings of the pagination types not in use (kept for when the type
 * is switched back), and the flat fields the API and `ifw apply` speak (`paginationType`,
 * `nextLinkJsonPath`, …) are derived from both.
 */
import type { PaginationSettings, PaginationType } from '../pagination/index.js';
import type { AuthType, RestEndpoint } from './model.js';
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
  return { ...settings, headers: { ...settings.headers }, query: { ...settings.query } };
}

// ---- endpoints -----------------------------------------------------------------------------

/**
 * The Pagination section as configured: the engine's union, with Response Data Path as written: null
 * when it was not set, '' or `$` for "blank" (the root, or where the integration's records path
 * says: page-records.ts), or a path. The engine is given '' for null and `$` (runtime-forms.ts).
 */
export type ConfiguredPagination = {
  [T in PaginationType]: Omit<Extract<PaginationSettings, { readonly type: T }>, 'responseDataPath'> & {
    readonly responseDataPath: string | null;
  };
}[PaginationType];

/** The settings of the Pagination section that belong to one pagination type. */
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

/** The type-specific settings in the flat form answers show: null (false) when not set. */
export interface PaginationFields {
  readonly nextLinkJsonPath: string | null;
  readonly allowCrossOrigin: boolean;
  readonly pageParameterName: string | null;
  readonly offsetParameterName: string | null;
  readonly limitParameterName: string | null;
}

/**
 * Settings of the pagination types not in use, kept so that switching the type back restores them
 * (spec 7 advises setting the type temporarily). Only those that are set (allowCrossOrigin only when
 * true); never a setting of the type in use.
 */
export type KeptPagination = { readonly [K in PaginationFieldName]?: Exclude<PaginationFields[K], null> };

/**
 * An endpoint as stored: the shape the fetch loop uses (RestEndpoint), but with the Pagination section
 * as configured, and the other types' kept settings. runtime-forms.ts turns it into a RestEndpoint.
 */
export interface EndpointSettings extends Omit<RestEndpoint, 'pagination'> {
  readonly pagination: ConfiguredPagination;
  readonly keptPagination: KeptPagination;
}

/** The type-specific settings of every type: those of the type in use, and the kept ones of the others. */
export function paginationFieldsOf(pagination: ConfiguredPagination, kept: KeptPagination): PaginationFields {
  const fields: PaginationFields = {
    nextLinkJsonPath: kept.nextLinkJsonPath ?? null,
    allowCrossOrigin: kept.allowCrossOrigin ?? false,
    pageParameterName: kept.pageParameterName ?? null,
    offsetParameterName: kept.offsetParameterName ?? null,
    limitParameterName: kept.limitParameterName ?? null,
  };
  switch (pagination.type) {
    case 'none':
      return fields;
    case 'nextLink':
      return { ...fields, nextLinkJsonPath: pagination.nextLinkPath, allowCrossOrigin: pagination.allowCrossOrigin };
    case 'pageNumber':
      return { ...fields, pageParameterName: pagination.pageParam };
    case 'offsetLimit':
      return { ...fields, offsetParameterName: pagination.offsetParam, limitParameterName: pagination.limitParam };
    default: {
      const never: never = pagination;
      throw new Error(`unknown pagination type ${JSON.stringify(never)}`);
    }
  }
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
    nextLinkJsonPath: fields.nextLinkJsonPath,
    pageParameterName: fields.pageParameterName,
    offsetParameterName: fields.offsetParameterName,
    limitParameterName: fields.limitParameterName,
    maxPages: pagination.maxPages,
    allowCrossOrigin: fields.allowCrossOrigin,
    scheduleSeconds: settings.scheduleSeconds,
    pageSize: pagination.pageSize,
    responseDataPath: pagination.responseDataPath,
  };
}

/** The input that reproduces stored settings (kept ones included): the base of a PATCH. */
export function endpointInputOf(settings: EndpointSettings): EndpointInput {
  const view = endpointViewOf(settings);
  return { ...view, headers: { ...view.headers }, query: { ...view.query } };
}
