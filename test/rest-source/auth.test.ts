import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AuthError, OAuthTokenCache, readTokenResponse } from '../../src/rest-source/auth.js';
import { FetchError, fetchPages } from '../../src/rest-source/fetch-pages.js';
import type { ConnectionAuth } from '../../src/rest-source/model.js';
import { collector, connectionTo, endpointAt, fakeTime, paging, startPagingServer, type PagingServer } from '../helpers/paging-server.js';

let server: PagingServer;
beforeAll(async () => {
  server = await startPagingServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset({ records: 30, pageSize: 10 }));

const endpoint = endpointAt('/next-absolute', paging.nextLink('next'));
const dataRequests = (): typeof server.requests => server.requests.filter((r) => r.url !== '/oauth/token');
const tokenRequests = (): typeof server.requests => server.requests.filter((r) => r.url === '/oauth/token');

async function rejection(promise: Promise<unknown>): Promise<FetchError> {
  const err = await promise.then(
    () => new Error('expected the fetch to fail'),
    (e: unknown) => e,
  );
  if (!(err instanceof FetchError)) throw err;
  return err;
}

describe('static credentials', () => {
  it.each<[string, ConnectionAuth, (r: (typeof server.requests)[number]) => unknown, unknown]>([
    [
      'basic',
      { type: 'basic', username: 'ann', password: 'pä ss' },
      (r) => r.headers.authorization,
      `Basic ${Buffer.from('ann:pä ss').toString('base64')}`,
    ],
    ['bearer', { type: 'bearer', token: 'tok-123' }, (r) => r.headers.authorization, 'Bearer tok-123'],
    ['API key in a header', { type: 'apiKey', in: 'header', name: 'X-Api-Key', value: 'k-123' }, (r) => r.headers['x-api-key'], 'k-123'],
    [
      'API key in the query',
      { type: 'apiKey', in: 'query', name: 'apikey', value: 'k 123' },
      (r) => new URL(r.url, 'http://x').searchParams.get('apikey'),
      'k 123',
    ],
    ['none', { type: 'none' }, (r) => r.headers.authorization, undefined],
  ])('%s: sent with every page request', async (_, auth, read, expected) => {
    await fetchPages(connectionTo(server.origin, { auth }), endpoint, () => {}, fakeTime().options);
    expect(dataRequests().map(read)).toEqual([expected, expected, expected]);
  });

  it('redacts a query API key in the page URLs it hands over and in errors', async () => {
    const auth: ConnectionAuth = { type: 'apiKey', in: 'query', name: 'apikey', value: 'k-secret-1' };
    const seen = collector();
    await fetchPages(connectionTo(server.origin, { auth }), endpoint, seen.onPage, fakeTime().options);
    expect(seen.pages[1]!.url).toBe(`${server.origin}/next-absolute?cursor=2&apikey=[redacted]`);
    const err = await rejection(
      fetchPages(connectionTo(server.origin, { auth }), endpointAt('/missing', paging.none()), () => {}, fakeTime().options),
    );
    expect(err.url).toBe(`${server.origin}/missing?apikey=[redacted]`);
    expect(err.message).not.toContain('k-secret-1');
  });
});

describe('OAuth2 client credentials', () => {
  const oauth = (over: Partial<Extract<ConnectionAuth, { type: 'oauth2ClientCredentials' }>> = {}): ConnectionAuth => ({
    type: 'oauth2ClientCredentials',
    tokenUrl: `${server.origin}/oauth/token`,
    clientId: 'client id',
    clientSecret: 's3cret&more',
    scope: 'api://x/.default',
    ...over,
  });

  it('posts client_credentials with HTTP Basic client authentication and uses the token on every page', async () => {
    await fetchPages(connectionTo(server.origin, { auth: oauth() }), endpoint, () => {}, fakeTime().options);
    const [token] = tokenRequests();
    expect(tokenRequests()).toHaveLength(1);
    expect(token!.method).toBe('POST');
    expect(token!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(token!.headers.authorization).toBe(`Basic ${Buffer.from('client+id:s3cret%26more').toString('base64')}`);
    expect(Object.fromEntries(new URLSearchParams(token!.body))).toEqual({ grant_type: 'client_credentials', scope: 'api://x/.default' });
    expect(dataRequests().map((r) => r.headers.authorization)).toEqual(['Bearer token-1', 'Bearer token-1', 'Bearer token-1']);
  });

  it('leaves scope out when none is configured', async () => {
    await fetchPages(connectionTo(server.origin, { auth: oauth({ scope: null }) }), endpoint, () => {}, fakeTime().options);
    expect(tokenRequests()[0]!.body).toBe('grant_type=client_credentials');
  });

  it('reuses the cached token across runs until 60 s before expires_in ends', async () => {
    const time = fakeTime();
    const connection = connectionTo(server.origin, { auth: oauth() });
    await fetchPages(connection, endpoint, () => {}, time.options);
    time.advance(3_539_000);
    await fetchPages(connection, endpoint, () => {}, time.options);
    expect(tokenRequests()).toHaveLength(1);
    time.advance(2_000);
    await fetchPages(connection, endpoint, () => {}, time.options);
    expect(tokenRequests()).toHaveLength(2);
    expect(dataRequests().at(-1)!.headers.authorization).toBe('Bearer token-2');
  });

  it('does not reuse a token obtained with another client secret', async () => {
    const time = fakeTime();
    await fetchPages(connectionTo(server.origin, { auth: oauth() }), endpoint, () => {}, time.options);
    await fetchPages(connectionTo(server.origin, { auth: oauth({ clientSecret: 'rotated-secret' }) }), endpoint, () => {}, time.options);
    expect(tokenRequests()).toHaveLength(2);
  });

  it('shares one token request between concurrent runs of a connection', async () => {
    const time = fakeTime();
    const connection = connectionTo(server.origin, { auth: oauth() });
    await Promise.all([fetchPages(connection, endpoint, () => {}, time.options), fetchPages(connection, endpoint, () => {}, time.options)]);
    expect(tokenRequests()).toHaveLength(1);
  });

  it('refreshes the token once after a 401 from the API and retries the page', async () => {
    server.expectAuthorization = 'Bearer token-2';
    const seen = collector();
    await fetchPages(connectionTo(server.origin, { auth: oauth() }), endpoint, seen.onPage, fakeTime().options);
    expect(tokenRequests()).toHaveLength(2);
    expect(seen.pages).toHaveLength(3);
  });

  it('fails when the API still answers 401 with a fresh token', async () => {
    server.expectAuthorization = 'Bearer never';
    const err = await rejection(fetchPages(connectionTo(server.origin, { auth: oauth() }), endpoint, () => {}, fakeTime().options));
    expect(err.message).toContain('answered 401 Unauthorized: check the credentials');
    expect(tokenRequests()).toHaveLength(2);
    expect(dataRequests()).toHaveLength(2);
  });

  it('fails the page with what the token endpoint answered, without the secret', async () => {
    server.tokenResponse = () => ({ status: 400, body: { error: 'invalid_client', echoed: 's3cret&more' } });
    const err = await rejection(fetchPages(connectionTo(server.origin, { auth: oauth() }), endpoint, () => {}, fakeTime().options));
    expect(err.pageNo).toBe(1);
    expect(err.message).toBe(
      `page 1 (GET ${server.origin}/next-absolute): the token endpoint ${server.origin}/oauth/token: ` +
        'the service answered 400 Bad Request: {"error":"invalid_client","echoed":"[redacted]"}',
    );
    expect(dataRequests()).toHaveLength(0);
  });
});

describe('readTokenResponse', () => {
  const now = 1_000_000;
  it.each([
    [
      'a bearer token with expires_in',
      '{"access_token":"a","token_type":"Bearer","expires_in":3600}',
      { accessToken: 'a', refreshAt: now + 3_540_000 },
    ],
    [
      'token_type in lower case',
      '{"access_token":"a","token_type":"bearer","expires_in":3600}',
      { accessToken: 'a', refreshAt: now + 3_540_000 },
    ],
    ['expires_in as a string', '{"access_token":"a","expires_in":"600"}', { accessToken: 'a', refreshAt: now + 540_000 }],
    ['a short-lived token keeps half its lifetime', '{"access_token":"a","expires_in":60}', { accessToken: 'a', refreshAt: now + 30_000 }],
    ['no expires_in: reused until a 401', '{"access_token":"a"}', { accessToken: 'a', refreshAt: null }],
  ])('%s', (_, text, expected) => {
    expect(readTokenResponse(text, now)).toEqual(expected);
  });

  it.each([
    ['not JSON', '<html>', "the token endpoint's answer is not JSON: <html>"],
    ['no access_token', '{"token_type":"Bearer"}', "the token endpoint's answer has no access_token"],
    [
      'another token type',
      '{"access_token":"a","token_type":"mac"}',
      'the token endpoint issued a token of type "mac"; only Bearer tokens are supported',
    ],
  ])('refuses %s', (_, text, message) => {
    expect(() => readTokenResponse(text, now)).toThrow(new AuthError(message));
  });
});

describe('OAuthTokenCache', () => {
  it('forgets a token only if it is still the cached one', async () => {
    const cache = new OAuthTokenCache();
    let n = 0;
    const fetchToken = () => Promise.resolve({ accessToken: `t${++n}`, refreshAt: null });
    expect(await cache.token('k', 0, fetchToken)).toBe('t1');
    cache.invalidate('k', 't1');
    expect(await cache.token('k', 0, fetchToken)).toBe('t2');
    cache.invalidate('k', 't1');
    expect(await cache.token('k', 0, fetchToken)).toBe('t2');
  });

  it('does not cache a failed token request', async () => {
    const cache = new OAuthTokenCache();
    await expect(cache.token('k', 0, () => Promise.reject(new AuthError('down')))).rejects.toThrow('down');
    expect(await cache.token('k', 0, () => Promise.resolve({ accessToken: 'ok', refreshAt: null }))).toBe('ok');
  });
});
