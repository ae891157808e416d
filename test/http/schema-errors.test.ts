/**
 * Input that breaks a route's schema is answered 400 `invalidRequest` with a sentence a person would
 * write: where (`body.fields[0].type`), what is allowed, and what was sent. Table-driven over the real
 * routes of the service, then over a small route for the schema keywords the API does not use yet.
 */
import pino from 'pino';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { buildServer, type App } from '../../src/http/server.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

/** What the validator says in its own words; none of it may reach a caller. */
const VALIDATOR_WORDS =
  /must match a schema in anyOf|must be equal to constant|must NOT|must have required property|must be integer|must be object/;

describe('schema errors on the routes of the service', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ workers: false });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const integration = { sortingOrder: 99, name: 'Errors', type: 'restApi', targetTable: 'customer' };
  const user = { userName: 'erin', password: 'a-long-enough-password', permissionSets: ['VENDOR IF ALL'] };
  const connection = { code: 'c1', baseUrl: 'https://api.example.com' };
  const endpoint = { code: 'e1', connectionCode: 'c1', path: 'items', integrationSortingOrder: 10 };
  const table = { name: 'errors_t', primaryKey: ['id'], fields: [{ name: 'id', type: 'integer' }] };

  const CASES: [what: string, method: 'POST' | 'PATCH' | 'GET', url: string, body: unknown, message: string][] = [
    [
      'a whole number or null, sent a fraction (the issue’s example)',
      'POST',
      'integrations',
      { ...integration, maxPayloadSizeKb: 1.5 },
      'body.maxPayloadSizeKb must be a whole number or null, got 1.5',
    ],
    [
      'a whole number, sent a string',
      'POST',
      'integrations',
      { ...integration, sortingOrder: '99' },
      'body.sortingOrder must be a whole number, got the string "99"',
    ],
    [
      'a whole number or null, sent a string',
      'POST',
      'restApiEndpoints',
      { ...endpoint, pageSize: 'ten' },
      'body.pageSize must be a whole number or null, got the string "ten"',
    ],
    [
      'a boolean, sent a string',
      'POST',
      'integrations',
      { ...integration, acceptBulkImportRequests: 'yes' },
      'body.acceptBulkImportRequests must be true or false, got the string "yes"',
    ],
    [
      'a required property missing',
      'POST',
      'integrations',
      { name: 'Errors', type: 'restApi', targetTable: 'customer' },
      'body.sortingOrder is required: a whole number',
    ],
    [
      'an unknown property',
      'POST',
      'integrations',
      { ...integration, maxPayload: 10 },
      'body has an unknown property "maxPayload"; allowed: sortingOrder, name, type, targetTable, recordsPath, acceptBulkImportRequests, maxPayloadSizeKb, writeMode, onRecordError, fields, mappings (and @odata annotations)',
    ],
    [
      'a value outside a union of literals',
      'PATCH',
      "jobQueueEntries('retention-cleanup')",
      { status: 'Running' },
      'body.status must be "Ready" or "On Hold", got "Running"',
    ],
    [
      'a number where a union of literals is expected',
      'PATCH',
      "jobQueueEntries('retention-cleanup')",
      { status: 1 },
      'body.status must be "Ready" or "On Hold", got 1',
    ],
    [
      'a number below the minimum',
      'PATCH',
      "jobQueueEntries('retention-cleanup')",
      { recurrenceSeconds: 0 },
      'body.recurrenceSeconds must be a whole number from 1 to 86400, got 0',
    ],
    [
      'a number above the maximum',
      'PATCH',
      "jobQueueEntries('retention-cleanup')",
      { recurrenceSeconds: 90000 },
      'body.recurrenceSeconds must be a whole number from 1 to 86400, got 90000',
    ],
    [
      'a string that is too long',
      'POST',
      'users',
      { ...user, userName: 'e'.repeat(65) },
      'body.userName must be a string of at most 64 characters, got 65 characters',
    ],
    [
      'an array that is too long',
      'POST',
      'users',
      { ...user, permissionSets: Array(11).fill('SUPER') },
      'body.permissionSets must be an array of at most 10 strings, got an array of 11 items',
    ],
    [
      'an array item of the wrong type',
      'POST',
      'users',
      { ...user, permissionSets: ['SUPER', 7] },
      'body.permissionSets[1] must be a string, got 7',
    ],
    [
      'a map value of the wrong type',
      'POST',
      'restApiConnections',
      { ...connection, headers: { 'X-Api-Version': 2 } },
      'body.headers.X-Api-Version must be a string, got 2',
    ],
    [
      'an array where a map is expected',
      'POST',
      'restApiConnections',
      { ...connection, headers: ['X-Api-Version: 2'] },
      'body.headers must be an object whose values are strings, got an array of 1 item',
    ],
    [
      'a required property missing deep inside',
      'POST',
      'targetTables',
      { ...table, fields: [{ name: 'id', type: 'integer', relation: { table: 'customer' } }] },
      'body.fields[0].relation.field is required: a string',
    ],
    [
      'an unknown property deep inside',
      'POST',
      'targetTables',
      { ...table, fields: [{ name: 'id', type: 'integer', length: 5 }] },
      'body.fields[0] has an unknown property "length"; allowed: name, type, maxLength, required, options, relation',
    ],
    [
      'a string where the Bulk Import API wants a whole number (docs/bulk-import.md)',
      'POST',
      'bulkImportRequests',
      { integrationSortingOrder: '10', payload: '[]' },
      'body.integrationSortingOrder must be a whole number, got the string "10"',
    ],
    ['an array body', 'POST', 'bulkImportRequests', [1, 2], 'body must be a JSON object, got an array of 2 items'],
    ['a JSON null body', 'POST', 'bulkImportRequests', 'null', 'body must be a JSON object, got null'],
    [
      'an array where a string is expected',
      'POST',
      'bulkImportRequests',
      { integrationSortingOrder: 10, payload: [] },
      'body.payload must be a string, got an empty array',
    ],
    [
      'an unknown query parameter',
      'GET',
      'bulkImportRequests?$expand=details',
      undefined,
      'the query has an unknown parameter "$expand"; allowed: $filter, $top, $skip, $orderby',
    ],
  ];

  it.each(CASES)('%s: %s %s', async (_what, method, url, body, message) => {
    const res = await t.inject({
      method,
      url: `${API}/${url}`,
      ...(body === undefined
        ? {}
        : typeof body === 'string'
          ? { payload: body, headers: { 'content-type': 'application/json' } }
          : { payload: body as object }),
    });
    expect(res.json()).toEqual({ error: { code: 'invalidRequest', message } });
    expect(res.statusCode).toBe(400);
    expect(message).not.toMatch(VALIDATOR_WORDS);
  });

  it('changes nothing when it refuses', async () => {
    const integrations = (await t.inject({ url: `${API}/integrations` })).json<{ value: { sortingOrder: number }[] }>().value;
    expect(integrations.map((i) => i.sortingOrder)).not.toContain(99);
    expect((await t.inject({ url: `${API}/users('erin')` })).statusCode).toBe(404);
    expect((await t.inject({ url: `${API}/targetTables('errors_t')` })).statusCode).toBe(404);
  });
});

