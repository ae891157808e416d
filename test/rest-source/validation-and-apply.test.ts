import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { applyConfig, applyConfigFile } from '../../src/declarative-config/apply.js';
import { AppError } from '../../src/core/errors.js';
import { getEntry } from '../../src/job-queue/entries.js';
import { createSecretBox, SecretDecryptionError, SECRET_KEY_FILE, type SecretBox } from '../../src/rest-source/secrets.js';
import { getEndpoint, loadConnection, loadEndpoint } from '../../src/rest-source/store.js';
import { validateConnection } from '../../src/rest-source/connection-rules.js';
import { validateEndpoint } from '../../src/rest-source/endpoint-rules.js';
import type { ConnectionInput, EndpointInput } from '../../src/rest-source/schemas.js';
import { endpointViewOf, type ConnectionSettings } from '../../src/rest-source/settings.js';
import { openTestDatabase, type TestDatabase } from '../helpers/db.js';
import { secretBoxFor } from '../helpers/secret-boxes.js';

const EXAMPLE = path.resolve(import.meta.dirname, '../../examples/customers.yaml');
const clock = manualClock('2025-01-01T00:00:00Z');

function failure(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected the operation to fail');
}

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-secrets-'));

// ---- secrets -------------------------------------------------------------------------------

describe('secret box', () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = tempDir();
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('seals to a versioned text that differs each time and opens back to the plain text', () => {
    const box = createSecretBox({ secretKey: 'correct horse battery staple', dataDir: dir() });
    const a = box.seal('s3cret');
    const b = box.seal('s3cret');
    expect(a).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('s3cret');
    expect(box.open(a)).toBe('s3cret');
    expect(box.open(b)).toBe('s3cret');
  });

  it('derives the same key from the same IFW_SECRET_KEY, and creates no key file', () => {
    const d = dir();
    const sealed = createSecretBox({ secretKey: 'k1', dataDir: d }).seal('x');
    expect(createSecretBox({ secretKey: 'k1', dataDir: d }).open(sealed)).toBe('x');
    expect(fs.existsSync(path.join(d, SECRET_KEY_FILE))).toBe(false);
  });

  it('refuses to open a value sealed under another key, with a clear message', () => {
    const d = dir();
    const sealed = createSecretBox({ secretKey: 'old key', dataDir: d }).seal('x');
    const err = failure(() => createSecretBox({ secretKey: 'new key', dataDir: d }).open(sealed));
    expect(err).toBeInstanceOf(SecretDecryptionError);
    expect(err.message).toContain('stored secrets cannot be decrypted: IFW_SECRET_KEY differs from the key they were saved with');
    // A value sealed with the generated key file cannot be opened with IFW_SECRET_KEY either.
    const fromFile = createSecretBox({ secretKey: undefined, dataDir: d }).seal('y');
    expect(() => createSecretBox({ secretKey: 'old key', dataDir: d }).open(fromFile)).toThrow(/IFW_SECRET_KEY differs/);
  });

  it('refuses a damaged stored value', () => {
    const box = createSecretBox({ secretKey: 'k', dataDir: dir() });
    expect(() => box.open('plain text')).toThrow(/not in a known format/);
    const [v, iv, tag, ct] = box.seal('abc').split(':');
    expect(() => box.open([v, iv, tag, `${ct}AA`].join(':'))).toThrow(SecretDecryptionError);
  });

  it('without IFW_SECRET_KEY generates a key file with mode 0600 once and reuses it', () => {
    const d = path.join(dir(), 'nested', 'data');
    const first = createSecretBox({ secretKey: undefined, dataDir: d });
    const file = path.join(d, SECRET_KEY_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const content = fs.readFileSync(file, 'utf8');
    expect(Buffer.from(content.trim(), 'base64')).toHaveLength(32);
    const sealed = first.seal('kept across restarts');
    const second = createSecretBox({ secretKey: undefined, dataDir: d });
    expect(second.open(sealed)).toBe('kept across restarts');
    expect(fs.readFileSync(file, 'utf8')).toBe(content);
  });

  it('refuses a key file that does not hold a key', () => {
    const d = dir();
    fs.writeFileSync(path.join(d, SECRET_KEY_FILE), 'short\n');
    expect(() => createSecretBox({ secretKey: undefined, dataDir: d })).toThrow(/does not hold a 32-byte base64 key/);
  });
});

