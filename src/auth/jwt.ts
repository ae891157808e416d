/**
 * OAuth 2.0 bearer-token validation (the service is a resource server). A token is accepted when it
 * is a JWT signed with an asymmetric algorithm by a key of the issuer it names, that issuer is
 * configured, the audience matches, it is within its validity window (give or take the clock
 * tolerance), and it names the calling application. It must then carry the API permission, in
 * `roles` for application tokens or `scp` for delegated ones. Invalid tokens are 401, a valid token
 * without the permission is 403; messages never echo the token.
 */
import { decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import { systemClock, type Clock } from '../core/clock.js';
import { ConfigError } from '../core/config.js';
import { AppError } from '../core/errors.js';
import { DEFAULT_JWKS_COOLDOWN_SECONDS, trustIssuers, type IssuerConfig, type TrustedIssuer } from './issuers.js';

export type { IssuerConfig } from './issuers.js';

export interface TokenValidatorOptions {
  readonly issuers: readonly IssuerConfig[];
  /** Allowed clock skew for `exp` and `nbf`, in seconds. Default 60. */
  readonly clockToleranceSeconds?: number;
  /** Default: the system clock. */
  readonly clock?: Clock;
  /** Default `API.ReadWrite.All`. */
  readonly requiredPermission?: string;
  /** Asymmetric JWS algorithms only. Default RS256/384/512, PS256/384/512, ES256, ES384. */
  readonly algorithms?: readonly string[];
  /** Seconds after a JWKS fetch before an unknown key id may trigger another. Default 10 (see issuers.ts). */
  readonly jwksCooldownSeconds?: number;
}

export interface TokenPrincipal {
  readonly kind: 'application' | 'delegated';
  /** The calling application: `azp`, else `appid`, else `client_id`. */
  readonly appId: string;
  readonly subject: string;
  readonly issuer: string;
  readonly permissions: readonly string[];
  readonly expiresAt: Date;
}

export interface TokenValidator {
  /** The issuers whose tokens are accepted, as their tokens name them in `iss`. */
  readonly issuers: readonly string[];
  validate(token: string): Promise<TokenPrincipal>;
}

export const DEFAULT_REQUIRED_PERMISSION = 'API.ReadWrite.All';
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 60;
export const DEFAULT_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384'];
/** Never `none` nor HS*: a symmetric algorithm would let anyone holding the public key sign tokens. */
const ASYMMETRIC_ALGORITHMS = new Set([...DEFAULT_ALGORITHMS, 'ES512', 'EdDSA', 'Ed25519']);
/** Far above any real access token; refuses absurd input before any parsing. */
const MAX_TOKEN_LENGTH = 16 * 1024;

export type TokenRefusal =
  | 'malformed'
  | 'unknownIssuer'
  | 'algorithm'
  | 'unknownKey'
  | 'signature'
  | 'expired'
  | 'notYetValid'
  | 'issuer'
  | 'audience'
  | 'claims'
  | 'noApplication'
  | 'noSubject'
  | 'missingPermission';

/** 401 `unauthorized` for an invalid token; 403 `forbidden` for a valid one lacking the permission. */
export class TokenError extends AppError {
  constructor(
    readonly reason: TokenRefusal,
    message: string,
  ) {
    const forbidden = reason === 'missingPermission';
    super(forbidden ? 403 : 401, forbidden ? 'forbidden' : 'unauthorized', message);
    this.name = 'TokenError';
  }
}

/** The RFC 6750 `WWW-Authenticate` value: bare challenge without an error (no credentials sent). */
export function wwwAuthenticate(error?: TokenError): string {
  const challenge = 'Bearer realm="ifw"';
  if (error === undefined) return challenge;
  const code = error.status === 403 ? 'insufficient_scope' : 'invalid_token';
  // RFC 6750 §3: error_description excludes `"` and `\` and anything outside printable ASCII.
  const description = error.message.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?');
  return `${challenge}, error="${code}", error_description="${description}"`;
}

export function createTokenValidator(options: TokenValidatorOptions): TokenValidator {
  const issuers = trustIssuers(options.issuers, options.jwksCooldownSeconds ?? DEFAULT_JWKS_COOLDOWN_SECONDS);
  const algorithms = checkAlgorithms(options.algorithms ?? DEFAULT_ALGORITHMS);
  const clockTolerance = options.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  if (!Number.isFinite(clockTolerance) || clockTolerance < 0) {
    throw new ConfigError(`the clock tolerance must be a non-negative number of seconds, got ${clockTolerance}`);
  }
  const requiredPermission = options.requiredPermission ?? DEFAULT_REQUIRED_PERMISSION;
  if (requiredPermission.trim() === '') throw new ConfigError('the required API permission must not be empty');
  const clock = options.clock ?? systemClock;

  return {
    issuers: [...issuers.keys()],
    async validate(token) {
      const trusted = issuerOf(token, issuers);
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, trusted.keys, {
          issuer: trusted.issuer,
          audience: trusted.audience,
          algorithms,
          clockTolerance,
          currentDate: clock(),
          requiredClaims: ['exp', 'sub'],
        }));
      } catch (err) {
        throw refusalOf(err);
      }
      return principalFromClaims(payload, requiredPermission);
    },
  };
}

