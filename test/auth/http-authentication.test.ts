/**
 * Authentication through the whole service over HTTP: bearer tokens signed by a real local identity
 * provider (JWKS server), Basic credentials of service users, the throttle, public routes, who is
 * recorded as the submitter, and that no secret reaches the logs.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { verify } from '@node-rs/argon2';
import { base64url, exportSPKI, type JWTPayload } from 'jose';
import pino from 'pino';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAuthenticator } from '../../src/auth/authenticate.js';
import { createDirectory } from '../../src/auth/directory.js';
import { findUser } from '../../src/auth/store.js';
import { systemClock } from '../../src/core/clock.js';
import { ConfigError, loadConfig, type Config } from '../../src/core/config.js';
import { AppError } from '../../src/core/errors.js';
import { REDACT_PATHS } from '../../src/core/logger.js';
import { createService } from '../../src/main/service.js';
import { asDb } from '../../src/storage/db.js';
import { createSigningKey, signToken, startJwksServer, type JwksServer, type SigningKey } from '../helpers/jwks-server.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const ISSUER = 'https://login.example.test/tenant-a/v2.0';
const AUDIENCE = 'api://ifw-http-test';
const PERMISSION = 'API.ReadWrite.All';
const REQUESTS = `${API}/bulkImportRequests`;
const PASSWORD = 'correct horse battery staple';
const ADMIN_PASSWORD = 'admin password for the http tests';

const nowSeconds = () => Math.floor(Date.now() / 1000);

function appClaims(overrides: JWTPayload = {}): JWTPayload {
  const now = nowSeconds();
  return {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'service-principal',
    azp: 'erp-connector',
    roles: [PERMISSION],
    iat: now - 60,
    nbf: now - 60,
    exp: now + 3600,
    ...overrides,
  };
}

function delegatedClaims(overrides: JWTPayload = {}): JWTPayload {
  const { roles: _roles, ...claims } = appClaims({ sub: 'user-object-id', scp: `openid ${PERMISSION} offline_access`, ...overrides });
  return claims;
}

const basic = (userName: string, password: string) => `Basic ${Buffer.from(`${userName}:${password}`).toString('base64')}`;
const bearer = (token: string) => `Bearer ${token}`;
const json64 = (value: object) => base64url.encode(JSON.stringify(value));

/** The `{"error":{"code","message"}}` body of an error answer, checked to be exactly that shape. */
function errorOf(res: LightMyRequestResponse, status: number, code: string): string {
  expect({ status: res.statusCode, body: res.json() }).toMatchObject({ status, body: { error: { code } } });
  const body = res.json<{ error: { code: string; message: string } }>();
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message']);
  return body.error.message;
}

/** Neither the token nor any distinctive part of it appears in the answer. */
function expectNotEchoed(res: LightMyRequestResponse, token: string): void {
  const answer = `${res.body}\n${JSON.stringify(res.headers)}`;
  expect(answer).not.toContain(token);
  for (const part of token.split('.').filter((p) => p.length >= 16)) expect(answer).not.toContain(part.slice(0, 16));
}

let idp: JwksServer;
let t: TestService;

