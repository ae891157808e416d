/**
 * The rules of a REST API connection: its base URL, the authentication type with exactly the settings
 * and secrets that type uses (those of another type are refused when sent, so a typo in `authType`
 * does not go unnoticed), headers and query that do not fight the authentication, and the timeout and
 * retry policy with their defaults.
 */
import { invalidAt, pathOf } from '../core/validation.js';
import {
  CONTROL,
  HEADER_NAME,
  SECRET_LIMIT,
  URL_LIMIT,
  findKey,
  headerMap,
  intIn,
  oneOf,
  queryParametersOf,
  required,
  validateCode,
} from './common-rules.js';
import { AUTH_TYPES, type AuthType } from './model.js';
import { LIMITS, type ConnectionInput } from './schemas.js';
import {
  API_KEY_LOCATIONS,
  AUTH_SETTING_NAMES,
  AUTH_USES,
  SECRET_NAMES,
  type AuthSettingName,
  type ConnectionSecrets,
  type ConnectionSettings,
  type SecretName,
  type ValidConnection,
} from './settings.js';

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
  if (baseOnly && url.search !== '') throw invalidAt(at, 'must not carry a query; put query parameters in "queryParameters"');
  if (url.hash !== '') throw invalidAt(at, 'must not carry a fragment (#…)');
  return text;
}

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
  const { query, at: queryAt } = queryParametersOf(input, at);
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
          throw invalidAt(pathOf(queryAt, clash), `the API key is sent in query parameter ${apiKeyName}; remove it from ${queryAt}`);
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
