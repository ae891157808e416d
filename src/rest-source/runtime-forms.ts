/**
 * Connections and endpoints in the forms the fetch loop and the probes use: a connection with its
 * secrets in its authentication, an endpoint with the pagination engine's settings.
 */
import { AppError } from '../core/errors.js';
import type { PaginationSettings } from '../pagination/index.js';
import type { ConnectionAuth, RestConnection, RestEndpoint } from './model.js';
import { ROOT_ARRAY_PATH } from './schemas.js';
import type { ConfiguredPagination, ConnectionSecrets, ConnectionSettings, EndpointSettings, SecretName } from './settings.js';

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

/** The Pagination section as the engine reads it: '' is its "blank"; `$` and a Response Data Path not set are blank too. */
export function enginePagination(pagination: ConfiguredPagination): PaginationSettings {
  const { responseDataPath } = pagination;
  return { ...pagination, responseDataPath: responseDataPath === null || responseDataPath === ROOT_ARRAY_PATH ? '' : responseDataPath };
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
    pagination: enginePagination(s.pagination),
    scheduleSeconds: s.scheduleSeconds,
    responseActions: s.responseActions,
    sessionCookies: s.sessionCookies,
    incremental: s.incremental,
  };
}