// ---- connection rules ----------------------------------------------------------------------

const basic: ConnectionInput = { code: 'crm', baseUrl: 'https://api.example.com/v1', authType: 'basic', username: 'svc', password: 'pw' };

describe('connection validation', () => {
  it('fills the defaults and keeps only what the auth type uses', () => {
    const { settings, secrets } = validateConnection(basic);
    expect(settings).toEqual({
      code: 'crm',
      baseUrl: 'https://api.example.com/v1',
      authType: 'basic',
      username: 'svc',
      apiKeyName: null,
      apiKeyIn: null,
      tokenUrl: null,
      clientId: null,
      scope: null,
      headers: {},
      query: {},
      timeoutMs: 30_000,
      maxRetries: 3,
      initialDelayMs: 500,
    });
    expect(secrets).toEqual({ password: 'pw' });
    expect(validateConnection({ code: 'open', baseUrl: 'http://localhost:8080' }).settings.authType).toBe('none');
  });

  it('keeps a stored secret that is not sent, and refuses to clear a required one', () => {
    const { password: _p, ...withoutPassword } = basic;
    expect(validateConnection(withoutPassword, { password: 'stored' }).secrets).toEqual({ password: 'stored' });
    expect(failure(() => validateConnection({ ...basic, password: null }, { password: 'stored' })).message).toBe(
      'password: cannot be cleared: basic authentication needs a password (it may be empty: "")',
    );
    expect(validateConnection({ ...basic, password: '' }).secrets).toEqual({ password: '' });
  });

  const cases: [string, ConnectionInput, string][] = [
    ['a base URL with another scheme', { ...basic, baseUrl: 'ftp://files.example.com/' }, 'baseUrl: must be an http or https URL, not ftp'],
    [
      'a base URL with credentials',
      { ...basic, baseUrl: 'https://user:pw@api.example.com/' },
      'baseUrl: must not carry credentials (user:password@); set them in the authentication settings',
    ],
    ['a relative base URL', { ...basic, baseUrl: '/v1/customers' }, 'baseUrl: "/v1/customers" is not an absolute URL'],
    [
      'a base URL with a query',
      { ...basic, baseUrl: 'https://api.example.com/?key=1' },
      'baseUrl: must not carry a query; put query parameters in "queryParameters"',
    ],
    ['a code with a space', { ...basic, code: 'my crm' }, 'code: "my crm" is not a valid code'],
    ['a code of 51 characters', { ...basic, code: 'a'.repeat(51) }, 'code: "aaaa'],
    ['a timeout below 100 ms', { ...basic, timeoutMs: 99 }, 'timeoutMs: must be a whole number from 100 to 300000, got 99'],
    ['a timeout above 5 minutes', { ...basic, timeoutMs: 300_001 }, 'timeoutMs: must be a whole number from 100 to 300000, got 300001'],
    ['more than 10 retries', { ...basic, maxRetries: 11 }, 'maxRetries: must be a whole number from 0 to 10, got 11'],
    ['a negative delay', { ...basic, initialDelayMs: -1 }, 'initialDelayMs: must be a whole number from 0 to 60000, got -1'],
    [
      'an unknown auth type',
      { ...basic, authType: 'digest' },
      'authType: "digest" is not allowed; use one of none, basic, bearer, apiKey, oauth2ClientCredentials',
    ],
    ['basic without a username', { ...basic, username: undefined }, 'username: basic authentication needs a username'],
    ['basic without a password', { ...basic, password: undefined }, 'password: basic authentication needs a password'],
    ['a username with a colon', { ...basic, username: 'a:b' }, 'username: must not contain ":"'],
    [
      'bearer without a token',
      { code: 'x', baseUrl: 'https://a.example', authType: 'bearer' },
      'token: bearer authentication needs a token',
    ],
    [
      'bearer with an empty token',
      { code: 'x', baseUrl: 'https://a.example', authType: 'bearer', token: '' },
      'token: bearer authentication needs a token',
    ],
    [
      'a setting of another auth type',
      { ...basic, authType: 'bearer', token: 't' },
      'username: only authType basic uses username; authType is bearer',
    ],
    [
      'a secret of another auth type',
      { code: 'x', baseUrl: 'https://a.example', authType: 'bearer', token: 't', clientSecret: 's' },
      'clientSecret: only authType oauth2ClientCredentials uses clientSecret; authType is bearer',
    ],
    [
      'apiKey without a name',
      { code: 'x', baseUrl: 'https://a.example', authType: 'apiKey', apiKeyIn: 'header', apiKey: 'k' },
      'apiKeyName: API key authentication needs apiKeyName',
    ],
    [
      'apiKey without where it goes',
      { code: 'x', baseUrl: 'https://a.example', authType: 'apiKey', apiKeyName: 'X-Key', apiKey: 'k' },
      'apiKeyIn: API key authentication needs apiKeyIn: header or query',
    ],
    [
      'apiKey in a cookie',
      { code: 'x', baseUrl: 'https://a.example', authType: 'apiKey', apiKeyName: 'k', apiKeyIn: 'cookie', apiKey: 'k' },
      'apiKeyIn: "cookie" is not allowed; use one of header, query',
    ],
    [
      'apiKey without the key',
      { code: 'x', baseUrl: 'https://a.example', authType: 'apiKey', apiKeyName: 'X-Key', apiKeyIn: 'header' },
      'apiKey: API key authentication needs apiKey (the key itself)',
    ],
    [
      'apiKey header also configured',
      {
        code: 'x',
        baseUrl: 'https://a.example',
        authType: 'apiKey',
        apiKeyName: 'X-Key',
        apiKeyIn: 'header',
        apiKey: 'k',
        headers: { 'x-key': 'v' },
      },
      'headers.x-key: the API key is sent in header X-Key; remove it from headers',
    ],
    [
      'apiKey query parameter also configured',
      {
        code: 'x',
        baseUrl: 'https://a.example',
        authType: 'apiKey',
        apiKeyName: 'key',
        apiKeyIn: 'query',
        apiKey: 'k',
        query: { key: 'v' },
      },
      'query.key: the API key is sent in query parameter key; remove it from query',
    ],
    [
      'oauth2 without a token URL',
      { code: 'x', baseUrl: 'https://a.example', authType: 'oauth2ClientCredentials', clientId: 'c', clientSecret: 's' },
      'tokenUrl: OAuth2 client credentials need a tokenUrl',
    ],
    [
      'oauth2 with a token URL of another scheme',
      {
        code: 'x',
        baseUrl: 'https://a.example',
        authType: 'oauth2ClientCredentials',
        tokenUrl: 'file:///etc/passwd',
        clientId: 'c',
        clientSecret: 's',
      },
      'tokenUrl: must be an http or https URL, not file',
    ],
    [
      'oauth2 without a client id',
      {
        code: 'x',
        baseUrl: 'https://a.example',
        authType: 'oauth2ClientCredentials',
        tokenUrl: 'https://login.example/token',
        clientSecret: 's',
      },
      'clientId: OAuth2 client credentials need a clientId',
    ],
    [
      'oauth2 without a client secret',
      {
        code: 'x',
        baseUrl: 'https://a.example',
        authType: 'oauth2ClientCredentials',
        tokenUrl: 'https://login.example/token',
        clientId: 'c',
      },
      'clientSecret: OAuth2 client credentials need a clientSecret',
    ],
    ['a header name with a space', { ...basic, headers: { 'X Tenant': '1' } }, 'headers.X Tenant: "X Tenant" is not a valid header name'],
    [
      'a header the HTTP client sets',
      { ...basic, headers: { 'Content-Length': '10' } },
      'headers.Content-Length: Content-Length is set by the HTTP client and cannot be configured',
    ],
    [
      'a header value with a line break',
      { ...basic, headers: { 'X-A': 'a\r\nX-B: b' } },
      'headers.X-A: the value must not contain line breaks',
    ],
    ['a header given twice', { ...basic, headers: { 'X-A': '1', 'x-a': '2' } }, 'headers.x-a: "x-a" is given twice (also "X-A")'],
    [
      'an Authorization header beside basic auth',
      { ...basic, headers: { Authorization: 'Bearer x' } },
      'headers.Authorization: authType basic sets the Authorization header; remove it from headers',
    ],
  ];
  it.each(cases)('refuses %s', (_name, input, message) => {
    const err = failure(() => validateConnection(input));
    expect(err).toMatchObject({ status: 400, code: 'invalidRequest' });
    expect(err.message).toContain(message);
  });
});

