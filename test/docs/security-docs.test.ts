/**
 * docs/security.md documents the request bodies of `users` and `applications`: the tables there list
 * exactly the properties (and the required ones) of the OpenAPI document, the PATCH sentences name
 * exactly what PATCH takes, and the documented examples are accepted as written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, startTestService, type TestService } from '../helpers/service.js';

const DOC = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/security.md'), 'utf8');
const SECTION = DOC.slice(DOC.indexOf('### Request bodies of `users` and `applications`'));
/** The section's prose on one line, for sentences that wrap. */
const PROSE = SECTION.replace(/\s+/g, ' ');

interface SchemaNode {
  properties?: Record<string, unknown>;
  required?: string[];
}
interface Operation {
  requestBody: { content: Record<string, { schema: SchemaNode }> };
  responses: Record<string, { content?: Record<string, { schema: SchemaNode }> }>;
}
interface OpenApi {
  paths: Record<string, { post?: Operation; patch?: Operation }>;
}

let t: TestService;
let openApi: OpenApi;
beforeAll(async () => {
  t = await startTestService({ applyExample: false });
  openApi = (await t.inject({ url: '/docs/json' })).json<OpenApi>();
});
afterAll(async () => t.cleanup());

/** The documented table that follows `heading` (a line of the section): property names and which are required. */
function documentedTable(heading: string): { properties: string[]; required: string[] } {
  const lines = SECTION.slice(SECTION.indexOf(heading)).split('\n');
  const start = lines.findIndex((l) => l.startsWith('| Property | Required |'));
  const rows = lines.slice(start + 2).filter((_, i, all) => all.slice(0, i + 1).every((l) => l.startsWith('|')));
  const cells = rows.map((r) =>
    r
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim()),
  );
  return {
    properties: cells.map((c) => /^`(\w+)`$/.exec(c[0]!)![1]!).sort(),
    required: cells
      .filter((c) => c[1] === 'yes')
      .map((c) => /^`(\w+)`$/.exec(c[0]!)![1]!)
      .sort(),
  };
}

/** The backticked names of the sentence "… `PATCH <set>(…)` changes any of `a`, `b` and `c`". */
function documentedPatch(set: string): string[] {
  const from = PROSE.indexOf(`\`PATCH ${set}(`);
  const sentence = PROSE.slice(from)
    .split(/changes any of /)[1]!
    .split(/;|\.\s/)[0]!;
  return [...sentence.matchAll(/`(\w+)`/g)].map((m) => m[1]!).sort();
}

/** The backticked names of "The answer is the <what>: `a`, `b`, …". */
function documentedAnswer(what: string): string[] {
  const sentence = PROSE.split(`The answer is the ${what}: `)[1]!.split(/\.\s/)[0]!;
  return [...sentence.matchAll(/`(\w+)`/g)].map((m) => m[1]!).sort();
}

const body = (set: string, method: 'post' | 'patch'): SchemaNode => {
  const route = method === 'post' ? `${API}/${set}` : `${API}/${set}({key})`;
  return openApi.paths[route]![method]!.requestBody.content['application/json']!.schema;
};
const answer = (set: string): string[] =>
  Object.keys(openApi.paths[`${API}/${set}`]!.post!.responses['201']!.content!['application/json']!.schema.properties!)
    .filter((p) => !p.startsWith('@'))
    .sort();
const names = (schema: SchemaNode) => Object.keys(schema.properties ?? {}).sort();

describe('docs/security.md: request bodies of users and applications', () => {
  it.each([
    ['users', '`POST users`', 'user'],
    ['applications', '`POST applications`', 'application'],
  ])('%s: the documented POST table, PATCH and answer are those of the OpenAPI document', (set, heading, what) => {
    const table = documentedTable(heading);
    expect(table.properties).toEqual(names(body(set, 'post')));
    expect(table.required).toEqual([...(body(set, 'post').required ?? [])].sort());
    expect(documentedPatch(set)).toEqual(names(body(set, 'patch')));
    expect(documentedAnswer(what)).toEqual(answer(set));
  });

  it.each([
    ['users', '`POST users`', 'userName'],
    ['applications', '`POST applications`', 'clientId'],
  ])('%s: the documented example is accepted as written', async (set, heading, key) => {
    const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(SECTION.slice(SECTION.indexOf(heading)))![1]!) as Record<string, unknown>;
    const res = await t.inject({ method: 'POST', url: `${API}/${set}`, payload: example });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ [key]: example[key], permissionSets: example.permissionSets, enabled: true });
  });
});
