import { base64url, exportSPKI, SignJWT, type JWTPayload } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createTokenValidator,
  principalFromClaims,
  TokenError,
  wwwAuthenticate,
  type TokenRefusal,
  type TokenValidatorOptions,
} from '../../src/auth/jwt.js';
import { manualClock } from '../../src/core/clock.js';
import { ConfigError } from '../../src/core/config.js';
import { AppError } from '../../src/core/errors.js';
import { createSigningKey, signToken, startJwksServer, type JwksServer } from '../helpers/jwks-server.js';

const ISSUER = 'https://login.example.test/tenant-a/v2.0';
const OTHER_ISSUER = 'https://idp.other.test/realms/b';
const AUDIENCE = 'api://ifw';
const NOW = new Date('2030-01-15T12:00:00Z');
const NOW_S = NOW.getTime() / 1000;
const PERMISSION = 'API.ReadWrite.All';

let idp: JwksServer;
let otherIdp: JwksServer;
const extraServers: JwksServer[] = [];

beforeAll(async () => {
  idp = await startJwksServer('idp-a');
  otherIdp = await startJwksServer('idp-b');
});
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(extraServers.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await idp.close();
  await otherIdp.close();
});

function appClaims(overrides: JWTPayload = {}): JWTPayload {
  return {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'sp-object-id',
    azp: 'app-123',
    roles: [PERMISSION],
    iat: NOW_S - 60,
    nbf: NOW_S - 60,
    exp: NOW_S + 3600,
    ...overrides,
  };
}

function delegatedClaims(overrides: JWTPayload = {}): JWTPayload {
  const { roles: _roles, ...claims } = appClaims({ sub: 'user-object-id', scp: `openid ${PERMISSION} offline_access`, ...overrides });
  return claims;
}

function validator(options: Partial<TokenValidatorOptions> = {}, jwksUrl = idp.jwksUrl) {
  return createTokenValidator({
    issuers: [
      { issuer: ISSUER, audience: AUDIENCE, jwksUrl },
      { issuer: OTHER_ISSUER, audience: ['api://elsewhere', AUDIENCE], jwksUrl: otherIdp.jwksUrl },
    ],
    clock: manualClock(NOW),
    ...options,
  });
}

async function refusal(promise: Promise<unknown>): Promise<TokenError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TokenError);
  return err as TokenError;
}

function expectRefused(err: TokenError, reason: TokenRefusal, message?: string): void {
  expect({ reason: err.reason, status: err.status, code: err.code }).toEqual(
    reason === 'missingPermission' ? { reason, status: 403, code: 'forbidden' } : { reason, status: 401, code: 'unauthorized' },
  );
  if (message !== undefined) expect(err.message).toBe(message);
}

const json64 = (value: object): string => base64url.encode(JSON.stringify(value));

describe('accepted tokens', () => {
  it('accepts an application token carrying API.ReadWrite.All in roles', async () => {
    const principal = await validator().validate(await signToken(idp.keys[0]!, appClaims()));
    expect(principal).toEqual({
      kind: 'application',
      appId: 'app-123',
      subject: 'sp-object-id',
      issuer: ISSUER,
      permissions: [PERMISSION],
      expiresAt: new Date((NOW_S + 3600) * 1000),
    });
  });

  it('accepts a delegated token carrying API.ReadWrite.All in scp', async () => {
    const principal = await validator().validate(await signToken(idp.keys[0]!, delegatedClaims()));
    expect(principal).toMatchObject({
      kind: 'delegated',
      appId: 'app-123',
      subject: 'user-object-id',
      permissions: ['openid', PERMISSION, 'offline_access'],
    });
  });

  it('accepts a token of a second issuer whose audience list includes one of the token audiences', async () => {
    const token = await signToken(otherIdp.keys[0]!, appClaims({ iss: OTHER_ISSUER, aud: ['account', AUDIENCE] }));
    expect(await validator().validate(token)).toMatchObject({ issuer: OTHER_ISSUER, appId: 'app-123' });
  });
});

