/**
 * The identity providers whose access tokens the service accepts, and their signing keys.
 *
 * Keys come from each issuer's JWKS URL through jose's remote key set: fetched on first use, cached
 * for `cacheMaxAge` (jose's default, 10 minutes), and fetched again when a token names a key id the
 * cache does not hold — that is how rotated keys are picked up. jose refuses such a refetch within
 * `cooldownDuration` of the previous fetch, so tokens with invented key ids cannot make the service
 * hammer the identity provider. We lower jose's 30 s default to 10 s: a key published during the
 * cooldown is seen at most 10 s later (in steady state the last fetch is minutes old and the first
 * token signed with a new key triggers the refetch at once), and forged key ids still cost at most one
 * fetch per issuer every 10 s.
 */
import { createRemoteJWKSet, errors, type JWTVerifyGetKey } from 'jose';
import { ConfigError } from '../core/config.js';
import { AppError } from '../core/errors.js';

export interface IssuerConfig {
  /** The `iss` claim value, compared exactly (no trailing-slash or case normalisation). */
  readonly issuer: string;
  /** Accepted `aud` values: the token must name at least one of them. */
  readonly audience: string | readonly string[];
  /** Where the issuer publishes its signing keys (https, or http on a loopback address). */
  readonly jwksUrl?: string;
  /** Keys held in this process instead of fetched from `jwksUrl` (the development token issuer). */
  readonly keys?: JWTVerifyGetKey;
}

export const DEFAULT_JWKS_COOLDOWN_SECONDS = 10;

export interface TrustedIssuer {
  readonly issuer: string;
  readonly audience: string[];
  readonly keys: JWTVerifyGetKey;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Validates the issuer list and creates one cached remote key set per issuer (no fetch yet). */
export function trustIssuers(issuers: readonly IssuerConfig[], cooldownSeconds: number): ReadonlyMap<string, TrustedIssuer> {
  if (issuers.length === 0) throw new ConfigError('at least one token issuer must be configured');
  if (!Number.isFinite(cooldownSeconds) || cooldownSeconds < 0) {
    throw new ConfigError(`the JWKS cooldown must be a non-negative number of seconds, got ${cooldownSeconds}`);
  }
  const trusted = new Map<string, TrustedIssuer>();
  for (const config of issuers) {
    if (config.issuer.trim() === '') throw new ConfigError('a token issuer must not be empty');
    if (trusted.has(config.issuer)) throw new ConfigError(`token issuer ${config.issuer} is configured twice`);
    const audience = typeof config.audience === 'string' ? [config.audience] : [...config.audience];
    if (audience.length === 0 || audience.some((a) => a.trim() === '')) {
      throw new ConfigError(`token issuer ${config.issuer} needs a non-empty audience`);
    }
    if (config.keys !== undefined) {
      trusted.set(config.issuer, { issuer: config.issuer, audience, keys: config.keys });
      continue;
    }
    const remote = createRemoteJWKSet(jwksUrl(config), { cooldownDuration: cooldownSeconds * 1000 });
    trusted.set(config.issuer, { issuer: config.issuer, audience, keys: unavailableAs503(config.issuer, remote) });
  }
  return trusted;
}

function jwksUrl(config: IssuerConfig): URL {
  if (config.jwksUrl === undefined) throw new ConfigError(`token issuer ${config.issuer} needs a jwksUrl`);
  let url: URL;
  try {
    url = new URL(config.jwksUrl);
  } catch {
    throw new ConfigError(`the JWKS URL of token issuer ${config.issuer} is not a URL: "${config.jwksUrl}"`);
  }
  // Whoever can change the key set in transit can sign any token, so plain http only on loopback.
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  if (!secure) throw new ConfigError(`the JWKS URL of token issuer ${config.issuer} must use https`);
  return url;
}

/**
 * A key set that cannot be fetched is the identity provider's fault, not the caller's: answer 503
 * instead of letting a network error look like a bad token. Key-matching errors pass through.
 */
function unavailableAs503(issuer: string, remote: JWTVerifyGetKey): JWTVerifyGetKey {
  return async (header, token) => {
    try {
      return await remote(header, token);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) throw err;
      const unavailable = new AppError(503, 'serviceUnavailable', `the signing keys of token issuer ${issuer} could not be fetched`);
      unavailable.cause = err;
      throw unavailable;
    }
  };
}
