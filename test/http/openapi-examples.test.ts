/**
 * The request body examples of the OpenAPI document (submit, an integration with inline fields and
 * mappings, a REST API connection, an endpoint of each pagination type) cannot rot: each matches its
 * operation's body schema as the document states it, and the service accepts each as it is.
 */
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, startTestService, type TestService } from '../helpers/service.js';

// A CommonJS module whose export is the plugin itself (its types describe the ES module form).
const addFormats = formats as unknown as typeof formats.default;

interface Media {
  readonly schema: object;
  readonly examples?: Record<string, { summary?: string; value: unknown }>;
}
interface Operation {
  readonly operationId: string;
  readonly requestBody?: { content: Record<string, Media> };
}

let t: TestService;
let examples: { operationId: string; path: string; name: string; schema: object; value: unknown }[];

beforeAll(async () => {
  t = await startTestService();
  const document = (await t.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, Record<string, Operation>> }>();
  examples = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.values(item).flatMap((op) =>
      Object.values(op.requestBody?.content ?? {}).flatMap((media) =>
        Object.entries(media.examples ?? {}).map(([name, example]) => ({
          operationId: op.operationId,
          path,
          name,
          schema: media.schema,
          value: example.value,
        })),
      ),
    ),
  );
});
afterAll(async () => {
  await t?.cleanup();
});

const named = (operationId: string): string[] => examples.filter((e) => e.operationId === operationId).map((e) => e.name);

describe('the OpenAPI request body examples', () => {
  it('are there for the bodies users send most', () => {
    expect(named('createBulkImportRequests')).toEqual(['customers']);
    expect(named('createIntegrations')).toEqual(['withFieldsAndMappings']);
    expect(named('createRestApiConnections')).toEqual(['oauth2ClientCredentials', 'apiKey']);
    expect(named('createRestApiEndpoints')).toEqual(['none', 'nextLink', 'pageNumber', 'offsetLimit']);
  });

  it('each match the body schema of their operation', () => {
    // The document's schemas are OpenAPI 3.0's JSON Schema (with `nullable`, which Ajv reads as well).
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    for (const example of examples) {
      const validate = ajv.compile(example.schema);
      expect(validate(example.value) ? [] : validate.errors, `${example.operationId} ${example.name}`).toEqual([]);
    }
  });

  it('are each accepted by the service as they are', async () => {
    // Connections first: the endpoints call them; the integration and the submit use the example config's table and integration 10.
    const order = ['createRestApiConnections', 'createRestApiEndpoints', 'createIntegrations', 'createBulkImportRequests'];
    const sorted = [...examples].sort((a, b) => order.indexOf(a.operationId) - order.indexOf(b.operationId));
    expect(sorted.length).toBe(8);
    for (const example of sorted) {
      const res = await t.inject({ method: 'POST', url: example.path, payload: example.value as object });
      expect(res.statusCode, `${example.operationId} ${example.name}: ${res.body}`).toBe(
        example.operationId === 'createBulkImportRequests' ? 202 : 201,
      );
    }
    const endpoints = await t.inject({ method: 'GET', url: `${API}/restApiEndpoints` });
    expect(
      endpoints
        .json<{ value: { paginationType: string }[] }>()
        .value.map((e) => e.paginationType)
        .sort(),
    ).toEqual(['nextLink', 'none', 'offsetLimit', 'pageNumber']);
  });
});