describe('validity window and clock tolerance', () => {
  it('refuses an expired token', async () => {
    const err = await refusal(validator().validate(await signToken(idp.keys[0]!, appClaims({ exp: NOW_S - 61 }))));
    expectRefused(err, 'expired', 'the access token has expired');
  });

  it('refuses a token whose nbf lies beyond the clock tolerance in the future', async () => {
    const err = await refusal(validator().validate(await signToken(idp.keys[0]!, appClaims({ nbf: NOW_S + 61, iat: NOW_S + 61 }))));
    expectRefused(err, 'notYetValid', 'the access token is not yet valid');
  });

  it('accepts a token expired or not yet valid by less than the clock tolerance', async () => {
    const v = validator();
    await expect(v.validate(await signToken(idp.keys[0]!, appClaims({ exp: NOW_S - 59 })))).resolves.toMatchObject({ appId: 'app-123' });
    await expect(v.validate(await signToken(idp.keys[0]!, appClaims({ nbf: NOW_S + 59 })))).resolves.toMatchObject({ appId: 'app-123' });
  });

  it('uses the configured clock tolerance', async () => {
    const err = await refusal(
      validator({ clockToleranceSeconds: 0 }).validate(await signToken(idp.keys[0]!, appClaims({ exp: NOW_S - 1 }))),
    );
    expectRefused(err, 'expired');
  });

  it('judges expiry by the injected clock, so the same token expires when the clock moves', async () => {
    const clock = manualClock(NOW);
    const v = validator({ clock });
    const token = await signToken(idp.keys[0]!, appClaims({ exp: NOW_S + 300 }));
    await expect(v.validate(token)).resolves.toMatchObject({ kind: 'application' });
    clock.advance(361_000);
    expectRefused(await refusal(v.validate(token)), 'expired');
  });

  it('refuses a token without exp', async () => {
    const { exp: _exp, ...claims } = appClaims();
    expectRefused(await refusal(validator().validate(await signToken(idp.keys[0]!, claims))), 'claims');
  });
});