// ---- endpoint rules ------------------------------------------------------------------------

const connection: ConnectionSettings = validateConnection(basic).settings;
const context = { connection, integrationExists: true };
const pageNumber: EndpointInput = {
  code: 'customers',
  connectionCode: 'crm',
  path: 'customers',
  integrationSortingOrder: 10,
  paginationType: 'pageNumber',
  pageParameterName: 'page',
  pageSize: 100,
  responseDataPath: 'data',
};
const offsetLimit: EndpointInput = {
  ...pageNumber,
  paginationType: 'offsetLimit',
  pageParameterName: undefined,
  offsetParameterName: 'offset',
  limitParameterName: 'limit',
};
const nextLink: EndpointInput = {
  code: 'odata',
  connectionCode: 'crm',
  path: 'Customers',
  integrationSortingOrder: 10,
  paginationType: 'nextLink',
  nextLinkJsonPath: '@odata.nextLink',
  responseDataPath: 'value',
};

describe('endpoint validation', () => {
  it('fills the defaults and maps to the pagination engine’s settings', () => {
    const settings = endpointViewOf(
      validateEndpoint({ code: 'one', connectionCode: 'crm', path: '', integrationSortingOrder: 10 }, context),
    );
    expect(settings).toMatchObject({
      method: 'GET',
      paginationType: 'none',
      maxPages: 100,
      pageSize: null,
      responseDataPath: null,
      scheduleSeconds: null,
      allowCrossOrigin: false,
      body: null,
    });
    expect(endpointViewOf(validateEndpoint(offsetLimit, context))).toMatchObject({
      offsetParameterName: 'offset',
      limitParameterName: 'limit',
      pageParameterName: null,
      pageSize: 100,
    });
  });

  it('accepts "$" as the Response Data Path of a root array and gives the engine ""', async () => {
    const t = await openTestDatabase();
    try {
      await applyConfigFile(t.db, EXAMPLE, clock);
      const box = secretBoxFor('k');
      await applyConfig(t.db, { restApiConnections: [basic], restApiEndpoints: [{ ...pageNumber, responseDataPath: '$' }] }, clock, {
        secrets: box,
      });
      const endpoint = await loadEndpoint(t.db, 'customers');
      expect(endpoint.pagination).toEqual({
        type: 'pageNumber',
        pageParam: 'page',
        parametersIn: 'query',
        hasMorePath: null,
        totalCountPath: null,
        stopOnEmptyPage: false,
        pageSize: 100,
        maxPages: 100,
        responseDataPath: '',
      });
    } finally {
      await t.cleanup();
    }
  });

  it('ifw apply keeps the settings of the other pagination types the file leaves out, and needs those of the type in use', async () => {
    const t = await openTestDatabase();
    try {
      await applyConfigFile(t.db, EXAMPLE, clock);
      const box = secretBoxFor('k');
      const apply = (endpoint: EndpointInput) =>
        applyConfig(t.db, { restApiConnections: [basic], restApiEndpoints: [endpoint] }, clock, { secrets: box });
      await apply(pageNumber);
      const none = { ...pageNumber, paginationType: 'none', pageParameterName: undefined };
      expect((await apply(none)).restApiEndpoints).toEqual([
        { code: 'customers', result: 'updated', changes: ['settings changed: paginationType'] },
      ]);
      expect((await apply(none)).restApiEndpoints[0]?.result).toBe('unchanged');
      expect(endpointViewOf((await getEndpoint(t.db.kysely, 'customers'))!)).toMatchObject({
        paginationType: 'none',
        pageParameterName: 'page',
      });
      await expect(apply({ ...none, pageParameterName: 'p' })).rejects.toThrow(
        'restApiEndpoints[0].pageParameterName: only Page Number pagination uses pageParameterName; paginationType is none (its kept value is "page"',
      );
      await expect(apply({ ...pageNumber, pageParameterName: undefined })).rejects.toThrow(
        'restApiEndpoints[0].pageParameterName: Page Number pagination needs a Page Parameter Name',
      );
    } finally {
      await t.cleanup();
    }
  });

  const cases: [string, EndpointInput, string][] = [
    [
      'Page Number without a Page Size',
      { ...pageNumber, pageSize: undefined },
      'pageSize: Page Number pagination needs a Page Size: the number of records the API really returns per page (1 to 100000)',
    ],
    [
      'Page Number without a Page Parameter Name',
      { ...pageNumber, pageParameterName: undefined },
      'pageParameterName: Page Number pagination needs a Page Parameter Name',
    ],
    [
      'Page Number with a blank Page Parameter Name',
      { ...pageNumber, pageParameterName: ' ' },
      'pageParameterName: Page Number pagination needs a Page Parameter Name',
    ],
    [
      'Page Number without a Response Data Path',
      { ...pageNumber, responseDataPath: null },
      'responseDataPath: Page Number pagination needs a Response Data Path to count records: the path of the record array (e.g. "data" or "value"), ' +
        `or "" (blank, also "$") when the records are the response root or where the integration's records path says`,
    ],
    ['Offset/Limit without a Page Size', { ...offsetLimit, pageSize: null }, 'pageSize: Offset/Limit pagination needs a Page Size'],
    [
      'Offset/Limit without an Offset Parameter Name',
      { ...offsetLimit, offsetParameterName: undefined },
      'offsetParameterName: Offset/Limit pagination needs an Offset Parameter Name',
    ],
    [
      'Offset/Limit without a Limit Parameter Name',
      { ...offsetLimit, limitParameterName: null },
      'limitParameterName: Offset/Limit pagination needs a Limit Parameter Name',
    ],
    [
      'Offset/Limit with one name for both',
      { ...offsetLimit, limitParameterName: 'offset' },
      'limitParameterName: must differ from offsetParameterName (both are "offset")',
    ],
    [
      'Offset/Limit without a Response Data Path',
      { ...offsetLimit, responseDataPath: undefined },
      'responseDataPath: Offset/Limit pagination needs a Response Data Path',
    ],
    [
      'Next Link without a Next Link JSON Path',
      { ...nextLink, nextLinkJsonPath: undefined },
      'nextLinkJsonPath: Next Link pagination needs a Next Link JSON Path',
    ],
    ['a Next Link JSON Path that is not JSONPath', { ...nextLink, nextLinkJsonPath: '$..[' }, 'nextLinkJsonPath: invalid JSONPath "$..["'],
    ['a Response Data Path with a wildcard', { ...pageNumber, responseDataPath: 'data[*]' }, 'responseDataPath: invalid path "data[*]"'],
    [
      'an unknown pagination type',
      { ...pageNumber, paginationType: 'graphqlCursor' },
      'paginationType: "graphqlCursor" is not allowed; use one of none, nextLink, pageNumber, offsetLimit, linkHeader, cursor',
    ],
    [
      'a setting of another pagination type',
      { ...pageNumber, nextLinkJsonPath: 'next' },
      'nextLinkJsonPath: only Next Link pagination uses nextLinkJsonPath; paginationType is pageNumber',
    ],
    [
      'cross-origin links without Next Link',
      { ...pageNumber, allowCrossOrigin: true },
      'allowCrossOrigin: only Next Link and Link Header pagination use allowCrossOrigin',
    ],
    ['a Page Size of 0', { ...pageNumber, pageSize: 0 }, 'pageSize: must be a whole number from 1 to 100000, got 0'],
    ['a Page Size above 100000', { ...pageNumber, pageSize: 100_001 }, 'pageSize: must be a whole number from 1 to 100000, got 100001'],
    ['Max Pages of 0', { ...pageNumber, maxPages: 0 }, 'maxPages: must be a whole number from 1 to 100000, got 0'],
    ['a schedule under a minute', { ...pageNumber, scheduleSeconds: 59 }, 'scheduleSeconds: must be from 60 to 604800 seconds'],
    ['a schedule over a week', { ...pageNumber, scheduleSeconds: 604_801 }, 'scheduleSeconds: must be from 60 to 604800 seconds'],
    ['an unknown method', { ...pageNumber, method: 'DELETE' }, 'method: "DELETE" is not allowed; use one of GET, POST'],
    ['a body on GET', { ...pageNumber, body: '{}' }, 'body: only POST requests carry a body; method is GET'],
    ['a body that is not JSON', { ...pageNumber, method: 'POST', body: '{filter:' }, 'body: is not a JSON text'],
    [
      'a path on another origin',
      { ...pageNumber, path: 'https://evil.example/customers' },
      'path: is on https://evil.example, not on the origin of connection "crm" (https://api.example.com)',
    ],
    ['a path of another scheme', { ...pageNumber, path: 'ftp://api.example.com/x' }, 'path: must be a path, or an http or https URL'],
    ['a protocol-relative path', { ...pageNumber, path: '//evil.example/x' }, 'path: must not start with "//"'],
    ['a path with credentials', { ...pageNumber, path: 'https://u:p@api.example.com/x' }, 'path: must not carry credentials'],
    ['a path with a space', { ...pageNumber, path: 'my customers' }, 'path: must not contain spaces'],
    [
      'a page parameter also in the query',
      { ...pageNumber, query: { page: '1' } },
      'pageParameterName: "page" is also set in the endpoint query; the paginator sets it on every request, so remove it there',
    ],
    [
      'an Authorization header beside the connection’s auth',
      { ...pageNumber, headers: { authorization: 'x' } },
      'headers.authorization: connection "crm" (authType basic) sets the Authorization header',
    ],
  ];
  it.each(cases)('refuses %s', (_name, input, message) => {
    const err = failure(() => validateEndpoint(input, context));
    expect(err).toMatchObject({ status: 400, code: 'invalidRequest' });
    expect(err.message).toContain(message);
  });

  it('refuses an unknown connection or integration', () => {
    expect(failure(() => validateEndpoint(pageNumber, { connection: undefined, integrationExists: true })).message).toBe(
      'connectionCode: no REST API connection "crm"; create it first',
    );
    expect(failure(() => validateEndpoint(pageNumber, { connection, integrationExists: false })).message).toBe(
      'integrationSortingOrder: no integration with sortingOrder 10; create it first',
    );
  });

  it('accepts an absolute path on the connection’s origin and a POST with a JSON body', () => {
    expect(validateEndpoint({ ...pageNumber, path: 'https://api.example.com/v2/customers' }, context).path).toBe(
      'https://api.example.com/v2/customers',
    );
    expect(validateEndpoint({ ...pageNumber, method: 'POST', body: '{"active":true}' }, context).body).toBe('{"active":true}');
  });
});

