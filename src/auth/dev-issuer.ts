/**
 * The development token issuer: a signing key kept in the data directory, its public half served as
 * a JWKS (`GET /auth/dev/jwks.json`), and `ifw token --app <client id>` to print an access token
 * signed with it. It lets the OAuth path be used and tested without an identity provider.
 *
 * Off unless IFW_DEV_TOKEN_ISSUER=true, and the configuration refuses it together with
 * IFW_PRODUCTION=true: whoever can read the data directory could sign tokens for any application.
 * The tokens it signs still name an application that must be registered and enabled, like any other.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTVerifyGetKey } from 'jose';
import { randomUUID } from 'node:crypto';
import { DEFAULT_REQUIRED_PERMISSION } from './jwt.js';
import type { IssuerConfig } from './issuers.js';
import type { Config } from '../core/config.js';

export const DEV_ISSUER = 'urn:ifw:dev-token-issuer';
export const DEV_AUDIENCE = 'api://ifw';
export const DEV_JWKS_PATH = '/auth/dev/jwks.json';

/** The issuers (`iss`) whose tokens a service with this configuration accepts, the development issuer included. */
export const trustedIssuerNames = (config: Pick<Config, 'tokenIssuers' | 'devTokenIssuer'>): string[] => [
  ...config.tokenIssuers.map((i) => i.issuer),
  ...(config.devTokenIssuer ? [DEV_ISSUER] : []),
];
const ALG = 'ES256';
const KEY_FILE = 'dev-token-issuer.jwk';

export interface DevTokenOptions {
  /** Lifetime in seconds; default one hour. */
  readonly ttlSeconds?: number;
  /** The API permissions in `roles`; default `API.ReadWrite.All`. */
  readonly roles?: readonly string[];
  readonly now?: Date;
}

export interface DevIssuer {
  /** The public key set, as served. */
  readonly jwks: { keys: JWK[] };
  /** The issuer to trust, with its keys held in process. */
  readonly trust: IssuerConfig;
  /** An application (client credentials) access token for `clientId`. */
  sign(clientId: string, options?: DevTokenOptions): Promise<string>;
}

/** Reads the key from `<dataDir>/dev-token-issuer.jwk`, creating it (mode 0600) on first use. */
export async function loadDevIssuer(dataDir: string): Promise<DevIssuer> {
  const privateJwk = await readOrCreateKey(path.join(dataDir, KEY_FILE));
  const { d: _private, ...publicJwk } = privateJwk;
  const signingKey = await importJWK(privateJwk, ALG);
  const jwks = { keys: [{ ...publicJwk, alg: ALG, use: 'sig' }] };
  const keys: JWTVerifyGetKey = createLocalJWKSet(jwks);
  return {
    jwks,
    trust: { issuer: DEV_ISSUER, audience: DEV_AUDIENCE, keys },
    async sign(clientId, options = {}) {
      const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
      return new SignJWT({ azp: clientId, roles: [...(options.roles ?? [DEFAULT_REQUIRED_PERMISSION])] })
        .setProtectedHeader({ alg: ALG, kid: privateJwk.kid, typ: 'JWT' })
        .setIssuer(DEV_ISSUER)
        .setAudience(DEV_AUDIENCE)
        .setSubject(clientId)
        .setIssuedAt(now)
        .setNotBefore(now)
        .setExpirationTime(now + (options.ttlSeconds ?? 3600))
        .setJti(randomUUID())
        .sign(signingKey);
    },
  };
}

async function readOrCreateKey(file: string): Promise<JWK> {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as JWK;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const { privateKey } = await generateKeyPair(ALG, { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: `dev-${randomUUID()}` };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Written whole under another name, then linked into place: a reader never sees half a key.
  const temporary = `${file}.${process.pid}.${randomUUID()}`;
  fs.writeFileSync(temporary, JSON.stringify(jwk), { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(temporary, file);
    return jwk;
  } catch (err) {
    // Another process created it first: use theirs, so both sign and verify with one key.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return JSON.parse(fs.readFileSync(file, 'utf8')) as JWK;
    throw err;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}
