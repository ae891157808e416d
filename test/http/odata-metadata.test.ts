/**
 * `$metadata` is the OData CSDL document of the API, derived from the routes: XML by default, JSON on
 * request, behind the 'read' permission. Every `@odata.context` the API answers points into it, and
 * every answer has the properties it declares. The service document at the root lists the entity sets.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { API_BASE } from '../../src/http/odata.js';
import { declaredRoutes } from '../../src/http/permissions.js';
import { buildServer } from '../../src/http/server.js';
import { startPagingServer, type PagingServer } from '../helpers/paging-server.js';
import { API, startTestService, type TestService } from '../helpers/service.js';
import { beatWorker } from '../../src/job-queue/workers.js';
import { randomUUID } from 'node:crypto';

const ENTITY_SETS = [
  'bulkImportRequests',
  'integrations',
  'targetTables',
  'restApiConnections',
  'restApiEndpoints',
  'jobQueueEntries',
  'importRuns',
  'users',
  'applications',
  'workers',
  'alarms',
  'webhooks',
  'webhookDeliveries',
];

// ---- a small XML reader: well-formedness and elements with their attributes ---------------------

interface Element {
  readonly name: string;
  readonly attributes: Record<string, string>;
  readonly children: Element[];
}

function parseXml(text: string): Element {
  const body = text.replace(/^<\?xml [^?]*\?>\s*/, '');
  const root: Element = { name: '#document', attributes: {}, children: [] };
  const stack: Element[] = [root];
  const tag = /<(\/?)([A-Za-z][\w:.]*)((?:\s+[\w:.]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (const m of body.matchAll(tag)) {
    const between = body.slice(last, m.index);
    if (between.trim() !== '') throw new Error(`text outside a tag at ${last}: ${between.trim().slice(0, 40)}`);
    last = m.index + m[0].length;
    const [, closing, name = '', attrs = '', selfClosing] = m;
    if (closing === '/') {
      const open = stack.pop();
      if (open?.name !== name) throw new Error(`</${name}> closes <${open?.name}>`);
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const a of attrs.matchAll(/([\w:.]+)="([^"]*)"/g)) {
      if (a[1]! in attributes) throw new Error(`attribute ${a[1]} twice on <${name}>`);
      attributes[a[1]!] = a[2]!
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&amp;/g, '&');
    }
    const element: Element = { name, attributes, children: [] };
    stack[stack.length - 1]!.children.push(element);
    if (selfClosing !== '/') stack.push(element);
  }
  if (body.slice(last).trim() !== '') throw new Error('text after the last tag');
  if (stack.length !== 1) throw new Error(`<${stack[stack.length - 1]!.name}> is never closed`);
  if (root.children.length !== 1) throw new Error('not exactly one root element');
  return root.children[0]!;
}

const childrenNamed = (e: Element, name: string) => e.children.filter((c) => c.name === name);

/** The XML document's schema as `{ type: { key, properties: { name: "Type nullable?" } } }`, like jsonModel. */
function xmlModel(root: Element): Record<string, unknown> {
  const schema = childrenNamed(childrenNamed(root, 'edmx:DataServices')[0]!, 'Schema')[0]!;
  const model: Record<string, unknown> = {};
  for (const type of schema.children.filter((c) => c.name === 'EntityType' || c.name === 'ComplexType')) {
    const key = childrenNamed(type, 'Key').flatMap((k) => childrenNamed(k, 'PropertyRef').map((r) => r.attributes.Name));
    const members: Record<string, string> = {};
    for (const p of type.children.filter((c) => c.name === 'Property' || c.name === 'NavigationProperty')) {
      // A collection-valued navigation property has no Nullable attribute: it is never null.
      const collectionNavigation = p.name === 'NavigationProperty' && p.attributes.Type!.startsWith('Collection(');
      const nullable = p.attributes.Nullable !== 'false' && !collectionNavigation;
      members[p.attributes.Name!] = `${p.name} ${p.attributes.Type} ${nullable ? 'nullable' : 'not null'}`;
    }
    model[type.attributes.Name!] = { kind: type.name, key, open: type.attributes.OpenType === 'true', members };
  }
  const container = childrenNamed(schema, 'EntityContainer')[0]!;
  model.$sets = Object.fromEntries(childrenNamed(container, 'EntitySet').map((s) => [s.attributes.Name, s.attributes.EntityType]));
  model.$actions = schema.children
    .filter((c) => c.name === 'Action')
    .map(
      (a) =>
        `${a.attributes.Name}(${childrenNamed(a, 'Parameter')
          .map((p) => `${p.attributes.Name}: ${p.attributes.Type}`)
          .join(', ')})`,
    )
    .sort();
  return model;
}