describe('issuer, audience and signature', () => {
  it('refuses a token from an issuer that is not configured, without fetching any keys', async () => {
    const before = idp.requestCount + otherIdp.requestCount;
    const err = await refusal(validator().validate(await signToken(idp.keys[0]!, appClaims({ iss: 'https://evil.test' }))));
    expectRefused(err, 'unknownIssuer', "the access token's issuer is not accepted");
    expect(idp.requestCount + otherIdp.requestCount).toBe(before);
  });

  it('compares the issuer exactly (a trailing slash is another issuer)', async () => {
    const err = await refusal(validator().validate(await signToken(idp.keys[0]!, appClaims({ iss: `${ISSUER}/` }))));
    expectRefused(err, 'unknownIssuer');
  });

  it("refuses a token naming one configured issuer but signed with another issuer's key", async () => {
    const v = validator();
    const foreign = otherIdp.keys[0]!;
    expectRefused(await refusal(v.validate(await signToken(foreign, appClaims()))), 'unknownKey');
    // Even under the right issuer's key id, the other issuer's key does not verify.
    expectRefused(await refusal(v.validate(await signToken(foreign, appClaims(), { kid: idp.keys[0]!.kid }))), 'signature');
  });

  it('refuses a token for another audience', async () => {
    const err = await refusal(validator().validate(await signToken(idp.keys[0]!, appClaims({ aud: ['api://someone-else', 'account'] }))));
    expectRefused(err, 'audience', "the access token's audience is not accepted");
  });

  it('refuses a token signed by another key under the same kid', async () => {
    const impostor = await createSigningKey(idp.keys[0]!.kid);
    const err = await refusal(validator().validate(await signToken(impostor, appClaims())));
    expectRefused(err, 'signature', "the access token's signature is not valid");
  });

  it('refuses an unsigned token (alg none, in any spelling)', async () => {
    const v = validator();
    for (const alg of ['none', 'None', 'NONE']) {
      const token = `${json64({ alg, typ: 'JWT', kid: idp.keys[0]!.kid })}.${json64(appClaims())}.`;
      expectRefused(await refusal(v.validate(token)), 'algorithm', "the access token's signing algorithm is not accepted");
    }
  });

  it("refuses an HS256 token whose HMAC secret is the issuer's public key (algorithm confusion)", async () => {
    const key = idp.keys[0]!;
    const v = validator();
    await v.validate(await signToken(key, appClaims())); // the keys are cached, as in a running service
    for (const secret of [await exportSPKI(key.publicKey), JSON.stringify(key.jwk)]) {
      const token = await new SignJWT(appClaims())
        .setProtectedHeader({ alg: 'HS256', kid: key.kid })
        .sign(new TextEncoder().encode(secret));
      expectRefused(await refusal(v.validate(token)), 'algorithm');
    }
  });

  it('refuses an algorithm outside a narrowed allow-list', async () => {
    const err = await refusal(validator({ algorithms: ['PS256'] }).validate(await signToken(idp.keys[0]!, appClaims())));
    expectRefused(err, 'algorithm');
  });

  it('refuses to be configured with none, HS* or no algorithms at all', () => {
    for (const algorithms of [['none'], ['HS256'], ['RS256', 'HS512'], []]) {
      expect(() => validator({ algorithms })).toThrow(ConfigError);
    }
  });

  it('refuses to be configured without issuers, twice the same issuer, an empty audience or a JWKS URL over plain http', () => {
    const good = { issuer: ISSUER, audience: AUDIENCE, jwksUrl: 'https://login.example.test/keys' };
    for (const issuers of [
      [],
      [good, good],
      [{ ...good, audience: [] }],
      [{ ...good, jwksUrl: 'http://login.example.test/keys' }],
      [{ ...good, jwksUrl: 'not a url' }],
    ]) {
      expect(() => createTokenValidator({ issuers })).toThrow(ConfigError);
    }
  });
});

describe('calling application and permission', () => {
  it('answers 403 for a valid application token without API.ReadWrite.All', async () => {
    const err = await refusal(validator().validate(await signToken(idp.keys[0]!, appClaims({ roles: ['API.Read.All'] }))));
    expectRefused(err, 'missingPermission', 'the access token lacks the API permission API.ReadWrite.All');
  });

  it('answers 403 for a delegated token whose scp lacks the permission, even when its roles hold it', async () => {
    const err = await refusal(validator().validate(await signToken(idp.keys[0]!, appClaims({ scp: 'openid API.Read.All' }))));
    expectRefused(err, 'missingPermission');
  });

  it('checks the configured permission instead of the default', async () => {
    const v = validator({ requiredPermission: 'Ifw.Import' });
    expectRefused(await refusal(v.validate(await signToken(idp.keys[0]!, appClaims()))), 'missingPermission');
    await expect(v.validate(await signToken(idp.keys[0]!, appClaims({ roles: ['Ifw.Import'] })))).resolves.toMatchObject({
      permissions: ['Ifw.Import'],
    });
  });

  it('refuses a token that does not name the calling application', async () => {
    const { azp: _azp, ...claims } = appClaims();
    const err = await refusal(validator().validate(await signToken(idp.keys[0]!, claims)));
    expectRefused(err, 'noApplication', 'the access token does not name the calling application (azp, appid or client_id)');
  });

  it('refuses a token without subject', async () => {
    const { sub: _sub, ...claims } = appClaims();
    expectRefused(await refusal(validator().validate(await signToken(idp.keys[0]!, claims))), 'noSubject');
  });
});