// ---- ifw apply -----------------------------------------------------------------------------

describe('ifw apply with REST API connections and endpoints', () => {
  let t: TestDatabase;
  let box: SecretBox;
  beforeEach(async () => {
    t = await openTestDatabase();
    box = secretBoxFor('apply-key');
    await applyConfigFile(t.db, EXAMPLE, clock);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  const doc = () => ({
    restApiConnections: [
      {
        code: 'crm',
        baseUrl: 'https://api.example.com/v1',
        authType: 'bearer',
        token: '${ENV:CRM_TOKEN}',
        headers: { 'X-Tenant': 'acme' },
      },
    ],
    restApiEndpoints: [{ ...pageNumber, scheduleSeconds: 3600 }],
  });

  it('creates them with secrets from the environment, then finds them unchanged', async () => {
    const env = { CRM_TOKEN: 'token-from-env' };
    const first = await applyConfig(t.db, doc(), clock, { secrets: box, env });
    expect(first.restApiConnections).toEqual([{ code: 'crm', result: 'created', changes: [] }]);
    expect(first.restApiEndpoints).toEqual([{ code: 'customers', result: 'created', changes: [] }]);
    expect((await loadConnection(t.db, 'crm', box)).auth).toEqual({ type: 'bearer', token: 'token-from-env' });
    const stored = t.db.sqlite.prepare('select secrets from ifw_rest_connection where code = ?').get('crm') as { secrets: string };
    expect(stored.secrets).not.toContain('token-from-env');
    expect(await getEntry(t.db, 'endpoint:customers')).toMatchObject({ kind: 'endpointImport', status: 'Ready', recurrenceSeconds: 3600 });

    const again = await applyConfig(t.db, doc(), clock, { secrets: box, env });
    expect(again.restApiConnections[0]?.result).toBe('unchanged');
    expect(again.restApiEndpoints[0]?.result).toBe('unchanged');
    expect(again.summary.created + again.summary.updated).toBe(0);
    expect((t.db.sqlite.prepare('select secrets from ifw_rest_connection where code = ?').get('crm') as { secrets: string }).secrets).toBe(
      stored.secrets,
    );
  });

  it('reports a changed secret by name only, and keeps a secret the document leaves out', async () => {
    await applyConfig(t.db, doc(), clock, { secrets: box, env: { CRM_TOKEN: 'one' } });
    const changed = await applyConfig(t.db, doc(), clock, { secrets: box, env: { CRM_TOKEN: 'two' } });
    expect(changed.restApiConnections).toEqual([{ code: 'crm', result: 'updated', changes: ['secrets changed: token'] }]);
    expect(JSON.stringify(changed)).not.toContain('two');

    const { token: _token, ...withoutToken } = doc().restApiConnections[0]!;
    const kept = await applyConfig(t.db, { restApiConnections: [{ ...withoutToken, timeoutMs: 5000 }] }, clock, { secrets: box, env: {} });
    expect(kept.restApiConnections).toEqual([{ code: 'crm', result: 'updated', changes: ['settings changed: timeoutMs'] }]);
    expect((await loadConnection(t.db, 'crm', box)).auth).toEqual({ type: 'bearer', token: 'two' });
  });

  it('refuses an unset environment variable and changes nothing', async () => {
    const err = await rejection(applyConfig(t.db, doc(), clock, { secrets: box, env: {} }));
    expect(err).toMatchObject({ status: 400, code: 'invalidRequest' });
    expect(err.message).toBe('restApiConnections[0].token: environment variable CRM_TOKEN is not set');
    expect(t.db.sqlite.prepare('select count(*) as n from ifw_rest_connection').get()).toEqual({ n: 0 });
  });

  it('names the document path of a bad endpoint and takes the connection back', async () => {
    const bad = doc();
    bad.restApiEndpoints[0] = { ...bad.restApiEndpoints[0]!, pageSize: undefined };
    const err = await rejection(applyConfig(t.db, bad, clock, { secrets: box, env: { CRM_TOKEN: 't' } }));
    expect(err.message).toMatch(/^restApiEndpoints\[0\]\.pageSize: Page Number pagination needs a Page Size/);
    expect(t.db.sqlite.prepare('select count(*) as n from ifw_rest_connection').get()).toEqual({ n: 0 });
  });

  it('refuses codes declared twice and unknown properties', async () => {
    const twice = { restApiConnections: [basic, basic] };
    expect((await rejection(applyConfig(t.db, twice, clock, { secrets: box }))).message).toBe(
      'restApiConnections[1].code: "crm" is declared twice (also restApiConnections[0])',
    );
    const unknown = { restApiEndpoints: [{ ...pageNumber, pageParam: 'page' }] };
    expect((await rejection(applyConfig(t.db, unknown, clock, { secrets: box }))).message).toBe(
      'restApiEndpoints[0]: unknown property "pageParam"',
    );
  });

  it('removes the schedule entry when the declaration drops the schedule', async () => {
    await applyConfig(t.db, doc(), clock, { secrets: box, env: { CRM_TOKEN: 't' } });
    const d = doc();
    const report = await applyConfig(t.db, { restApiEndpoints: [{ ...d.restApiEndpoints[0]!, scheduleSeconds: null }] }, clock, {
      secrets: box,
    });
    expect(report.restApiEndpoints[0]).toEqual({ code: 'customers', result: 'updated', changes: ['settings changed: scheduleSeconds'] });
    expect(await getEntry(t.db, 'endpoint:customers')).toBeUndefined();
  });
});
