/**
 * Hostile and careless requests, generated with fast-check for every operation of the service's own
 * OpenAPI document (`/docs/json`): keys that name prototype members, break percent-encoding or exceed
 * every limit; query options that are unknown, repeated or half-written; bodies that are not JSON, not
 * UTF-8, nested thousands deep, hold `__proto__`, huge numbers or lone surrogates, or follow the
 * route's schema with one property wrong; odd media types and encodings; missing or forged credentials.
 * Used by test/http/hostile-routes-fuzz.slow.test.ts (the invariants) and bench/soak.ts (memory under a long run).
 */
import fc from 'fast-check';

/** One operation of the OpenAPI document. */
export interface Operation {
  readonly method: string;
  /** The path template, e.g. `/api/…/integrations({key})/fields({fieldKey})`. */
  readonly path: string;
  readonly query: readonly string[];
  readonly bodySchema: JsonSchema | undefined;
}

export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly items?: JsonSchema;
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly const?: unknown;
}

export interface HostileRequest {
  readonly method: string;
  /** Path and query, already encoded (or deliberately mis-encoded). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Uint8Array | undefined;
  /** The operation it was made for. */
  readonly operation: string;
}

interface OpenApiDocument {
  readonly paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; requestBody?: unknown }>>;
}

/** Every operation of the document (request body schemas as the document states them for JSON). */
export function operationsOf(doc: OpenApiDocument): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const body = op.requestBody as { content?: Record<string, { schema?: JsonSchema }> } | undefined;
      const content = body?.content ?? {};
      ops.push({
        method: method.toUpperCase(),
        path,
        query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        bodySchema: content['application/json']?.schema ?? Object.values(content)[0]?.schema,
      });
    }
  }
  return ops;
}

export const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype'];

/** Strings that have broken services before: every limit, encoding and injection this service guards. */
const NASTY_STRINGS = [
  ...PROTOTYPE_NAMES,
  '',
  ' ',
  "'",
  "''",
  '"',
  '()',
  '(',
  ')',
  '\\',
  '%',
  '\u0000',
  '\ud800',
  'x\udc00y',
  '😀',
  '\u202e',
  'ß'.repeat(30),
  'a'.repeat(64),
  'a'.repeat(65),
  'a'.repeat(200),
  'a'.repeat(201),
  'a'.repeat(2100),
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '${ENV:HOME}',
  '${ENV:PATH}',
  "'; drop table customer; --",
  '-1',
  '0',
  '2147483648',
  '9007199254740993',
  '1e400',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  'SUPER',
  'VENDOR IF ALL',
  'http://127.0.0.1:1/',
  'file:///etc/passwd',
];

const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);

const nastyNumber = fc.oneof(
  fc.constantFrom(0, -1, 1, 2147483647, 2147483648, -2147483649, Number.MAX_SAFE_INTEGER, 1e300, 0.5, -0),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** A value of the wrong type, or the right type at an edge. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  nastyNumber,
  fc.boolean(),
  fc.constant(null),
  fc.constant({}),
  fc.constant([]),
  fc.jsonValue({ maxDepth: 3 }),
);

/** A value for a schema: usually of its type, sometimes hostile. */
function valueFor(schema: JsonSchema | undefined, depth: number): fc.Arbitrary<unknown> {
  if (schema === undefined || depth > 3) return anyValue;
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants !== undefined && variants.length > 0) return fc.oneof(...variants.map((v) => valueFor(v, depth + 1)));
  if (schema.enum !== undefined && schema.enum.length > 0) return fc.oneof(fc.constantFrom(...schema.enum), anyValue);
  if (schema.const !== undefined) return fc.oneof(fc.constant(schema.const), anyValue);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return fc.oneof({ weight: 4, arbitrary: nastyString }, { weight: 1, arbitrary: anyValue });
    case 'integer':
    case 'number':
      return fc.oneof({ weight: 4, arbitrary: nastyNumber }, { weight: 1, arbitrary: anyValue });
    case 'boolean':
      return fc.oneof({ weight: 4, arbitrary: fc.boolean() }, { weight: 1, arbitrary: anyValue });
    case 'array':
      return fc.oneof(fc.array(valueFor(schema.items, depth + 1), { maxLength: 4 }), anyValue);
    case 'object':
      return objectFor(schema, depth + 1);
    default:
      return anyValue;
  }
}

/** An object after a schema: its properties, some dropped, one unknown or prototype-named added. */
function objectFor(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return fc.dictionary(nastyString, anyValue, { maxKeys: 3 });
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of properties) record[name] = valueFor(property, depth);
  return fc
    .tuple(
      fc.record(record, { requiredKeys: [] }),
      fc.option(fc.tuple(fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES), fc.string({ maxLength: 12 })), anyValue), { freq: 3 }),
    )
    .map(([object, extra]) => {
      const out: Record<string, unknown> = { ...object };
      if (extra !== null) Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true, writable: true, configurable: true });
      return out;
    });
}