beforeAll(async () => {
  idp = await startJwksServer('idp');
  t = await startTestService({
    config: {
      tokenIssuers: [{ issuer: ISSUER, audience: AUDIENCE, jwksUrl: idp.jwksUrl }],
      tokenClockSkewSeconds: 60,
      adminPassword: ADMIN_PASSWORD,
    },
  });
  await t.service.accounts.createApplication({
    clientId: 'erp-connector',
    issuer: ISSUER,
    displayName: 'ERP',
    permissionSets: ['VENDOR IF ALL'],
  });
  await t.service.accounts.createApplication({ clientId: 'rest-only', issuer: ISSUER, permissionSets: ['VENDOR IF STANDARD'] });
  for (const userName of ['alice', 'bob', 'carol', 'tess', 'connie']) {
    await t.service.accounts.createUser({ userName, password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
  }
  await t.service.accounts.createUser({ userName: 'dora', password: PASSWORD, permissionSets: ['VENDOR IF ALL'], enabled: false });
});
afterAll(async () => {
  await t.cleanup();
  await idp.close();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A request without the test service's default credentials: exactly the headers given. */
const call = (method: 'GET' | 'POST' | 'HEAD', url: string, headers: Record<string, string> = {}, remoteAddress?: string) =>
  t.service.app.inject({ method, url, headers, ...(remoteAddress === undefined ? {} : { remoteAddress }) });
const listAs = (authorization: string, remoteAddress?: string) => call('GET', REQUESTS, { authorization }, remoteAddress);
const submitAs = (authorization: string, remoteAddress?: string) =>
  t.service.app.inject({
    method: 'POST',
    url: REQUESTS,
    headers: { authorization, 'content-type': 'application/json' },
    payload: JSON.stringify({ integrationSortingOrder: 10, payload: '[]' }),
    ...(remoteAddress === undefined ? {} : { remoteAddress }),
  });

describe('bearer tokens from a configured issuer', () => {
  it('accepts an application token (roles) of a registered application holding VENDOR IF ALL', async () => {
    const res = await listAs(bearer(await signToken(idp.keys[0]!, appClaims())));
    expect(res.statusCode).toBe(200);
  });

  it('accepts a delegated token carrying the permission in scp', async () => {
    const res = await listAs(bearer(await signToken(idp.keys[0]!, delegatedClaims())));
    expect(res.statusCode).toBe(200);
  });

  it('tolerates a token expired 30 s ago with a clock skew of 60 s', async () => {
    const now = nowSeconds();
    const res = await listAs(bearer(await signToken(idp.keys[0]!, appClaims({ iat: now - 3600, nbf: now - 3600, exp: now - 30 }))));
    expect(res.statusCode).toBe(200);
  });

  const invalidTokens: [string, () => string | Promise<string>, RegExp][] = [
    [
      'expired beyond the clock skew',
      () => signToken(idp.keys[0]!, appClaims({ iat: nowSeconds() - 7200, nbf: nowSeconds() - 7200, exp: nowSeconds() - 120 })),
      /expired/,
    ],
    ['not yet valid beyond the clock skew', () => signToken(idp.keys[0]!, appClaims({ nbf: nowSeconds() + 300 })), /not yet valid/],
    ['from an issuer that is not configured', () => signToken(idp.keys[0]!, appClaims({ iss: 'https://evil.example.test/' })), /issuer/],
    ['for another audience', () => signToken(idp.keys[0]!, appClaims({ aud: 'api://someone-else' })), /audience/],
    ['signed by another key under the same kid', async () => signToken(await createSigningKey(idp.keys[0]!.kid), appClaims()), /signature/],
    ['with alg none', () => `${json64({ alg: 'none', typ: 'JWT' })}.${json64(appClaims())}.`, /algorithm/],
    [
      "HS256 signed with the issuer's public key as the HMAC secret",
      async () => {
        const key = idp.keys[0]!;
        const signingInput = `${json64({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${json64(appClaims())}`;
        const secret = await exportSPKI(key.publicKey);
        return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
      },
      /algorithm/,
    ],
    ['that is not a JWT at all', () => 'not-a-jwt', /malformed/],
    ['with a header that is not JSON', () => `${base64url.encode('{"alg":')}.${json64(appClaims())}.c2ln`, /malformed/],
  ];

  it.each(invalidTokens)('refuses a token %s: 401, invalid_token, the token never echoed', async (_name, makeToken, reason) => {
    const token = await makeToken();
    const res = await listAs(bearer(token));
    const message = errorOf(res, 401, 'unauthorized');
    expect(message).toMatch(reason);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="ifw", error="invalid_token", error_description="[^"]*"$/);
    expectNotEchoed(res, token);
  });

  it('refuses a valid token without API.ReadWrite.All: 403 with insufficient_scope', async () => {
    const token = await signToken(idp.keys[0]!, appClaims({ roles: ['API.Read.All'] }));
    const res = await listAs(bearer(token));
    expect(errorOf(res, 403, 'forbidden')).toMatch(/API\.ReadWrite\.All/);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="ifw", error="insufficient_scope"/);
    expectNotEchoed(res, token);
  });

  it('refuses a valid token of an application that is not registered: 403', async () => {
    const res = await listAs(bearer(await signToken(idp.keys[0]!, appClaims({ azp: 'unknown-app' }))));
    expect(errorOf(res, 403, 'forbidden')).toMatch(/'unknown-app' is not registered/);
  });

  it('refuses an application disabled through the admin API on its very next request, and accepts it again once enabled', async () => {
    await t.service.accounts.createApplication({ clientId: 'soon-disabled', issuer: ISSUER, permissionSets: ['VENDOR IF ALL'] });
    const authorization = bearer(await signToken(idp.keys[0]!, appClaims({ azp: 'soon-disabled' })));
    expect((await listAs(authorization)).statusCode).toBe(200);
    const patch = (enabled: boolean) =>
      t.inject({
        method: 'PATCH',
        url: `${API}/applications('soon-disabled')`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ enabled }),
      });

    expect((await patch(false)).statusCode).toBe(200);
    expect(errorOf(await listAs(authorization), 403, 'forbidden')).toMatch(/'soon-disabled' is disabled/);
    expect((await patch(true)).statusCode).toBe(200);
    expect((await listAs(authorization)).statusCode).toBe(200);
  });

  it('refuses a token of another trusted issuer that names a registered client id: an application is its issuer and client id', async () => {
    // The development issuer is trusted too; its token names the client id registered for ISSUER.
    const impostor = await t.service.devIssuer!.sign('erp-connector');
    const message = errorOf(await listAs(bearer(impostor)), 403, 'forbidden');
    expect(message).toBe("Application 'erp-connector' is registered for another issuer than the one that signed this token.");
    expect((await listAs(bearer(await signToken(idp.keys[0]!, appClaims())))).statusCode).toBe(200);
  });

  it('refuses an application registered without an issuer while the service trusts several, saying how to bind it', async () => {
    await t.service.db.kysely
      .insertInto('ifw_application')
      .values({
        client_id: 'legacy-app',
        issuer: null,
        display_name: '',
        enabled: 1,
        permission_sets: '["VENDOR IF ALL"]',
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      })
      .execute();
    const authorization = bearer(await signToken(idp.keys[0]!, appClaims({ azp: 'legacy-app' })));
    expect(errorOf(await listAs(authorization), 403, 'forbidden')).toContain(
      "Application 'legacy-app' is registered without an issuer, and the service accepts tokens of 2 issuers",
    );
    const bind = await t.inject({
      method: 'PATCH',
      url: `${API}/applications('legacy-app')`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ issuer: ISSUER }),
    });
    expect(bind.statusCode).toBe(200);
    expect(bind.json()).toMatchObject({ clientId: 'legacy-app', issuer: ISSUER });
    expect((await listAs(authorization)).statusCode).toBe(200);
  });

  it('refuses to register an application without an issuer while the service trusts several', async () => {
    const res = await t.inject({
      method: 'POST',
      url: `${API}/applications`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ clientId: 'which-issuer' }),
    });
    expect(errorOf(res, 400, 'invalidRequest')).toContain('issuer is required: the service accepts tokens of 2 issuers');
  });

  it('refuses a bulk import from an application holding only VENDOR IF STANDARD, naming the sets that grant it', async () => {
    const res = await submitAs(bearer(await signToken(idp.keys[0]!, appClaims({ azp: 'rest-only' }))));
    const message = errorOf(res, 403, 'forbidden');
    expect(message).toContain("application 'rest-only' (holding VENDOR IF STANDARD)");
    expect(message).toContain("'bulkImport', granted by VENDOR IF ALL or SUPER");
  });
});

