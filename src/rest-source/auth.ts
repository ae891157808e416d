/**
 * Turning a connection's authentication into request credentials, including OAuth2 client
 * credentials: the token is fetched once, cached per connection and reused until shortly before it
 * expires, and dropped when the API answers 401 with it. Credentials only ever go to the
 * connection's origin (the fetch loop decides where; this file only says what they are).
 */
import { createHash } from 'node:crypto';
import { describeAnswer, exchange, excerpt, type HttpDeps } from './http-client.js';
import type { ConnectionAuth, RestConnection } from './model.js';
import { secretsOf, type Secrets } from './redact.js';

/** What to add to a request for the connection's origin. */
export interface Credentials {
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
}

const NO_CREDENTIALS: Credentials = { headers: {}, query: {} };

/** The token endpoint failed or answered something unusable; the fetch loop wraps it in a FetchError. */
export class AuthError extends Error {
  override readonly name = 'AuthError';
}

/** A token is refreshed this long before `expires_in` ends, so that it does not expire in flight. */
export const TOKEN_REFRESH_MARGIN_MS = 60_000;

interface CachedToken {
  readonly accessToken: string;
  /** Epoch ms after which the token is fetched again; null: the server gave no lifetime, reuse until a 401. */
  readonly refreshAt: number | null;
}

/**
 * OAuth2 tokens by connection. One fetch at a time per key: concurrent runs of one connection share
 * the token request instead of each asking the identity provider.
 */
export class OAuthTokenCache {
  private readonly tokens = new Map<string, CachedToken>();
  private readonly pending = new Map<string, Promise<CachedToken>>();

  async token(key: string, nowMs: number, fetchToken: () => Promise<CachedToken>): Promise<string> {
    const cached = this.tokens.get(key);
    if (cached !== undefined && (cached.refreshAt === null || nowMs < cached.refreshAt)) return cached.accessToken;
    let pending = this.pending.get(key);
    if (pending === undefined) {
      pending = fetchToken()
        .then((fresh) => {
          this.prune(nowMs);
          this.tokens.set(key, fresh);
          return fresh;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return (await pending).accessToken;
  }

  /** Forgets `accessToken` if it is still the cached one (another run may have refreshed it already). */
  invalidate(key: string, accessToken: string): void {
    if (this.tokens.get(key)?.accessToken === accessToken) this.tokens.delete(key);
  }

  private prune(nowMs: number): void {
    for (const [key, t] of this.tokens) if (t.refreshAt !== null && t.refreshAt <= nowMs) this.tokens.delete(key);
  }
}

/** The process-wide cache production uses; tests pass their own. */
export const sharedTokenCache = new OAuthTokenCache();

type OAuthAuth = Extract<ConnectionAuth, { type: 'oauth2ClientCredentials' }>;

/**
 * Changing the client secret, scope or token URL must not reuse a token obtained with the old ones, and
 * a token obtained for one API is sent to that API only (its base URL's origin).
 */
function cacheKey(connection: RestConnection, auth: OAuthAuth): string {
  const secret = createHash('sha256').update(auth.clientSecret).digest('hex');
  return JSON.stringify([connection.code, new URL(connection.baseUrl).origin, auth.tokenUrl, auth.clientId, auth.scope, secret]);
}

/** RFC 6749 2.3.1: client id and secret are form-encoded before they are joined for HTTP Basic. */
const formEncode = (value: string): string => encodeURIComponent(value).replace(/%20/g, '+');

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

/** Reads a token answer (RFC 6749 5.1); throws AuthError saying what is wrong with it. */
export function readTokenResponse(text: string, nowMs: number): CachedToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AuthError(`the token endpoint's answer is not JSON: ${excerpt(text, 200)}`);
  }
  const body = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  const { access_token: accessToken, token_type: tokenType, expires_in: expiresIn } = body;
  if (typeof accessToken !== 'string' || accessToken === '') throw new AuthError("the token endpoint's answer has no access_token");
  if (tokenType !== undefined && (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer')) {
    throw new AuthError(`the token endpoint issued a token of type ${JSON.stringify(tokenType)}; only Bearer tokens are supported`);
  }
  const lifetimeMs = typeof expiresIn === 'number' ? expiresIn * 1000 : typeof expiresIn === 'string' ? Number(expiresIn) * 1000 : NaN;
  if (!Number.isFinite(lifetimeMs) || lifetimeMs <= 0) return { accessToken, refreshAt: null };
  // Short-lived tokens keep at least half their lifetime; otherwise a 60 s token would never be reused.
  return { accessToken, refreshAt: nowMs + lifetimeMs - Math.min(TOKEN_REFRESH_MARGIN_MS, lifetimeMs / 2) };
}

async function requestToken(connection: RestConnection, auth: OAuthAuth, deps: HttpDeps): Promise<CachedToken> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (auth.scope !== null && auth.scope !== '') form.set('scope', auth.scope);
  const outcome = await exchange(
    {
      method: 'POST',
      url: auth.tokenUrl,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: basic(formEncode(auth.clientId), formEncode(auth.clientSecret)),
      },
      body: form.toString(),
      timeoutMs: connection.timeoutMs,
    },
    connection.retry,
    deps,
  );
  if (outcome.kind === 'noAnswer') throw new AuthError(`the token endpoint ${auth.tokenUrl} could not be reached: ${outcome.reason}`);
  if (outcome.status < 200 || outcome.status >= 300) {
    throw new AuthError(`the token endpoint ${auth.tokenUrl}: ${describeAnswer(outcome.status, outcome.text, outcome.attempts)}`);
  }
  return readTokenResponse(outcome.text, deps.clock().getTime());
}