/** Body texts no schema produces. */
const RAW_BODIES: readonly (string | Uint8Array)[] = [
  '',
  ' ',
  'null',
  '[]',
  '{',
  '{"a":1,}',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"admin":true}}}',
  '{"a":1,"a":2}',
  '\ufeff{}',
  '{} trailing',
  '"\\ud800"',
  '{"integrationSortingOrder":10,"payload":"[{\\"no\\":\\"X\\",\\"name\\":\\"\\\\ud800\\"}]"}',
  '{"integrationSortingOrder":10,"payload":"[9007199254740993, 1e400]"}',
  `{"integrationSortingOrder":10,"payload":"${'['.repeat(300)}${']'.repeat(300)}"}`,
  '['.repeat(5000) + ']'.repeat(5000),
  `{"a":${'['.repeat(20000)}`,
  new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  new Uint8Array([0xed, 0xa0, 0x80]),
  'integrationSortingOrder=10&payload=[]',
];

const FORM_NAMES = [
  '_csrf',
  'name',
  'sortingOrder',
  'targetTable',
  'recordsPath',
  'payload',
  'fieldNo',
  'sourcePath',
  'targetField',
  'code',
  'baseUrl',
  'connectionCode',
  'path',
  'paginationType',
  'nextLinkPath',
  'maxPages',
  'pageSize',
  'userName',
  'password',
  'permissionSets',
  'status',
  'next',
  ...PROTOTYPE_NAMES,
];

/** A form as the console's pages post it, with hostile names and values. */
const formBody = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...FORM_NAMES), fc.string({ maxLength: 10 })), fc.oneof(nastyString, filterLike())), {
    maxLength: 6,
  })
  .map((pairs) => new URLSearchParams(pairs).toString());

function filterLike(): fc.Arbitrary<string> {
  return fc.constantFrom("status eq 'Pending'", 'no eq 1', "name eq '", '[{"no":"X"}]', '{"data":[]}', 'http://127.0.0.1:1/');
}

function bodyFor(op: Operation): fc.Arbitrary<string | Uint8Array | undefined> {
  if (!op.path.startsWith('/api/'))
    return fc.oneof(
      { weight: 3, arbitrary: formBody },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    );
  const fromSchema = valueFor(op.bodySchema ?? { type: 'object' }, 0).map((v) => JSON.stringify(v) ?? 'null');
  return fc.oneof(
    { weight: 6, arbitrary: fromSchema },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_BODIES) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

const FILTER_PROPERTIES = [
  'status',
  'integrationSortingOrder',
  'submittedBy',
  'submittedAt',
  'no',
  'name',
  'endpointCode',
  ...PROTOTYPE_NAMES,
];
const FILTER_OPERATORS = ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'and', 'or', 'not', 'contains', 'in', 'has', ''];
const FILTER_LITERALS = [
  "'Pending'",
  "'x'",
  "'",
  "''''",
  '1',
  '-1',
  '9007199254740993',
  '1e400',
  'null',
  'true',
  '2025-01-01T00:00:00Z',
  '(',
  '()',
];

const filterText = fc.oneof(
  fc
    .tuple(
      fc.oneof(fc.constantFrom(...FILTER_PROPERTIES), fc.string({ maxLength: 10 })),
      fc.constantFrom(...FILTER_OPERATORS),
      fc.oneof(fc.constantFrom(...FILTER_LITERALS), nastyString),
    )
    .map((parts) => parts.join(' ')),
  nastyString,
);

const QUERY_OPTIONS = [
  '$filter',
  '$orderby',
  '$top',
  '$skip',
  '$count',
  '$select',
  '$expand',
  '$format',
  '$search',
  'foo',
  '__proto__',
  'constructor',
];

const queryValue = (name: string): fc.Arbitrary<string> =>
  name === '$filter'
    ? filterText
    : fc.oneof(
        fc.constantFrom('1', '0', '-1', '2147483648', 'true', 'name desc', 'xml', 'json', 'application/json;odata.metadata=full'),
        nastyString,
      );

function queryFor(op: Operation): fc.Arbitrary<string> {
  const names = [...new Set([...op.query, ...QUERY_OPTIONS])];
  const option = fc
    .constantFrom(...names)
    .chain((name) => queryValue(name).map((value) => `${percentEncode(name)}=${percentEncode(value)}`));
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 4, arbitrary: fc.array(option, { minLength: 1, maxLength: 3 }).map((parts) => `?${parts.join('&')}`) },
    { weight: 1, arbitrary: fc.constantFrom('?%zz', '?$top', '?$filter=', '?&&', '?$top=1&$top=2', `?$filter=${'x'.repeat(3000)}`) },
  );
}

/** Percent-encoding of any string; a lone surrogate becomes the three bytes it would be in WTF-8 (`%ED%A0%80`). */
export function percentEncode(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff)
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    else out += encodeURIComponent(ch);
  }
  return out;
}