describe('principalFromClaims (after signature and time checks)', () => {
  const base = { iss: ISSUER, sub: 's', exp: NOW_S };
  const accepted: [string, JWTPayload, { kind: string; appId: string; permissions: string[] }][] = [
    ['roles only: application', { ...base, azp: 'a', roles: [PERMISSION] }, { kind: 'application', appId: 'a', permissions: [PERMISSION] }],
    [
      'scp only: delegated',
      { ...base, azp: 'a', scp: `${PERMISSION}  openid` },
      { kind: 'delegated', appId: 'a', permissions: [PERMISSION, 'openid'] },
    ],
    [
      'roles and scp: delegated, scp counts',
      { ...base, azp: 'a', roles: ['X'], scp: PERMISSION },
      { kind: 'delegated', appId: 'a', permissions: [PERMISSION] },
    ],
    ['appid when no azp', { ...base, appid: 'b', roles: [PERMISSION] }, { kind: 'application', appId: 'b', permissions: [PERMISSION] }],
    [
      'client_id when no azp nor appid',
      { ...base, client_id: 'c', roles: [PERMISSION] },
      { kind: 'application', appId: 'c', permissions: [PERMISSION] },
    ],
    [
      'azp before appid and client_id',
      { ...base, azp: 'a', appid: 'b', client_id: 'c', roles: [PERMISSION] },
      { kind: 'application', appId: 'a', permissions: [PERMISSION] },
    ],
  ];
  it.each(accepted)('%s', (_name, claims, expected) => {
    expect(principalFromClaims(claims, PERMISSION)).toMatchObject(expected);
  });

  const refused: [string, JWTPayload, TokenRefusal][] = [
    ['no app claim', { ...base, roles: [PERMISSION] }, 'noApplication'],
    ['empty azp', { ...base, azp: '', roles: [PERMISSION] }, 'noApplication'],
    ['azp not a string', { ...base, azp: 7, appid: 'b', roles: [PERMISSION] }, 'noApplication'],
    ['roles not a list of strings', { ...base, azp: 'a', roles: PERMISSION }, 'claims'],
    ['scp not a string', { ...base, azp: 'a', scp: [PERMISSION] }, 'claims'],
    ['neither roles nor scp', { ...base, azp: 'a' }, 'missingPermission'],
    ['permission only as a prefix', { ...base, azp: 'a', scp: `${PERMISSION}x` }, 'missingPermission'],
  ];
  it.each(refused)('refuses: %s', (_name, claims, reason) => {
    let thrown: unknown;
    try {
      principalFromClaims(claims, PERMISSION);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TokenError);
    expectRefused(thrown as TokenError, reason);
  });
});

describe('malformed tokens and messages', () => {
  it('refuses malformed token strings', async () => {
    const v = validator();
    const garbage = [
      '',
      'not-a-token',
      'a.b.c',
      'a.b',
      `${json64({ alg: 'RS256' })}.bm90IGpzb24.`,
      `${json64({ alg: 'RS256' })}.${json64(appClaims())}.x`.repeat(400),
    ];
    for (const token of garbage) {
      expectRefused(await refusal(v.validate(token)), 'malformed', 'the access token is malformed');
    }
  });

  it('refuses a token longer than 16 KiB before verifying it, even when validly signed', async () => {
    const token = await signToken(idp.keys[0]!, appClaims({ padding: 'x'.repeat(16 * 1024) }));
    expectRefused(await refusal(validator().validate(token)), 'malformed');
  });

  it('never echoes the token in the message', async () => {
    const v = validator();
    const tokens = [
      await signToken(idp.keys[0]!, appClaims({ exp: NOW_S - 3600, azp: 'secret-app-marker' })),
      await signToken(idp.keys[0]!, appClaims({ aud: 'secret-audience-marker' })),
      await signToken(idp.keys[0]!, appClaims({ roles: ['secret-role-marker'] })),
      `${json64({ alg: 'none' })}.${json64(appClaims({ sub: 'secret-sub-marker' }))}.`,
    ];
    for (const token of tokens) {
      const { message } = await refusal(v.validate(token));
      expect(message).not.toMatch(/marker/);
      for (const part of token.split('.').filter((p) => p.length > 8)) expect(message).not.toContain(part.slice(0, 16));
    }
  });
});

