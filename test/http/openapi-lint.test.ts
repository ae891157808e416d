/**
 * The OpenAPI document as third-party tools read it: Redocly's linter with its recommended rules finds
 * no error in it (warnings are printed), every operation has a unique operationId, a summary and the
 * security it needs, and the statuses the service's own checks answer are declared where they apply.
 */
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationIdOf } from '../../src/http/openapi.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

interface Operation {
  readonly operationId?: string;
  readonly summary?: string;
  readonly tags?: readonly string[];
  readonly security?: readonly Record<string, unknown>[];
  readonly responses: Record<string, unknown>;
  readonly requestBody?: unknown;
}
interface Document {
  readonly paths: Record<string, Record<string, Operation>>;
  readonly servers?: readonly unknown[];
  readonly tags?: readonly { readonly name: string }[];
  readonly components: { readonly securitySchemes?: Record<string, { type: string; scheme?: string }> };
}

let t: TestService;
let text: string;
let document: Document;

beforeAll(async () => {
  t = await startTestService();
  text = (await t.inject({ method: 'GET', url: '/docs/json' })).body;
  document = JSON.parse(text) as Document;
});
afterAll(async () => {
  await t?.cleanup();
});

const operations = (): [string, string, Operation][] =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]): [string, string, Operation] => [path, method, op]),
  );

describe('the OpenAPI document', () => {
  it("passes Redocly's recommended rules with no error", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: '/docs/json', config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} (${p.location[0]?.pointer ?? ''})`);
    for (const p of problems.filter((q) => q.severity !== 'error'))
      console.log(`openapi lint warning ${p.ruleId} at ${p.location[0]?.pointer ?? ''}`);
    expect(errors).toEqual([]);
  });

  it('declares HTTP Basic and bearer tokens, and each operation that needs credentials names both', () => {
    expect(document.components.securitySchemes).toMatchObject({
      basicAuth: { type: 'http', scheme: 'basic' },
      bearerAuth: { type: 'http', scheme: 'bearer' },
    });
    expect(document.servers?.length).toBeGreaterThan(0);
    for (const [path, method, op] of operations()) {
      const open = path.startsWith('/health') || path === '/auth/dev/jwks.json';
      expect(op.security, `${method} ${path}`).toEqual(open ? [] : [{ basicAuth: [] }, { bearerAuth: [] }]);
      if (!open) expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(['400', '401', '403', '429']));
      if (op.requestBody !== undefined)
        expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(['413', '415']));
      // What any request can get before a route runs: declared once, referenced everywhere.
      expect(op.responses['431'], `${method} ${path}`).toEqual({ $ref: '#/components/responses/HeadersTooLarge' });
      if (path.includes('{')) expect(op.responses['414'], `${method} ${path}`).toEqual({ $ref: '#/components/responses/KeyTooLong' });
      expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(['400', '408', '417', '503']));
    }
  });

  it('gives every operation a summary, a unique operationId and one tag of the document (its feature)', () => {
    const tags = (document.tags ?? []).map((tag) => tag.name);
    const ids = operations().map(([path, method, op]) => {
      expect(op.summary, `${method} ${path}`).toBeTruthy();
      expect(op.tags?.length === 1 && tags.includes(op.tags[0]!), `${method} ${path}`).toBe(true);
      return op.operationId;
    });
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers the statuses it declares for credentials and bodies', async () => {
    const list = operations().find(([path, method]) => path === `${API}/bulkImportRequests` && method === 'get');
    expect(list?.[2].operationId).toBe('listBulkImportRequests');
    const anonymous = await t.inject({
      method: 'GET',
      url: `${API}/bulkImportRequests`,
      headers: { authorization: 'Basic bm9ib2R5Om5vdGhpbmc=' },
    });
    expect(anonymous.statusCode).toBe(401);
    const notJson = await t.inject({
      method: 'POST',
      url: `${API}/integrations`,
      headers: { 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    expect(notJson.statusCode).toBe(415);
  });
});

describe('operationIdOf', () => {
  it.each([
    ['GET', `${API}/bulkImportRequests`, 'listBulkImportRequests'],
    ['POST', `${API}/bulkImportRequests`, 'createBulkImportRequests'],
    ['GET', `${API}/bulkImportRequests/:key`, 'getBulkImportRequestsByKey'],
    ['POST', `${API}/bulkImportRequests/:key/Microsoft.NAV.cancel`, 'cancelBulkImportRequests'],
    ['POST', `${API}/restApiConnections/Microsoft.NAV.testConnection`, 'testConnectionRestApiConnectionsCollection'],
    ['GET', `${API}/integrations/:key/fields/:fieldNo`, 'getIntegrationsFieldsByKey'],
    ['GET', `${API}/targetTables/:key/rows`, 'listTargetTablesRows'],
    ['GET', `${API}/$metadata`, 'listMetadata'],
    ['GET', API, 'listServiceDocument'],
  ])('names %s %s %s', (method, url, id) => {
    expect(operationIdOf(method, url)).toBe(id);
  });
});