describe('schema errors for the other keywords a route may use', () => {
  let app: App;
  beforeAll(async () => {
    const nobody = {
      authenticate: () => Promise.reject(new AppError(401, 'unauthorized', 'no credentials in this test')),
    };
    app = await buildServer({
      logger: pino({ level: 'silent' }),
      bodyLimitBytes: 1 << 20,
      authenticator: nobody,
      routes: [
        (scope) => {
          scope.post(
            '/check',
            {
              config: { permission: 'public' },
              schema: {
                body: Type.Object(
                  {
                    id: Type.Optional(Type.String({ format: 'uuid' })),
                    code: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$' })),
                    name: Type.Optional(Type.String({ minLength: 2, maxLength: 5 })),
                    ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
                    kind: Type.Optional(Type.Literal('fixed')),
                    mode: Type.Optional(Type.Union([Type.Literal('on'), Type.Literal('off'), Type.Null()])),
                    tags: Type.Optional(Type.Array(Type.Integer(), { minItems: 1 })),
                    at: Type.Optional(Type.String({ format: 'date-time' })),
                  },
                  { additionalProperties: false },
                ),
              },
            },
            () => Promise.resolve({ ok: true }),
          );
        },
      ],
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const CASES: [what: string, body: object, message: string][] = [
    ['a GUID', { id: 'not-a-guid' }, 'body.id must be a GUID, got "not-a-guid"'],
    ['a pattern', { code: 'ab' }, 'body.code must match ^[A-Z]{3}$, got "ab"'],
    ['a minimum length', { name: 'a' }, 'body.name must be a string of 2 to 5 characters, got 1 character'],
    ['an exclusive minimum', { ratio: 0 }, 'body.ratio must be a number above 0 and at most 1, got 0'],
    ['a single literal', { kind: 'moving' }, 'body.kind must be "fixed", got "moving"'],
    ['two literals or null', { mode: 'auto' }, 'body.mode must be "on", "off" or null, got "auto"'],
    ['two literals or null, sent a number', { mode: 1 }, 'body.mode must be "on", "off" or null, got 1'],
    ['a minimum number of items', { tags: [] }, 'body.tags must be an array of at least 1 whole number, got an empty array'],
    ['an item of an array', { tags: [1, 'two'] }, 'body.tags[1] must be a whole number, got the string "two"'],
    ['a date-time', { at: 'yesterday' }, 'body.at must be an ISO 8601 date and time such as 2026-01-31T12:00:00Z, got "yesterday"'],
    [
      'no properties allowed but these',
      { colour: 'red' },
      'body has an unknown property "colour"; allowed: id, code, name, ratio, kind, mode, tags, at',
    ],
  ];

  it.each(CASES)('%s', async (_what, body, message) => {
    const res = await app.inject({ method: 'POST', url: '/check', payload: body });
    expect(res.json()).toEqual({ error: { code: 'invalidRequest', message } });
    expect(message).not.toMatch(VALIDATOR_WORDS);
  });

  it('accepts what the schema allows', async () => {
    const res = await app.inject({ method: 'POST', url: '/check', payload: { code: 'ABC', mode: null, tags: [1] } });
    expect(res.json()).toEqual({ ok: true });
  });
});