describe('key fetching, caching and rotation', () => {
  it('fetches the JWKS once for many validations', async () => {
    const server = await startJwksServer('cache');
    extraServers.push(server);
    const v = validator({}, server.jwksUrl);
    const token = await signToken(server.keys[0]!, appClaims());
    await Promise.all(Array.from({ length: 25 }, () => v.validate(token)));
    for (let i = 0; i < 10; i += 1) await v.validate(token);
    expect(server.requestCount).toBe(1);
  });

  it('picks up a rotated key: a token with the new kid makes the validator fetch the JWKS again', async () => {
    const server = await startJwksServer('rotating');
    extraServers.push(server);
    const v = validator({ jwksCooldownSeconds: 0 }, server.jwksUrl);
    const oldKey = server.keys[0]!;
    await v.validate(await signToken(oldKey, appClaims()));
    const newKey = await server.rotate();
    expect(newKey.kid).not.toBe(oldKey.kid);
    await expect(v.validate(await signToken(newKey, appClaims()))).resolves.toMatchObject({ appId: 'app-123' });
    expect(server.requestCount).toBe(2);
    // The retired key is gone from the refetched set.
    expectRefused(await refusal(v.validate(await signToken(oldKey, appClaims()))), 'unknownKey');
  });

  it('with the default cooldown, unknown kids do not refetch within 10 s; after it the rotated key is seen', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const server = await startJwksServer('cooldown');
    extraServers.push(server);
    const v = validator({}, server.jwksUrl);
    await v.validate(await signToken(server.keys[0]!, appClaims()));
    const newKey = await server.rotate();
    const token = await signToken(newKey, appClaims());
    for (let i = 0; i < 5; i += 1) expectRefused(await refusal(v.validate(token)), 'unknownKey');
    expect(server.requestCount).toBe(1);
    vi.setSystemTime(Date.now() + 10_001);
    await expect(v.validate(token)).resolves.toMatchObject({ appId: 'app-123' });
    expect(server.requestCount).toBe(2);
  });

  it('answers 503 (not 401) while the JWKS cannot be fetched, and recovers', async () => {
    const server = await startJwksServer('down');
    extraServers.push(server);
    server.failWith = 500;
    const v = validator({}, server.jwksUrl);
    const token = await signToken(server.keys[0]!, appClaims());
    const err = await v.validate(token).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err).not.toBeInstanceOf(TokenError);
    expect({ status: (err as AppError).status, code: (err as AppError).code }).toEqual({ status: 503, code: 'serviceUnavailable' });
    server.failWith = null;
    await expect(v.validate(token)).resolves.toMatchObject({ appId: 'app-123' });
  });
});

describe('TokenError and WWW-Authenticate', () => {
  it('is an AppError: 401 unauthorized for invalid tokens, 403 forbidden for a missing permission', () => {
    const invalid = new TokenError('expired', 'the access token has expired');
    const forbidden = new TokenError('missingPermission', 'the access token lacks the API permission API.ReadWrite.All');
    expect(invalid).toBeInstanceOf(AppError);
    expect([invalid.status, invalid.code, forbidden.status, forbidden.code]).toEqual([401, 'unauthorized', 403, 'forbidden']);
  });

  it.each([
    [undefined, 'Bearer realm="ifw"'],
    [
      new TokenError('expired', 'the access token has expired'),
      'Bearer realm="ifw", error="invalid_token", error_description="the access token has expired"',
    ],
    [
      new TokenError('missingPermission', 'the access token lacks the API permission API.ReadWrite.All'),
      'Bearer realm="ifw", error="insufficient_scope", error_description="the access token lacks the API permission API.ReadWrite.All"',
    ],
    [new TokenError('claims', 'a "quoted" \\ näme'), `Bearer realm="ifw", error="invalid_token", error_description="a 'quoted' ' n?me"`],
  ])('builds the RFC 6750 challenge for %s', (error, expected) => {
    expect(wwwAuthenticate(error)).toBe(expected);
  });
});