/** A service of its own trusting the JWKS at `jwksUrl`, so that its key cache starts empty. */
async function serviceTrusting(jwksUrl: string): Promise<TestService> {
  return startTestService({ applyExample: false, config: { tokenIssuers: [{ issuer: ISSUER, audience: AUDIENCE, jwksUrl }] } });
}

describe('the identity provider’s keys', () => {
  it('picks up a rotated key once the 10 s JWKS cooldown is over, and no longer accepts the retired key', async () => {
    // jose's cooldown reads Date.now(): move the clock instead of waiting 10 s.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const rotating = await startJwksServer('rotating');
    const s = await serviceTrusting(rotating.jwksUrl);
    try {
      await s.service.accounts.createApplication({ clientId: 'erp-connector', issuer: ISSUER, permissionSets: ['VENDOR IF ALL'] });
      const oldKey = rotating.keys[0]!;
      const list = async (key: SigningKey) =>
        s.service.app.inject({ method: 'GET', url: REQUESTS, headers: { authorization: bearer(await signToken(key, appClaims())) } });
      expect((await list(oldKey)).statusCode).toBe(200);

      const newKey = await rotating.rotate();
      // Within the cooldown the new kid is not fetched again: an unknown key, 401.
      expect(errorOf(await list(newKey), 401, 'unauthorized')).toMatch(/signing key/);
      expect(rotating.requestCount).toBe(1);

      vi.setSystemTime(Date.now() + 10_001);
      expect((await list(newKey)).statusCode).toBe(200);
      expect(rotating.requestCount).toBe(2);
      expect(errorOf(await list(oldKey), 401, 'unauthorized')).toMatch(/signing key/);
    } finally {
      await s.cleanup();
      await rotating.close();
    }
  });

  const outages: [string, (server: JwksServer) => void | Promise<void>][] = [
    [
      'answers 500',
      (server) => {
        server.failWith = 500;
      },
    ],
    ['is not listening', (server) => server.close()],
  ];

  it.each(outages)('answers 503 serviceUnavailable (not 401 or 500) while the JWKS endpoint %s', async (_name, breakIt) => {
    const down = await startJwksServer('down');
    const key = down.keys[0]!;
    const s = await serviceTrusting(down.jwksUrl);
    try {
      await s.service.accounts.createApplication({ clientId: 'erp-connector', issuer: ISSUER, permissionSets: ['VENDOR IF ALL'] });
      await breakIt(down);
      const res = await s.service.app.inject({
        method: 'GET',
        url: REQUESTS,
        headers: { authorization: bearer(await signToken(key, appClaims())) },
      });
      expect(errorOf(res, 503, 'serviceUnavailable')).toMatch(/could not be fetched/);
    } finally {
      await s.cleanup();
      await down.close().catch(() => undefined);
    }
  });
});