type Json = Record<string, unknown>;
type CsdlMember = { $Kind?: string; $Type?: string; $Collection?: boolean; $Nullable?: boolean };

function jsonModel(document: Json): Record<string, unknown> {
  const schema = document['Microsoft.NAV'] as Record<string, Json | Json[]>;
  const model: Record<string, unknown> = {};
  const typeOf = (m: CsdlMember) => (m.$Collection === true ? `Collection(${m.$Type ?? 'Edm.String'})` : (m.$Type ?? 'Edm.String'));
  const actions: string[] = [];
  for (const [name, element] of Object.entries(schema)) {
    if (Array.isArray(element)) {
      for (const a of element)
        actions.push(`${name}(${(a.$Parameter as (CsdlMember & { $Name: string })[]).map((p) => `${p.$Name}: ${typeOf(p)}`).join(', ')})`);
      continue;
    }
    if (element.$Kind === 'EntityContainer') {
      model.$sets = Object.fromEntries(
        Object.entries(element)
          .filter(([k]) => !k.startsWith('$'))
          .map(([k, v]) => [k, (v as CsdlMember).$Type]),
      );
      continue;
    }
    const members: Record<string, string> = {};
    for (const [memberName, member] of Object.entries(element)) {
      if (memberName.startsWith('$')) continue;
      const m = member as CsdlMember;
      const kind = m.$Kind === 'NavigationProperty' ? 'NavigationProperty' : 'Property';
      // Navigation properties are never null here; collections say so of their items.
      members[memberName] = `${kind} ${typeOf(m)} ${m.$Nullable === true ? 'nullable' : 'not null'}`;
    }
    model[name] = { kind: element.$Kind, key: (element.$Key as string[] | undefined) ?? [], open: element.$OpenType === true, members };
  }
  model.$actions = actions.sort();
  return model;
}

// ---- the service --------------------------------------------------------------------------------

let t: TestService;
let paging: PagingServer;

