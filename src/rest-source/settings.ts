/**
 * REST API connections and endpoints as the rules return them and storage keeps them: defaults filled
 * in, settings of other types left out. A connection is flat (its auth settings are few and shown as
 * they are); an endpoint carries its Pagination section as the engine's tagged union, and the flat
 * fields the API and `ifw apply` speak (`paginationType`, `nextLinkJsonPath`, …) are derived from it.
 */
import type { PaginationSettings, PaginationType } from '../pagination/index.js';
import type { AuthType, HttpMethod, RestEndpoint } from './model.js';
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
 * An endpoint as stored: the shape the fetch loop uses (RestEndpoint), but with the Pagination
 * section as configured: a Response Data Path of `$` stays `$` (answers show what was written); the
 * engine is given '' for it (runtime-forms.ts).
 */
export type EndpointSettings = RestEndpoint;

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

/** An endpoint as answers show it: the Pagination section flat, settings of other pagination types null (false). */
export interface EndpointView {
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
  readonly maxPages: number;
  readonly allowCrossOrigin: boolean;
  readonly scheduleSeconds: number | null;
  readonly pageSize: number | null;
  /** As configured: '' or `$` for a root array. */
  readonly responseDataPath: string;
}

type PaginationFields = Pick<EndpointView, PaginationFieldName>;

function paginationFieldsOf(pagination: PaginationSettings): PaginationFields {
  const unused: PaginationFields = {
    nextLinkJsonPath: null,
    allowCrossOrigin: false,
    pageParameterName: null,
    offsetParameterName: null,
    limitParameterName: null,
  };
  switch (pagination.type) {
    case 'none':
      return unused;
    case 'nextLink':
      return { ...unused, nextLinkJsonPath: pagination.nextLinkPath, allowCrossOrigin: pagination.allowCrossOrigin };
    case 'pageNumber':
      return { ...unused, pageParameterName: pagination.pageParam };
    case 'offsetLimit':
      return { ...unused, offsetParameterName: pagination.offsetParam, limitParameterName: pagination.limitParam };
    default: {
      const never: never = pagination;
      throw new Error(`unknown pagination type ${JSON.stringify(never)}`);
    }
  }
}

export function endpointViewOf(settings: EndpointSettings): EndpointView {
  const { pagination } = settings;
  const fields = paginationFieldsOf(pagination);
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

/** The input that reproduces stored settings: the base of a PATCH. */
export function endpointInputOf(settings: EndpointSettings): EndpointInput {
  const view = endpointViewOf(settings);
  return { ...view, headers: { ...view.headers }, query: { ...view.query } };
}