describe('Basic authentication', () => {
  it('accepts the right password', async () => {
    expect((await listAs(basic('alice', PASSWORD))).statusCode).toBe(200);
  });

  it('answers a wrong password and an unknown user identically: 401 with both challenges', async () => {
    const wrong = await listAs(basic('bob', 'not the password at all'), '198.51.100.10');
    const unknown = await listAs(basic('nobody-here', 'not the password at all'), '198.51.100.11');
    for (const res of [wrong, unknown]) {
      expect(errorOf(res, 401, 'unauthorized')).toBe('The user name or password is not valid.');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="ifw", Basic realm="ifw", charset="UTF-8"');
    }
    expect(unknown.body).toBe(wrong.body);
  });

  it('runs exactly one argon2id verification for an unknown user (against the dummy hash), as for a wrong password', async () => {
    const verifier = vi.fn((storedHash: string, plain: string) => verify(storedHash, plain));
    const authenticator = createAuthenticator({
      directory: createDirectory(t.service.db.kysely, systemClock),
      clock: systemClock,
      basic: true,
      tokens: undefined,
      verifier,
    });
    const refusal = async (authorization: string, address: string) => {
      const err = await authenticator.authenticate(authorization, address).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      const { status, code, message, headers } = err as AppError;
      return { status, code, message, headers };
    };
    const bobHash = (await findUser(t.service.db.kysely, 'bob'))!.passwordHash;

    const wrong = await refusal(basic('bob', 'a wrong password here'), '192.0.2.1');
    expect(verifier.mock.calls).toEqual([[bobHash, 'a wrong password here']]);

    verifier.mockClear();
    const unknown = await refusal(basic('no-such-user', 'a wrong password here'), '192.0.2.2');
    expect(verifier).toHaveBeenCalledTimes(1);
    const [dummyHash, plain] = verifier.mock.calls[0]!;
    expect(plain).toBe('a wrong password here');
    expect(dummyHash).not.toBe(bobHash);
    // The same cost as a real hash: argon2id with the parameters new passwords are hashed with.
    expect(dummyHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(bobHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(unknown).toEqual(wrong);
  });

  it('neither looks up nor remembers a name no user or application can have, so long names cannot fill its memory', async () => {
    const lookups: string[] = [];
    const db = t.service.db.kysely;
    // The directory's queries pass through this Kysely instance: count the statements it runs.
    const counting = db.withPlugin({
      transformQuery: (args) => {
        lookups.push(args.queryId.queryId);
        return args.node;
      },
      transformResult: (args) => Promise.resolve(args.result),
    });
    const directory = createDirectory(asDb(counting, db.dialect), systemClock);
    expect(await directory.user('u'.repeat(65))).toBeUndefined();
    expect(await directory.user('x'.repeat(5000))).toBeUndefined();
    expect(await directory.user('bad name')).toBeUndefined();
    expect(await directory.application('c'.repeat(201))).toBeUndefined();
    expect(lookups).toEqual([]);
    expect(await directory.user('bob')).toBeDefined();
    expect(lookups.length).toBeGreaterThan(0);
  });

  it('verifies the password of concurrent first requests once, then remembers it', async () => {
    const verifier = vi.fn((storedHash: string, plain: string) => verify(storedHash, plain));
    const authenticator = createAuthenticator({
      directory: createDirectory(t.service.db.kysely, systemClock),
      clock: systemClock,
      basic: true,
      tokens: undefined,
      verifier,
    });
    const principals = await Promise.all(
      Array.from({ length: 8 }, () => authenticator.authenticate(basic('carol', PASSWORD), '192.0.2.3')),
    );
    expect(principals.map((p) => p.name)).toEqual(new Array(8).fill('carol'));
    expect(verifier).toHaveBeenCalledTimes(1);
  });

  it('refuses a disabled user, even with the right password', async () => {
    expect(errorOf(await listAs(basic('dora', PASSWORD), '198.51.100.12'), 401, 'unauthorized')).toMatch(/'dora' is disabled/);
    expect(errorOf(await listAs(basic('dora', 'a wrong password!'), '198.51.100.12'), 401, 'unauthorized')).toBe(
      'The user name or password is not valid.',
    );
  });

  it('refuses malformed Basic credentials and unsupported schemes with 401', async () => {
    for (const authorization of ['Basic !!!notbase64', `Basic ${Buffer.from('no-colon').toString('base64')}`, 'Digest username="alice"']) {
      errorOf(await listAs(authorization, '198.51.100.13'), 401, 'unauthorized');
    }
  });

  it('slows a user after 5 failures from one address: the next attempt there gets 429 with Retry-After, even with the right password', async () => {
    for (let i = 0; i < 5; i += 1) errorOf(await listAs(basic('tess', `wrong password ${i}`), '198.51.100.20'), 401, 'unauthorized');
    const res = await listAs(basic('tess', PASSWORD), '198.51.100.20');
    expect(errorOf(res, 429, 'tooManyRequests')).toMatch(/try again in \d+ seconds/);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('never locks a user out: the real user signs in from another address while an attacker keeps failing', async () => {
    for (let i = 0; i < 5; i += 1) errorOf(await listAs(basic('admin', `attacker guess ${i}`), '203.0.113.66'), 401, 'unauthorized');
    errorOf(await listAs(basic('admin', 'attacker guess 5'), '203.0.113.66'), 429, 'tooManyRequests');
    expect((await listAs(basic('admin', ADMIN_PASSWORD), '198.51.100.22')).statusCode).toBe(200);
    errorOf(await listAs(basic('admin', 'attacker guess 6'), '203.0.113.66'), 429, 'tooManyRequests');
    expect((await listAs(basic('admin', ADMIN_PASSWORD), '198.51.100.22')).statusCode).toBe(200);
  });

  it('slows an address trying one password against many user names, leaving those users free elsewhere', async () => {
    for (let i = 0; i < 20; i += 1) errorOf(await listAs(basic(`guess-${i}`, 'Winter2024!!'), '198.51.100.30'), 401, 'unauthorized');
    const slowed = await listAs(basic('alice', PASSWORD), '198.51.100.30');
    errorOf(slowed, 429, 'tooManyRequests');
    expect(slowed.headers['retry-after']).toMatch(/^\d+$/);
    expect((await listAs(basic('alice', PASSWORD), '198.51.100.31')).statusCode).toBe(200);
  });

  it('cannot be raced: concurrent guesses beyond the limit are refused with 429, not verified', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => listAs(basic('connie', `parallel guess ${i}`), '198.51.100.40')),
    );
    const statuses = answers.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
  });

  it('when switched off (basicAuth: false): 401 saying so, and no Basic challenge offered', async () => {
    const off = await startTestService({ applyExample: false, config: { basicAuth: false, adminPassword: ADMIN_PASSWORD } });
    try {
      const res = await off.service.app.inject({
        method: 'GET',
        url: `${API}/users`,
        headers: { authorization: basic('admin', ADMIN_PASSWORD) },
      });
      expect(errorOf(res, 401, 'unauthorized')).toMatch(/Basic authentication is switched off/);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="ifw"');
      const bare = await off.service.app.inject({ method: 'GET', url: `${API}/users` });
      errorOf(bare, 401, 'unauthorized');
      expect(bare.headers['www-authenticate']).toBe('Bearer realm="ifw"');
    } finally {
      await off.cleanup();
    }
  });
});

describe('routes without credentials', () => {
  it('answers 401 on protected routes, with WWW-Authenticate offering Bearer and Basic', async () => {
    for (const [method, url] of [
      ['GET', REQUESTS],
      ['POST', REQUESTS],
      ['HEAD', REQUESTS],
      ['GET', `${API}/users`],
      ['GET', `${REQUESTS}(00000000-0000-0000-0000-000000000000)`],
    ] as const) {
      const res = await call(method, url);
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      if (method !== 'HEAD') expect(errorOf(res, 401, 'unauthorized')).toMatch(/needs credentials/);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="ifw", Basic realm="ifw", charset="UTF-8"');
    }
  });

  it.each(['/health/live', '/health/ready', '/docs/json'])('serves the public route %s', async (url) => {
    expect((await call('GET', url)).statusCode).toBe(200);
  });

  it('answers 404 for an unknown path', async () => {
    errorOf(await call('GET', `${API}/noSuchThing`), 404, 'notFound');
    errorOf(await call('GET', '/nothing/here'), 404, 'notFound');
  });
});

describe('submittedBy', () => {
  it('records user:<name> for Basic and application:<client id> for bearer, in the details, and filters the list by it', async () => {
    const byUser = await submitAs(basic('alice', PASSWORD));
    const byApp = await submitAs(bearer(await signToken(idp.keys[0]!, appClaims())));
    expect([byUser.statusCode, byApp.statusCode]).toEqual([202, 202]);
    const expected: [LightMyRequestResponse, string][] = [
      [byUser, 'user:alice'],
      [byApp, 'application:erp-connector'],
    ];
    for (const [submitted, submittedBy] of expected) {
      const id = submitted.json<{ requestId: string }>().requestId;
      expect((await t.inject({ method: 'GET', url: `${REQUESTS}(${id})/details` })).json()).toMatchObject({ requestId: id, submittedBy });
    }

    const filtered = await t.inject({ method: 'GET', url: `${REQUESTS}?$filter=${encodeURIComponent("submittedBy eq 'user:alice'")}` });
    const ids = filtered.json<{ value: { requestId: string }[] }>().value.map((r) => r.requestId);
    expect(ids).toEqual([byUser.json<{ requestId: string }>().requestId]);
  });

  it("is not a property of the entity: the poll, the list items and the action answers carry the spec's properties only", async () => {
    const submitted = await submitAs(basic('alice', PASSWORD));
    const id = submitted.json<{ requestId: string }>().requestId;
    const spec = ['requestId', 'integrationSortingOrder', 'status', 'submittedAt', 'processedAt', 'recordCount', 'errorMessage'];
    const polled = (await t.inject({ method: 'GET', url: `${REQUESTS}(${id})` })).json<Record<string, unknown>>();
    expect(Object.keys(polled).filter((k) => !k.startsWith('@odata.'))).toEqual(spec);
    const listed = (await t.inject({ method: 'GET', url: REQUESTS })).json<{ value: Record<string, unknown>[] }>().value;
    for (const item of listed) expect(Object.keys(item)).toEqual(spec);
    const cancelled = (await t.inject({ method: 'POST', url: `${REQUESTS}(${id})/Microsoft.NAV.cancel` })).json<Record<string, unknown>>();
    expect(Object.keys(cancelled).filter((k) => !k.startsWith('@odata.'))).toEqual(spec);
  });
});

describe('secrets in logs', () => {
  it('never logs passwords, tokens or Basic credentials, at trace level, over a real socket and through inject', async () => {
    const lines: string[] = [];
    // The service's own logger settings (level from the config, the same redaction), into memory.
    const logger = pino(
      { level: 'trace', redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
      { write: (line: string) => lines.push(line) },
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-auth-logs-'));
    const config = loadConfig({}, {
      dataDir: dir,
      port: 0,
      workers: false,
      logLevel: 'trace',
      adminPassword: ADMIN_PASSWORD,
      tokenIssuers: [{ issuer: ISSUER, audience: AUDIENCE, jwksUrl: idp.jwksUrl }],
    } satisfies Partial<Config>);
    const service = await createService(config, { logger });
    try {
      await service.accounts.createApplication({ clientId: 'erp-connector', permissionSets: ['SUPER'] });
      const validToken = await signToken(idp.keys[0]!, appClaims());
      const invalidToken = await signToken(idp.keys[0]!, appClaims({ aud: 'api://someone-else' }));
      const userPassword = 'the new user password 42';
      const wrongPassword = 'a guessed wrong password';
      const secrets = [ADMIN_PASSWORD, userPassword, wrongPassword, validToken, invalidToken];
      const adminBasic = basic('admin', ADMIN_PASSWORD);
      const wrongBasic = basic('admin', wrongPassword);
      const userBasic = basic('logged-user', userPassword);

      const base = await service.listen();
      const send = async (method: string, url: string, authorization: string, body?: unknown) => {
        const res = await fetch(`${base}${url}`, {
          method,
          headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return res.status;
      };
      expect(await send('GET', REQUESTS, adminBasic)).toBe(200);
      expect(await send('GET', REQUESTS, wrongBasic)).toBe(401);
      expect(await send('GET', REQUESTS, bearer(validToken))).toBe(200);
      expect(await send('GET', REQUESTS, bearer(invalidToken))).toBe(401);
      expect(
        await send('POST', `${API}/users`, bearer(validToken), {
          userName: 'logged-user',
          password: userPassword,
          permissionSets: ['VENDOR IF ALL'],
        }),
      ).toBe(201);
      expect(await send('PATCH', `${API}/users('logged-user')`, adminBasic, { password: `${userPassword}!` })).toBe(200);
      expect(await send('POST', `${API}/users`, adminBasic, { userName: 'short', password: 'short' })).toBe(400);
      const injected = await service.app.inject({ method: 'GET', url: REQUESTS, headers: { authorization: userBasic } });
      expect(injected.statusCode).toBe(401);

      const log = lines.join('');
      expect(log).toContain('"url":"/api/vendor/integrationFramework/v1.0/users"');
      for (const secret of [...secrets, `${userPassword}!`, adminBasic, wrongBasic, userBasic]) expect(log).not.toContain(secret);
      for (const encoded of [adminBasic, wrongBasic, userBasic].map((h) => h.slice('Basic '.length))) expect(log).not.toContain(encoded);
      for (const token of [validToken, invalidToken]) for (const part of token.split('.')) expect(log).not.toContain(part);
      expect(log).not.toContain('$argon2');
    } finally {
      await service.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('configuration', () => {
  it('refuses the development token issuer in production', () => {
    expect(() => loadConfig({ IFW_DEV_TOKEN_ISSUER: 'true', IFW_PRODUCTION: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ IFW_DEV_TOKEN_ISSUER: 'true', IFW_PRODUCTION: 'true' })).toThrow(
      /IFW_DEV_TOKEN_ISSUER cannot be used with IFW_PRODUCTION=true/,
    );
    expect(() => loadConfig({}, { devTokenIssuer: true, production: true })).toThrow(ConfigError);
  });

  it.each([
    ['malformed JSON', '[{"issuer": "https://idp.example.test/"', /IFW_OAUTH_ISSUERS must be a JSON array.*not valid JSON/],
    ['an object instead of an array', '{"issuer": "https://idp.example.test/"}', /IFW_OAUTH_ISSUERS must be a JSON array/],
    [
      'an entry without jwksUrl',
      '[{"issuer": "https://idp.example.test/", "audience": "api://ifw"}]',
      /entry 1 lacks a string issuer, audience or jwksUrl/,
    ],
  ])('refuses IFW_OAUTH_ISSUERS that is %s with a clear ConfigError', (_name, value, message) => {
    expect(() => loadConfig({ IFW_OAUTH_ISSUERS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ IFW_OAUTH_ISSUERS: value })).toThrow(message);
  });

  it('reads IFW_DIRECTORY_CACHE_MS, 5000 by default, and refuses a value outside 0 to 600000', () => {
    expect(loadConfig({}).directoryCacheMs).toBe(5000);
    expect(loadConfig({ IFW_DIRECTORY_CACHE_MS: '0' }).directoryCacheMs).toBe(0);
    expect(loadConfig({ IFW_DIRECTORY_CACHE_MS: '250' }).directoryCacheMs).toBe(250);
    expect(() => loadConfig({ IFW_DIRECTORY_CACHE_MS: '600001' })).toThrow(
      'IFW_DIRECTORY_CACHE_MS must be between 0 and 600000, got 600001',
    );
    expect(() => loadConfig({ IFW_DIRECTORY_CACHE_MS: '5s' })).toThrow('IFW_DIRECTORY_CACHE_MS must be a whole number, got "5s"');
  });

  it('reads a well-formed IFW_OAUTH_ISSUERS', () => {
    const issuers = [{ issuer: ISSUER, audience: [AUDIENCE], jwksUrl: 'https://login.example.test/keys' }];
    expect(loadConfig({ IFW_OAUTH_ISSUERS: JSON.stringify(issuers) }).tokenIssuers).toEqual(issuers);
  });
});
