/**
 * The documents clients are generated from, pinned: the OpenAPI document (`/docs/json`) and the OData
 * `$metadata` in XML and JSON. A change to any of them shows up as a diff of the files under
 * `test/fixtures/api-documents/` in review; `npx vitest run test/http/api-documents.test.ts -u` writes the new
 * ones once the change is meant. A refactoring of how routes are declared must leave them as they are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, startTestService, type TestService } from '../helpers/service.js';

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.cleanup();
});

/** Pretty-printed with sorted keys nowhere: the document's own key order is part of what clients see. */
const pretty = (text: string): string => `${JSON.stringify(JSON.parse(text), null, 2)}\n`;

describe('the API documents', () => {
  it('OpenAPI (/docs/json) is as pinned', async () => {
    const res = await t.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    await expect(pretty(res.body)).toMatchFileSnapshot('../fixtures/api-documents/openapi.json');
  });

  it("OpenAPI covers the API and the health checks, never the console's HTML pages", async () => {
    const document = (await t.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, unknown> }>();
    const paths = Object.keys(document.paths);
    expect(paths.filter((p) => !p.startsWith(`${API}`) && !p.startsWith('/health') && p !== '/auth/dev/jwks.json')).toEqual([]);
    expect(paths).toContain(`${API}/bulkImportRequests`);
    // The console's pages are served all the same.
    for (const page of ['/login', '/assets/console.css']) expect((await t.inject({ method: 'GET', url: page })).statusCode).toBe(200);
  });

  it("answers the development issuer's key set as its declared response keeps it whole", async () => {
    const res = await t.inject({ method: 'GET', url: '/auth/dev/jwks.json' });
    expect(res.statusCode).toBe(200);
    const { keys } = res.json<{ keys: Record<string, unknown>[] }>();
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(Object.keys(key)).toEqual(expect.arrayContaining(['kty', 'kid']));
  });

  it('$metadata as XML is as pinned', async () => {
    const res = await t.inject({ method: 'GET', url: `${API}/$metadata`, headers: { accept: 'application/xml' } });
    expect(res.statusCode).toBe(200);
    await expect(res.body).toMatchFileSnapshot('../fixtures/api-documents/metadata.xml');
  });

  it('$metadata as JSON is as pinned', async () => {
    const res = await t.inject({ method: 'GET', url: `${API}/$metadata?$format=json` });
    expect(res.statusCode).toBe(200);
    await expect(pretty(res.body)).toMatchFileSnapshot('../fixtures/api-documents/metadata.json');
  });

  it('the service document is as pinned', async () => {
    const res = await t.inject({ method: 'GET', url: API });
    expect(res.statusCode).toBe(200);
    await expect(pretty(res.body)).toMatchFileSnapshot('../fixtures/api-documents/service.json');
  });
});