/** A key in a path: a real one now and then, otherwise anything, quoted or not, encoded or broken. */
function keyFor(valid: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...valid) },
    { weight: 4, arbitrary: nastyString.map((s) => percentEncode(s)) },
    { weight: 2, arbitrary: nastyString.map((s) => `'${percentEncode(s)}'`) },
    { weight: 1, arbitrary: fc.constantFrom('%zz', '%ED%A0%80', '%00', "'a''b'", 'a%2Fb', '1)(2', '%27', 'x'.repeat(3000)) },
  );
}

const MEDIA_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json, text/plain',
];

const AUTHORIZATIONS = [
  '',
  'Basic',
  'Basic !!!',
  `Basic ${Buffer.from('admin:wrong password').toString('base64')}`,
  `Basic ${Buffer.from(`${'u'.repeat(5000)}:x`).toString('base64')}`,
  `Basic ${Buffer.from('\u0000:\u0000').toString('base64')}`,
  'Bearer x.y.z',
  `Bearer ${'a'.repeat(3000)}`,
  'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
  'Digest username="admin"',
];

export interface HostileOptions {
  /** The Authorization header of a caller allowed everything (most requests carry it). */
  readonly authorization: string;
  /** The headers of a signed-in console session (cookie and CSRF token), for most requests to a page. */
  readonly session?: Readonly<Record<string, string>>;
  /** Keys that exist, for the path parameters (as they appear in a path: `10`, `'customer'`). */
  readonly validKeys: readonly string[];
}

/** Null mostly, a value one time in `odds`. */
const rarely = <T>(arbitrary: fc.Arbitrary<T>, odds = 8): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: odds - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary });

/** A hostile request for one of the operations. */
export function hostileRequest(ops: readonly Operation[], options: HostileOptions): fc.Arbitrary<HostileRequest> {
  return fc.constantFrom(...ops).chain((op) =>
    fc
      .record({
        keys: fc.array(keyFor(options.validKeys), { minLength: 2, maxLength: 2 }),
        query: queryFor(op),
        body: op.method === 'GET' ? rarely(bodyFor(op)) : bodyFor(op),
        contentType: rarely(fc.constantFrom(...MEDIA_TYPES), 3),
        encoding: rarely(fc.constantFrom('gzip', 'br', 'identity', 'x-unknown')),
        authorization: fc.oneof(
          { weight: 6, arbitrary: fc.constant(options.authorization) },
          { weight: 1, arbitrary: fc.constantFrom(...AUTHORIZATIONS) },
        ),
        signedIn: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      })
      .map(({ keys, query, body, contentType, encoding, authorization, signedIn }): HostileRequest => {
        let k = 0;
        const path = op.path.replace(/\{[^}]+\}/g, () => keys[k++ % 2]!);
        const headers: Record<string, string> = {};
        const page = !op.path.startsWith('/api/');
        if (authorization !== '') headers.authorization = authorization;
        if (page && signedIn && options.session !== undefined && op.path !== '/logout') Object.assign(headers, options.session);
        if (body !== undefined && body !== null)
          headers['content-type'] = contentType ?? (page ? 'application/x-www-form-urlencoded' : 'application/json');
        if (encoding !== null) headers['content-encoding'] = encoding;
        return { method: op.method, url: path + query, headers, body: body ?? undefined, operation: `${op.method} ${op.path}` };
      }),
  );
}

/** Raw HTTP/1.1 requests for the parser in front of every route: broken framing, lines and headers. */
export function rawRequest(paths: readonly string[], authorization: string): fc.Arbitrary<string> {
  const target = fc.oneof(
    fc.constantFrom(...paths),
    fc.constantFrom(
      '*',
      '//',
      '/%zz',
      '/%ED%A0%80',
      `/${'a'.repeat(17000)}`,
      'http://127.0.0.1/health',
      '/api/vendor/integrationFramework/v1.0/users(%27%00%27)',
    ),
    fc.string({ maxLength: 30 }).map((s) => `/${s.replace(/[\s]/g, '')}`),
  );
  const headerLine = fc.oneof(
    fc.constantFrom(
      `Authorization: ${authorization}`,
      'Expect: 100-continue',
      'Expect: chaos',
      'Content-Type: application/json',
      'Accept: application/xml',
      `X-Long: ${'h'.repeat(17000)}`,
      'Bad Header',
      ': empty name',
      'Transfer-Encoding: chunked, identity',
      'Transfer-Encoding: gzip',
      'Host: a\u0000b',
    ),
    fc
      .tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 20 }))
      .map(([n, v]) => `${n.replace(/[\r\n:]/g, '') || 'X'}: ${v.replace(/[\r\n]/g, '')}`),
  );
  return fc
    .record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'CONNECT', 'BREW', 'get', ''),
      target,
      version: fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9', ''),
      headers: fc.array(headerLine, { maxLength: 4 }),
      body: fc.constantFrom('', '{}', '{"a":', 'x'),
    })
    .map(({ method, target: t, version, headers, body }) => {
      const lines = [
        `${method} ${t} ${version}`.trim(),
        'Host: 127.0.0.1',
        ...headers,
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close',
      ];
      return `${lines.join('\r\n')}\r\n\r\n${body}`;
    });
}
