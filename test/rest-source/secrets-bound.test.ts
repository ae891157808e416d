/**
 * Stored REST secrets go only where they were saved for. An attacker holding VENDOR IF STANDARD, or an
 * administrator's session in the wrong hands, tries to point a connection with stored credentials at a
 * capture server of theirs and make the service call it (Test connection, Preview, a run), through the
 * API, the console and a declarative file. The capture server must receive no secret: connections are
 * VENDOR IF ALL's, and a change of the base URL's origin, the token URL or the API key's placement keeps
 * no stored secret. Real sockets, a real API and a real capture server.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/declarative-config/apply.js';
import { errorUnder, focused } from '../helpers/form-html.js';
import { signInHttp } from '../helpers/console-http.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'secrets-bound-pass-1';
const SECRETS = {
  password: 'stored-basic-password-Qx71',
  token: 'stored-bearer-token-Wd52',
  apiKey: 'stored-api-key-Lm38',
  clientSecret: 'stored-client-secret-Hn94',
};

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A server that answers 200 to everything (a token to POST /token) and remembers what it was sent. */
async function recordingServer(): Promise<{ origin: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const answer = req.url?.startsWith('/token') ? { access_token: 'minted-access-token', token_type: 'Bearer', expires_in: 3600 } : [];
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let t: TestService;
let base: string;
let api: Awaited<ReturnType<typeof recordingServer>>;
let capture: Awaited<ReturnType<typeof recordingServer>>;
let standard: { authorization: string };
let all: { authorization: string };

const call = (headers: { authorization: string }, method: string, url: string, body?: unknown) =>
  fetch(`${base}${API}/${url}`, {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const connections = () => [
  { code: 'c-basic', baseUrl: `${api.origin}/v1`, authType: 'basic', username: 'svc', password: SECRETS.password },
  { code: 'c-bearer', baseUrl: `${api.origin}/v1`, authType: 'bearer', token: SECRETS.token },
  { code: 'c-key', baseUrl: `${api.origin}/v1`, authType: 'apiKey', apiKeyName: 'X-Api-Key', apiKeyIn: 'header', apiKey: SECRETS.apiKey },
  {
    code: 'c-oauth',
    baseUrl: `${api.origin}/v1`,
    authType: 'oauth2ClientCredentials',
    tokenUrl: `${api.origin}/token`,
    clientId: 'ifw',
    clientSecret: SECRETS.clientSecret,
  },
];

/** Nothing the capture server received holds a stored secret, in any form. */
function expectNoSecretCaptured(): void {
  const everything = JSON.stringify(capture.seen);
  for (const secret of Object.values(SECRETS)) {
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(Buffer.from(`svc:${secret}`).toString('base64'));
    expect(everything).not.toContain(Buffer.from(`ifw:${secret}`).toString('base64'));
  }
  expect(everything).not.toContain('minted-access-token');
}

beforeAll(async () => {
  api = await recordingServer();
  capture = await recordingServer();
  t = await startTestService({ config: { host: '127.0.0.1', port: 0 } });
  base = (await t.service.listen()).replace('localhost', '127.0.0.1');
  standard = await t.headersFor('VENDOR IF STANDARD');
  all = await t.headersFor('VENDOR IF ALL');
  await t.service.accounts.createUser({ userName: 'sec-standard', password: PASSWORD, permissionSets: ['VENDOR IF STANDARD'] });
  await t.service.accounts.createUser({ userName: 'sec-all', password: PASSWORD, permissionSets: ['VENDOR IF ALL'] });
  for (const connection of connections()) expect((await call(all, 'POST', 'restApiConnections', connection)).status).toBe(201);
});
afterAll(async () => {
  await t?.cleanup();
  await api?.close();
  await capture?.close();
});
beforeEach(() => {
  capture.seen.length = 0;
});

describe('VENDOR IF STANDARD cannot move a connection', () => {
  it.each(['c-basic', 'c-bearer', 'c-key', 'c-oauth'])(
    '%s: PATCH of the base URL or token URL is 403, and Test connection still calls the API',
    async (code) => {
      for (const change of [{ baseUrl: capture.origin }, { tokenUrl: `${capture.origin}/token` }]) {
        const res = await call(standard, 'PATCH', `restApiConnections('${code}')`, change);
        expect(res.status).toBe(403);
        expect(((await res.json()) as { error: { message: string } }).error.message).toContain("'configureConnections'");
      }
      const tested = await call(standard, 'POST', `restApiConnections('${code}')/Microsoft.NAV.testConnection`);
      expect(tested.status).toBe(200);
      expect(((await tested.json()) as { url: string }).url).toContain(api.origin);
      expect(capture.seen).toHaveLength(0);
    },
  );

  it('cannot create a connection, nor test an unsaved one against a host of theirs', async () => {
    expect((await call(standard, 'POST', 'restApiConnections', { code: 'mine', baseUrl: capture.origin })).status).toBe(403);
    expect((await call(standard, 'POST', 'restApiConnections/Microsoft.NAV.testConnection', { baseUrl: capture.origin })).status).toBe(403);
    expect(capture.seen).toHaveLength(0);
  });

  it('cannot point an endpoint (or a preview) of a saved connection at another origin', async () => {
    const preview = await call(standard, 'POST', 'restApiEndpoints/Microsoft.NAV.previewFirstPage', {
      connectionCode: 'c-bearer',
      path: `${capture.origin}/steal`,
    });
    expect(preview.status).toBe(400);
    expect(((await preview.json()) as { error: { message: string } }).error.message).toContain('an endpoint calls only its connection');
    expect(capture.seen).toHaveLength(0);
  });

  it('in the console: the connection form is read-only and its POST is refused (403)', async () => {
    const client = await signInHttp(base, 'sec-standard', PASSWORD);
    const card = await client.get('/rest/connections/c-bearer');
    expect(card.status).toBe(200);
    expect(card.text).not.toContain('Save connection');
    const posted = await client.post('/rest/connections/c-bearer', { _csrf: client.csrf, baseUrl: capture.origin, authType: 'bearer' });
    expect(posted.status).toBe(403);
    expect((await client.post('/rest/connections/c-bearer/test', { _csrf: client.csrf })).status).toBe(200);
    expect(capture.seen).toHaveLength(0);
  });
});

describe('stored secrets are bound to where they go, for VENDOR IF ALL too', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['c-basic', { baseUrl: 'CAPTURE/v1' }, 'password'],
    ['c-bearer', { baseUrl: 'CAPTURE' }, 'token'],
    ['c-key', { baseUrl: 'CAPTURE' }, 'apiKey'],
    ['c-key', { apiKeyIn: 'query' }, 'apiKey'],
    ['c-key', { apiKeyName: 'X-Echo-Back' }, 'apiKey'],
    ['c-oauth', { baseUrl: 'CAPTURE' }, 'clientSecret'],
    ['c-oauth', { tokenUrl: 'CAPTURE/token' }, 'clientSecret'],
  ])('%s with %o and no secret: 400 naming the secret, nothing changed, nothing sent anywhere new', async (code, raw, secret) => {
    const change = JSON.parse(JSON.stringify(raw).replace(/CAPTURE/g, capture.origin)) as Record<string, unknown>;
    const before = await (await call(all, 'GET', `restApiConnections('${code}')`)).json();
    const res = await call(all, 'PATCH', `restApiConnections('${code}')`, change);
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('invalidRequest');
    expect(error.message).toMatch(
      new RegExp(`^${secret}: must be sent again: stored secrets are only sent where they were saved for, and the `),
    );
    expect(await (await call(all, 'GET', `restApiConnections('${code}')`)).json()).toEqual(before);
    await call(all, 'POST', `restApiConnections('${code}')/Microsoft.NAV.testConnection`);
    expect(capture.seen).toHaveLength(0);
  });

  it('in the console: Save with a new base URL and the secret left blank is refused, saying why', async () => {
    const client = await signInHttp(base, 'sec-all', PASSWORD);
    const posted = await client.post('/rest/connections/c-bearer', {
      _csrf: client.csrf,
      baseUrl: capture.origin,
      authType: 'bearer',
      token: '',
    });
    expect(posted.status).toBe(200);
    expect(posted.text).toContain('Not saved: Token: must be sent again');
    expect(errorUnder(posted.text, 'token')).toMatch(/^Token: must be sent again: stored secrets are only sent where they were saved for/);
    expect(focused(posted.text)).toEqual(['token']);
    expect((await client.post('/rest/connections/c-bearer/test', { _csrf: client.csrf })).status).toBe(200);
    expect(capture.seen).toHaveLength(0);
  });

  it('in a declarative file (ifw apply): a new base URL without the secret is refused, and nothing is applied', async () => {
    const doc = { restApiConnections: [{ code: 'c-bearer', baseUrl: capture.origin, authType: 'bearer' }] };
    await expect(applyConfig(t.service.db, doc, t.service.clock, { secrets: t.service.secrets })).rejects.toThrow(
      /restApiConnections\[0\]\.token: must be sent again: stored secrets are only sent where they were saved for, and the base URL's origin changed/,
    );
    expect(((await (await call(all, 'GET', "restApiConnections('c-bearer')")).json()) as { baseUrl: string }).baseUrl).toBe(
      `${api.origin}/v1`,
    );
  });

  it('with the secrets sent again the move is made, and the new host receives only what was sent with it', async () => {
    const moved = await call(all, 'PATCH', "restApiConnections('c-basic')", {
      baseUrl: capture.origin,
      password: 'a-new-password-for-capture',
    });
    expect(moved.status).toBe(200);
    expect(await (await call(all, 'POST', "restApiConnections('c-basic')/Microsoft.NAV.testConnection")).json()).toMatchObject({
      ok: true,
    });
    expect(capture.seen).toHaveLength(1);
    expect(capture.seen[0]!.headers.authorization).toBe(`Basic ${Buffer.from('svc:a-new-password-for-capture').toString('base64')}`);
    expectNoSecretCaptured();
  });

  it('a change that keeps the destination keeps the stored secrets (a new timeout, headers, a path under the same origin)', async () => {
    const kept = await call(all, 'PATCH', "restApiConnections('c-bearer')", { baseUrl: `${api.origin}/v2`, timeoutMs: 5000 });
    expect(kept.status).toBe(200);
    api.seen.length = 0;
    await call(all, 'POST', "restApiConnections('c-bearer')/Microsoft.NAV.testConnection");
    expect(api.seen.at(-1)!.headers.authorization).toBe(`Bearer ${SECRETS.token}`);
  });
});

afterAll(() => {
  expectNoSecretCaptured();
});