function checkAlgorithms(algorithms: readonly string[]): string[] {
  if (algorithms.length === 0) throw new ConfigError('at least one token signing algorithm must be allowed');
  for (const alg of algorithms) {
    if (!ASYMMETRIC_ALGORITHMS.has(alg))
      throw new ConfigError(`token signing algorithm ${alg} is not allowed (asymmetric algorithms only)`);
  }
  return [...algorithms];
}

/** Picks the configured issuer by the token's unverified `iss`; verification then checks it for real. */
function issuerOf(token: string, issuers: ReadonlyMap<string, TrustedIssuer>): TrustedIssuer {
  if (token.length > MAX_TOKEN_LENGTH) throw new TokenError('malformed', 'the access token is malformed');
  let iss: unknown;
  try {
    iss = decodeJwt(token).iss;
  } catch {
    throw new TokenError('malformed', 'the access token is malformed');
  }
  const trusted = typeof iss === 'string' ? issuers.get(iss) : undefined;
  if (trusted === undefined) throw new TokenError('unknownIssuer', "the access token's issuer is not accepted");
  return trusted;
}

/** Turns jose's verification errors into refusals; anything else (e.g. keys unavailable, 503) passes. */
function refusalOf(err: unknown): unknown {
  if (err instanceof errors.JWTExpired) return new TokenError('expired', 'the access token has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case 'nbf':
        return new TokenError('notYetValid', 'the access token is not yet valid');
      case 'iss':
        return new TokenError('issuer', "the access token's issuer is not accepted");
      case 'aud':
        return new TokenError('audience', "the access token's audience is not accepted");
      case 'sub':
        return new TokenError('noSubject', 'the access token has no subject');
      default:
        return new TokenError('claims', `the access token's ${err.claim} claim is missing or not valid`);
    }
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return new TokenError('algorithm', "the access token's signing algorithm is not accepted");
  if (err instanceof errors.JWSSignatureVerificationFailed) return new TokenError('signature', "the access token's signature is not valid");
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) {
    return new TokenError('unknownKey', "the access token's signing key is not one of its issuer's keys");
  }
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid || err instanceof errors.JOSENotSupported) {
    return new TokenError('malformed', 'the access token is malformed');
  }
  return err;
}

/**
 * The pure core after signature and time checks: who is calling and whether the token carries the
 * permission. Delegated tokens may also carry the user's `roles`; only `scp` counts for them.
 */
export function principalFromClaims(payload: JWTPayload, requiredPermission: string): TokenPrincipal {
  const appId = firstPresent(payload, ['azp', 'appid', 'client_id']);
  if (typeof appId !== 'string' || appId === '') {
    throw new TokenError('noApplication', 'the access token does not name the calling application (azp, appid or client_id)');
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new TokenError('noSubject', 'the access token has no subject');
  if (typeof payload.iss !== 'string' || typeof payload.exp !== 'number') {
    throw new TokenError('claims', 'the access token lacks its issuer or expiry');
  }
  const { roles, scp } = payload;
  if (roles !== undefined && !isStringList(roles)) {
    throw new TokenError('claims', "the access token's roles claim is not a list of strings");
  }
  if (scp !== undefined && typeof scp !== 'string') throw new TokenError('claims', "the access token's scp claim is not a string");
  const isApplication = roles !== undefined && scp === undefined;
  const kind = isApplication ? 'application' : 'delegated';
  const permissions: readonly string[] = isApplication ? roles : (scp ?? '').split(' ').filter((s) => s !== '');
  if (!permissions.includes(requiredPermission)) {
    throw new TokenError('missingPermission', `the access token lacks the API permission ${requiredPermission}`);
  }
  return { kind, appId, subject: payload.sub, issuer: payload.iss, permissions, expiresAt: new Date(payload.exp * 1000) };
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function firstPresent(payload: JWTPayload, claims: readonly string[]): unknown {
  for (const claim of claims) if (payload[claim] !== undefined) return payload[claim];
  return undefined;
}