export interface Authenticator {
  /** Credentials for a request to the connection's origin; may fetch an OAuth2 token (throws AuthError). */
  credentials(): Promise<Credentials>;
  /** After a 401: drops the token that was used; true when asking again can help (OAuth2 only). */
  invalidate(): boolean;
  /** What messages must not show, including the current access token. */
  secrets(): Secrets;
}

export function staticCredentials(auth: Exclude<ConnectionAuth, OAuthAuth>): Credentials {
  switch (auth.type) {
    case 'none':
      return NO_CREDENTIALS;
    case 'basic':
      return { headers: { authorization: basic(auth.username, auth.password) }, query: {} };
    case 'bearer':
      return { headers: { authorization: `Bearer ${auth.token}` }, query: {} };
    case 'apiKey':
      return auth.in === 'header'
        ? { headers: { [auth.name]: auth.value }, query: {} }
        : { headers: {}, query: { [auth.name]: auth.value } };
    default: {
      const unexpected: never = auth;
      throw new Error(`unknown auth type ${JSON.stringify(unexpected)}`);
    }
  }
}

export function createAuthenticator(connection: RestConnection, deps: HttpDeps, cache: OAuthTokenCache = sharedTokenCache): Authenticator {
  const { auth } = connection;
  if (auth.type !== 'oauth2ClientCredentials') {
    const credentials = staticCredentials(auth);
    const secrets = secretsOf(auth);
    return { credentials: () => Promise.resolve(credentials), invalidate: () => false, secrets: () => secrets };
  }
  const key = cacheKey(connection, auth);
  let current: string | null = null;
  // The same object while the token is unchanged, so that callers can memoise what they derive from it.
  let credentials: Credentials = NO_CREDENTIALS;
  return {
    async credentials() {
      const token = await cache.token(key, deps.clock().getTime(), () => requestToken(connection, auth, deps));
      if (token !== current) {
        current = token;
        credentials = { headers: { authorization: `Bearer ${token}` }, query: {} };
      }
      return credentials;
    },
    invalidate() {
      if (current !== null) cache.invalidate(key, current);
      return true;
    },
    secrets: () => secretsOf(auth, current === null ? [] : [current]),
  };
}