beforeAll(async () => {
  paging = await startPagingServer({ records: 3, pageSize: 10 });
  t = await startTestService({ workers: false });
  const post = async (url: string, payload: object, status: number) =>
    expect((await t.inject({ method: 'POST', url: `${API}/${url}`, payload })).statusCode).toBe(status);
  await post('bulkImportRequests', { integrationSortingOrder: 10, payload: '[{"no":"C1","name":"One"}]' }, 202);
  await post('restApiConnections', { code: 'local', baseUrl: paging.origin, maxRetries: 0 }, 201);
  await post(
    'restApiEndpoints',
    { code: 'local.items', connectionCode: 'local', path: '/root-array', integrationSortingOrder: 10, paginationType: 'none' },
    201,
  );
  await post("restApiEndpoints('local.items')/Microsoft.NAV.run", {}, 202);
  await post('users', { userName: 'olga', password: 'a-long-enough-password', permissionSets: ['VENDOR IF STANDARD'] }, 201);
  // A worker's heartbeat and an alarm (an entry On Hold), so that those sets have something to walk.
  await beatWorker(t.service.db.kysely, {
    info: {
      workerId: randomUUID(),
      host: 'test-host',
      pid: 4242,
      version: '0.1.0',
      startedAt: new Date().toISOString(),
      roles: ['bulk'],
      concurrency: 1,
    },
    now: new Date(),
    lanes: [],
  });
  await post("jobQueueEntries('import-run-processor')/Microsoft.NAV.setOnHold", {}, 200);
  // A webhook and its test event, so that the webhook sets have something to walk.
  const hook = await t.inject({
    method: 'POST',
    url: `${API}/webhooks`,
    payload: {
      integrationSortingOrder: 10,
      url: 'https://receiver.example/hooks',
      secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}`,
    },
  });
  expect(hook.statusCode).toBe(201);
  await post(`webhooks(${hook.json<{ webhookId: string }>().webhookId})/Microsoft.NAV.sendTestEvent`, {}, 200);
});

afterAll(async () => {
  await t?.cleanup();
  await paging?.close();
});

const metadata = (headers: Record<string, string> = {}, query = '') => t.inject({ url: `${API}/$metadata${query}`, headers });

describe('$metadata', () => {
  it('is an OData 4.0 CSDL XML document by default, with every entity set, its type and key', async () => {
    const res = await metadata();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(res.headers['odata-version']).toBe('4.0');
    const root = parseXml(res.body);
    expect(root.name).toBe('edmx:Edmx');
    expect(root.attributes).toEqual({ Version: '4.0', 'xmlns:edmx': 'http://docs.oasis-open.org/odata/ns/edmx' });
    const model = xmlModel(root) as Record<string, { key: string[]; members: Record<string, string> }> & { $sets: Record<string, string> };
    expect(new Set(Object.keys(model.$sets))).toEqual(new Set(ENTITY_SETS));
    const keys = Object.fromEntries(
      Object.entries(model.$sets).map(([set, type]) => [set, model[type.replace('Microsoft.NAV.', '')]!.key]),
    );
    expect(keys).toEqual({
      bulkImportRequests: ['requestId'],
      integrations: ['sortingOrder'],
      targetTables: ['name'],
      restApiConnections: ['code'],
      restApiEndpoints: ['code'],
      jobQueueEntries: ['id'],
      importRuns: ['runId'],
      users: ['userName'],
      applications: ['clientId'],
      workers: ['workerId'],
      alarms: ['alarmId'],
      webhooks: ['webhookId'],
      webhookDeliveries: ['deliveryId'],
    });
    // Every entity type has a key, so that a client can address its entities (odata2ts generates code that needs one).
    const keyless = Object.entries(model as Record<string, { kind?: string; key?: string[] }>)
      .filter(([, type]) => type.kind === 'EntityType' && type.key!.length === 0)
      .map(([name]) => name);
    expect(keyless).toEqual([]);
    expect(model.targetTable!.members.rows).toBe('Property Collection(Microsoft.NAV.targetTableRow) not null');
    expect(model.bulkImportRequest!.members).toMatchObject({
      requestId: 'Property Edm.Guid not null',
      integrationSortingOrder: 'Property Edm.Int64 not null',
      status: 'Property Edm.String not null',
      submittedAt: 'Property Edm.DateTimeOffset not null',
      processedAt: 'Property Edm.DateTimeOffset nullable',
      recordCount: 'Property Edm.Int64 not null',
      errorMessage: 'Property Edm.String not null',
      details: 'NavigationProperty Microsoft.NAV.bulkImportRequestDetails not null',
    });
    // Write-only secrets are not properties of a connection: the answers never carry them.
    expect(Object.keys(model.restApiConnection!.members)).not.toContain('password');
    expect(model.restApiConnection!.members.passwordIsSet).toBe('Property Edm.Boolean not null');
  });

  it('says the same in JSON, with $format=json or an Accept header that asks for JSON alone', async () => {
    const xml = xmlModel(parseXml((await metadata()).body));
    for (const res of [
      await metadata({}, '?$format=json'),
      await metadata({}, '?$format=application/json'),
      await metadata({ accept: 'application/json' }),
      await metadata({ accept: 'application/json;q=0.9' }),
      await metadata({ accept: 'application/json, application/xml;q=0' }),
      await metadata({ accept: 'application/*' }, '?$format=json'),
    ]) {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['odata-version']).toBe('4.01');
      const document = res.json<Json>();
      expect(document).toMatchObject({ $Version: '4.0', $EntityContainer: 'Microsoft.NAV.default' });
      expect(jsonModel(document)).toEqual(xml);
    }
  });

  it.each([
    ['no Accept header', undefined],
    ["axios's default", 'application/json, text/plain, */*'],
    ["fetch's and curl's default", '*/*'],
    ['a browser', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'],
    ['Power Query', 'application/xml'],
    [
      "an OData feed reader's JSON-first header, XML at a lower q",
      'application/json;odata.metadata=minimal;q=1.0,application/json;odata=minimalmetadata;q=0.9,application/atomsvc+xml;q=0.8,application/atom+xml;q=0.8,application/xml;q=0.7,text/plain;q=0.7',
    ],
    ['JSON preferred but XML named', 'application/xml;q=0.5, application/json'],
    ['JSON and any application type', 'application/json, application/*'],
  ])('answers CSDL XML, OData-Version 4.0, to %s', async (_, accept) => {
    const res = await metadata(accept === undefined ? {} : { accept });
    expect(res.statusCode).toBe(200);
    expect(res.headers['odata-version']).toBe('4.0');
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
  });

  it('answers XML to $format=xml whatever the Accept header says', async () => {
    const res = await metadata({ accept: 'application/json' }, '?$format=xml');
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
  });

  it('declares the bound actions the API serves', async () => {
    const model = xmlModel(parseXml((await metadata()).body)) as { $actions: string[] };
    expect(model.$actions).toEqual(
      expect.arrayContaining([
        'cancel(bindingParameter: Microsoft.NAV.bulkImportRequest)',
        'reset(bindingParameter: Microsoft.NAV.bulkImportRequest)',
        'runNow(bindingParameter: Microsoft.NAV.jobQueueEntry)',
        'run(bindingParameter: Microsoft.NAV.restApiEndpoint)',
        'testConnection(bindingParameter: Microsoft.NAV.restApiConnection)',
        'previewFirstPage(bindingParameter: Microsoft.NAV.restApiEndpoint)',
        'detectPagination(bindingParameter: Microsoft.NAV.restApiEndpoint)',
        'bulkCancel(bindingParameter: Collection(Microsoft.NAV.bulkImportRequest), filter: Edm.String, top: Edm.Int64, after: Edm.Guid)',
        'bulkReset(bindingParameter: Collection(Microsoft.NAV.bulkImportRequest), filter: Edm.String, top: Edm.Int64, after: Edm.Guid)',
        'bulkResubmit(bindingParameter: Collection(Microsoft.NAV.bulkImportRequest), filter: Edm.String, top: Edm.Int64, after: Edm.Guid)',
        'bulkDelete(bindingParameter: Collection(Microsoft.NAV.bulkImportRequest), filter: Edm.String, top: Edm.Int64, after: Edm.Guid)',
      ]),
    );
    expect(model.$actions.find((a) => a.startsWith('testConnection(bindingParameter: Collection('))).toContain('baseUrl: Edm.String');
  });

  it('refuses an unknown $format, and needs credentials like the rest of the API', async () => {
    expect((await metadata({}, '?$format=atom')).json()).toEqual({
      error: { code: 'invalidQuery', message: '$format must be xml or json (or application/xml, application/json), got "atom".' },
    });
    const anonymous = await t.service.app.inject({ url: `${API}/$metadata` });
    expect(anonymous.statusCode).toBe(401);
    const standard = await t.service.app.inject({ url: `${API}/$metadata`, headers: await t.headersFor('VENDOR IF STANDARD') });
    expect(standard.statusCode).toBe(200);
  });

  it('matches the excerpt in docs/bulk-import.md', async () => {
    const doc = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/bulk-import.md'), 'utf8');
    const excerpt = /```xml\n([\s\S]*?)\n```/.exec(doc.slice(doc.indexOf('## OData')))?.[1];
    expect(excerpt).toBeDefined();
    const served = (await metadata()).body;
    for (const line of excerpt!.split('\n').filter((l) => !l.trim().startsWith('<!--') && l.trim() !== '…')) expect(served).toContain(line);
  });
});

describe('the service document', () => {
  it.each([API, `${API}/`])('lists the entity sets at %s', async (url) => {
    const res = await t.inject({ url });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ '@odata.context': string; value: { name: string; kind: string; url: string }[] }>();
    expect(body['@odata.context']).toBe(`${API}/$metadata`);
    expect(body.value.map((s) => s.name).sort()).toEqual([...ENTITY_SETS].sort());
    expect(body.value.every((s) => s.kind === 'EntitySet' && s.url === s.name)).toBe(true);
  });
});

describe('every answer of the API against $metadata', () => {
  type Answer = Json & { '@odata.context'?: string; value?: Json[] };
  interface TypeInfo {
    kind: string;
    key: string[];
    open: boolean;
    members: Record<string, CsdlMember>;
  }

  let types: Record<string, TypeInfo>;
  let sets: Record<string, string>;
  const contexts: string[] = [];
  const visited = new Set<string>();

  beforeAll(async () => {
    const document = (await metadata({}, '?$format=json')).json<Json>();
    const schema = document['Microsoft.NAV'] as Record<string, Json>;
    types = {};
    for (const [name, element] of Object.entries(schema)) {
      if (Array.isArray(element) || (element.$Kind !== 'EntityType' && element.$Kind !== 'ComplexType')) continue;
      const members = Object.fromEntries(Object.entries(element).filter(([k]) => !k.startsWith('$'))) as Record<string, CsdlMember>;
      types[`Microsoft.NAV.${name}`] = {
        kind: element.$Kind,
        key: (element.$Key as string[] | undefined) ?? [],
        open: element.$OpenType === true,
        members,
      };
    }
    const container = schema.default!;
    sets = Object.fromEntries(
      Object.entries(container)
        .filter(([k]) => !k.startsWith('$'))
        .map(([k, v]) => [k, (v as CsdlMember).$Type!]),
    );
  });

  const literal = (value: unknown) => (typeof value === 'string' ? `'${value.replace(/'/g, "''")}'` : String(value));
  const keyOf = (type: TypeInfo, entity: Json) => `(${type.key.map((k) => literal(entity[k])).join(',')})`;

  /**
   * The collections of complex values an entity's answer leaves out (OData's default set of properties):
   * sub-resources without a key of their own (the rows of a table), each served at `<entity>/<name>`.
   */
  const servedApart = (type: TypeInfo, entity: Json): string[] =>
    Object.entries(type.members)
      .filter(
        ([name, m]) =>
          m.$Kind !== 'NavigationProperty' && m.$Collection === true && types[m.$Type!]?.kind === 'ComplexType' && !(name in entity),
      )
      .map(([name]) => name);

  /** The entity has exactly the declared structural properties (more only where the type is open), non-null where declared so. */
  function checkEntity(typeName: string, entity: Json, where: string): void {
    const type = types[typeName]!;
    const data = Object.keys(entity).filter((k) => !k.startsWith('@'));
    const apart = servedApart(type, entity);
    const structural = Object.entries(type.members).filter(([name, m]) => m.$Kind !== 'NavigationProperty' && !apart.includes(name));
    if (!type.open) for (const k of data) expect(type.members[k], `${where}: ${k} is not declared on ${typeName}`).toBeDefined();
    for (const [name, m] of structural) {
      if (m.$Nullable === true) continue;
      expect(entity[name], `${where}: ${name} is declared not null on ${typeName}`).not.toBeNull();
      expect(entity[name], `${where}: ${name} is declared not null on ${typeName}`).not.toBeUndefined();
    }
  }

  async function get(url: string): Promise<Answer> {
    const res = await t.inject({ url: `${API}/${url}` });
    expect(res.statusCode, url).toBe(200);
    const body = res.json<Answer>();
    expect(body['@odata.context'], url).toBeDefined();
    contexts.push(body['@odata.context']!);
    return body;
  }

  it('walks every entity set, entity and sub-resource the document declares, each answer as declared', async () => {
    for (const [set, typeName] of Object.entries(sets)) {
      const type = types[typeName]!;
      const list = await get(set);
      visited.add(`GET ${set}`);
      expect(list.value!.length, `${set} has something to walk`).toBeGreaterThan(0);
      for (const item of list.value!) checkEntity(typeName, item, set);
      const first = list.value![0]!;
      const entityUrl = `${set}${keyOf(type, first)}`;
      const entity = await get(entityUrl);
      checkEntity(typeName, entity, entityUrl);
      visited.add(`GET ${set}/:`);
      // Every property an entity leaves out of its answer must be served on its own.
      for (const name of servedApart(type, entity)) {
        // The rows of the table `customer`: open complex values (each table has its own columns), no key.
        const sub = await get(`${entityUrl}/${name}`);
        visited.add(`GET ${set}/:/${name}`);
        for (const item of sub.value!) checkEntity(type.members[name]!.$Type!, item, `${entityUrl}/${name}`);
      }
      for (const [name, nav] of Object.entries(type.members).filter(([, m]) => m.$Kind === 'NavigationProperty')) {
        const target = types[nav.$Type!]!;
        const sub = await get(`${entityUrl}/${name}`);
        visited.add(`GET ${set}/:/${name}`);
        if (nav.$Collection !== true) {
          checkEntity(nav.$Type!, sub, `${entityUrl}/${name}`);
          continue;
        }
        for (const item of sub.value!) checkEntity(nav.$Type!, item, `${entityUrl}/${name}`);
        const member = sub.value![0];
        if (member === undefined || target.key.length === 0) continue;
        const memberUrl = `${entityUrl}/${name}${keyOf(target, member)}`;
        const res = await t.inject({ url: `${API}/${memberUrl}` });
        if (res.statusCode === 404) continue; // not every sub-resource is addressable by key (pages)
        checkEntity(nav.$Type!, await get(memberUrl), memberUrl);
        visited.add(`GET ${set}/:/${name}/:`);
      }
    }
  });

  it("downloads a request's payload: a media resource (the payload as submitted), not an entity of $metadata", async () => {
    const list = await get('bulkImportRequests');
    const id = (list.value![0] as { requestId: string }).requestId;
    const res = await t.inject({ url: `${API}/bulkImportRequests(${id})/payload` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(() => JSON.parse(res.body) as unknown).not.toThrow();
    visited.add('GET bulkImportRequests/:/payload');
  });

  it('walked every GET route of the API: a new one must be in $metadata to be walked', () => {
    const normalized = (url: string) => url.slice(API_BASE.length + 1).replace(/:[A-Za-z]+/g, ':');
    const routes = declaredRoutes(t.service.app as unknown as FastifyInstance)
      .filter((r) => r.method === 'GET' && r.url.startsWith(`${API_BASE}/`) && !r.url.endsWith('/$metadata'))
      .map((r) => `GET ${normalized(r.url)}`);
    expect(routes.filter((r) => !visited.has(r))).toEqual([]);
  });

  it('resolves every @odata.context it answered, actions included, to an entity set (and navigation property) of $metadata', async () => {
    const pending = await t.inject({
      method: 'POST',
      url: `${API}/bulkImportRequests`,
      payload: { integrationSortingOrder: 10, payload: '[]' },
    });
    const cancelled = await t.inject({
      method: 'POST',
      url: `${API}/bulkImportRequests(${pending.json<Json>().requestId as string})/Microsoft.NAV.cancel`,
    });
    const held = await t.inject({ method: 'POST', url: `${API}/jobQueueEntries('retention-cleanup')/Microsoft.NAV.setOnHold` });
    for (const res of [cancelled, held]) contexts.push(res.json<Answer>()['@odata.context']!);
    expect(contexts.length).toBeGreaterThan(ENTITY_SETS.length * 2);
    const unresolved: string[] = [];
    for (const context of new Set(contexts)) {
      const m =
        /^\/api\/vendor\/integrationFramework\/v1\.0\/\$metadata#([A-Za-z]+)(?:\([^)]*\))?(?:\/([A-Za-z]+)(?:\([^)]*\))?)?(\/\$entity)?$/.exec(
          context,
        );
      const set = m?.[1];
      const type = set === undefined || sets[set] === undefined ? undefined : types[sets[set]];
      const nav = m?.[2];
      // A navigation property, or a collection of complex values served apart (`targetTables('customer')/rows`).
      const member = nav === undefined ? undefined : type?.members[nav];
      const addressable =
        member?.$Kind === 'NavigationProperty' || (member?.$Collection === true && types[member.$Type!]?.kind === 'ComplexType');
      if (type === undefined || (nav !== undefined && !addressable)) unresolved.push(context);
    }
    expect(unresolved).toEqual([]);
  });
});

describe('deriving $metadata from the routes', () => {
  const nobody = { authenticate: () => Promise.reject(new AppError(401, 'unauthorized', 'no credentials in this test')) };
  const widgetList = (item: object) =>
    Type.Object({ '@odata.context': Type.String(), value: Type.Array(Type.Object(item as Record<string, never>)) });

  it('stops the server from starting when an entity set has no declared key', async () => {
    const app = await buildServer({
      logger: pino({ level: 'silent' }),
      bodyLimitBytes: 1 << 20,
      authenticator: nobody,
      routes: [
        (scope) => {
          scope.get(
            `${API_BASE}/widgets`,
            { config: { permission: 'read' }, schema: { response: { 200: widgetList({ id: Type.Integer() }) } } },
            () => Promise.resolve({ '@odata.context': '', value: [] }),
          );
        },
      ],
    });
    await expect(app.ready()).rejects.toThrow(
      '$metadata: no key is declared for widgets; declare it with entitySet() in src/http/entity-set.ts',
    );
    await app.close();
  });

  it('stops the server from starting when a declared key is not in the answers', async () => {
    const app = await buildServer({
      logger: pino({ level: 'silent' }),
      bodyLimitBytes: 1 << 20,
      authenticator: nobody,
      routes: [
        (scope) => {
          scope.get(
            `${API_BASE}/users`,
            { config: { permission: 'read', odataKey: ['userName'] }, schema: { response: { 200: widgetList({ name: Type.String() }) } } },
            () => Promise.resolve({ '@odata.context': '', value: [] }),
          );
        },
      ],
    });
    await expect(app.ready()).rejects.toThrow(
      '$metadata: the key userName of users is not a required, non-null, primitive property of its answers',
    );
    await app.close();
  });
});
