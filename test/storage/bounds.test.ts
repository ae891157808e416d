/**
 * What both databases can hold is checked before either sees a value (src/core/bounds.ts,
 * docs/security.md "Bounds"): integers beyond 32 bits and text holding U+0000 get the same answer on
 * SQLite and on PostgreSQL, a 400 in the service's words or a 404 for a key that names nothing, and
 * change nothing. Every case runs on both databases and the answers are compared with each other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStorableInteger } from '../../src/core/bounds.js';
import { wholeNumber } from '../../src/console/route-input.js';
import { parseIntegerKey } from '../../src/http/odata.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { signInHttp, type Browserless } from '../helpers/console-http.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

interface Case {
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  readonly url: string;
  readonly body?: unknown;
  readonly status: number;
  /** The error code and, where the words matter, the message (a RegExp to match). */
  readonly code: string;
  readonly message?: RegExp;
}

const OUT_OF_RANGE = /from -2147483648 to 2147483647/;
const NUL_WORDS = /contains the character U\+0000, which the database cannot store/;
const PAYLOAD = '[{"no":"C1","name":"One"}]';

const CASES: readonly Case[] = [
  // Integers beyond what PostgreSQL's integer holds, everywhere one is taken.
  ...['2147483648', String(2 ** 60), '-9007199254740993', '-2147483649'].map((n): Case => ({
    name: `submit with integrationSortingOrder ${n}`,
    method: 'POST',
    url: 'bulkImportRequests',
    body: `{"integrationSortingOrder":${n},"payload":${JSON.stringify(PAYLOAD)}}`,
    status: 400,
    code: 'invalidRequest',
    message: OUT_OF_RANGE,
  })),
  {
    name: 'an integration with sortingOrder 2^31',
    method: 'POST',
    url: 'integrations',
    body: { sortingOrder: 2147483648, name: 'Big', targetTable: 'customer' },
    status: 400,
    code: 'invalidRequest',
    message: OUT_OF_RANGE,
  },
  {
    name: 'a job queue entry recurrence beyond 32 bits',
    method: 'PATCH',
    url: 'jobQueueEntries(00000000-0000-7000-8000-000000000000)',
    body: { recurrenceSeconds: 2 ** 40 },
    status: 400,
    code: 'invalidRequest',
  },
  ...['integrations(2147483648)', 'integrations(-2147483649)', 'integrations(99999999999)', 'integrations(2147483648)/fields'].map(
    (url): Case => ({ name: `GET ${url}`, method: 'GET', url, status: 404, code: 'notFound' }),
  ),
  { name: 'DELETE integrations(2147483648)', method: 'DELETE', url: 'integrations(2147483648)', status: 404, code: 'notFound' },
  {
    name: '$filter integrationSortingOrder eq 2^31',
    method: 'GET',
    url: 'bulkImportRequests?$filter=integrationSortingOrder%20eq%202147483648',
    status: 400,
    code: 'invalidQuery',
    message: OUT_OF_RANGE,
  },
  {
    name: '$filter integrationSortingOrder lt -2^53',
    method: 'GET',
    url: 'bulkImportRequests?$filter=integrationSortingOrder%20lt%20-9007199254740993',
    status: 400,
    code: 'invalidQuery',
    message: OUT_OF_RANGE,
  },
  // U+0000 in keys: a key holding it names nothing, on GET, PATCH, DELETE and bound actions.
  ...[
    "users('a%00b')",
    "targetTables('%00')",
    "restApiConnections('%00')",
    "restApiEndpoints('%00')",
    "applications('%00')",
    'users(%00)',
  ].map((url): Case => ({ name: `GET ${url}`, method: 'GET', url, status: 404, code: 'notFound' })),
  { name: "PATCH users('%00')", method: 'PATCH', url: "users('%00')", body: { enabled: false }, status: 404, code: 'notFound' },
  { name: "DELETE targetTables('%00')", method: 'DELETE', url: "targetTables('%00')", status: 404, code: 'notFound' },
  {
    name: "POST restApiConnections('%00')/Microsoft.NAV.testConnection",
    method: 'POST',
    url: "restApiConnections('%00')/Microsoft.NAV.testConnection",
    status: 404,
    code: 'notFound',
  },
  {
    name: "POST restApiEndpoints('%00')/Microsoft.NAV.run",
    method: 'POST',
    url: "restApiEndpoints('%00')/Microsoft.NAV.run",
    status: 404,
    code: 'notFound',
  },
  // U+0000 in body text and in $filter text.
  {
    name: 'an integration name holding U+0000',
    method: 'POST',
    url: 'integrations',
    body: { sortingOrder: 77, name: 'fza\u0000bx', targetTable: 'customer' },
    status: 400,
    code: 'invalidRequest',
    message: /^name: contains the character U\+0000/,
  },
  {
    name: 'a property name holding U+0000',
    method: 'POST',
    url: 'integrations',
    body: { sortingOrder: 78, code: 'NUL', name: 'x', tableName: 'customer', recordsPath: '$[*]', 'a\u0000': 1 },
    status: 400,
    code: 'invalidRequest',
    message: NUL_WORDS,
  },
  {
    name: 'a payload holding U+0000',
    method: 'POST',
    url: 'bulkImportRequests',
    body: { integrationSortingOrder: 10, payload: '[{"no":"C1","name":"a\u0000b"}]' },
    status: 400,
    code: 'invalidRequest',
    message: NUL_WORDS,
  },
  {
    name: 'a connection base URL holding U+0000',
    method: 'POST',
    url: 'restApiConnections',
    body: { code: 'NUL', baseUrl: 'http://127.0.0.1/a\u0000b' },
    status: 400,
    code: 'invalidRequest',
    message: NUL_WORDS,
  },
  {
    name: '$filter text holding U+0000',
    method: 'GET',
    url: "bulkImportRequests?$filter=submittedBy%20eq%20'a%00b'",
    status: 400,
    code: 'invalidQuery',
    message: NUL_WORDS,
  },
];

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

const answers = new Map<string, Map<string, Answer>>();

describe('a whole number written as text is read one way: an integer key of the API, a number of the console', () => {
  it.each([
    ['0', 0],
    ['42', 42],
    ['-7', -7],
    ['007', 7],
    ['2147483647', 2147483647],
    ['-2147483648', -2147483648],
    ['2147483648', null],
    ['-2147483649', null],
    ['99999999999', null],
    ['1.0', null],
    ['1e3', null],
    ['+1', null],
    ['0x10', null],
    ['', null],
    ['-', null],
    [' 1', null],
    ['1\u0000', null],
  ] as const)('%j → %s', (text, expected) => {
    expect(parseStorableInteger(text)).toBe(expected);
    expect(parseIntegerKey(`(${text})`)).toBe(expected);
    // The console also forgives the spaces around a number typed in a form or a URL.
    expect(wholeNumber(` ${text} `)).toBe(parseStorableInteger(text.trim()));
    if (text.trim() === text) expect(wholeNumber(text)).toBe(expected);
  });
});

describe.each(BACKENDS)('what the databases hold ($name)', (backend) => {
  let fresh: FreshDatabase;
  let t: TestService;
  let base: string;
  let console_: Browserless;
  const mine = new Map<string, Answer>();
  answers.set(backend.name, mine);

  beforeAll(async () => {
    if (backend.skip) return;
    fresh = await backend.fresh();
    t = await startTestService({ databaseUrl: fresh.url, config: { host: '127.0.0.1', port: 0 } });
    base = (await t.service.listen()).replace('localhost', '127.0.0.1');
    const user = await t.inject({
      method: 'POST',
      url: `${API}/users`,
      payload: { userName: 'bounds', password: 'bounds-password-1', permissionSets: ['SUPER'] },
    });
    expect(user.statusCode).toBe(201);
    console_ = await signInHttp(base, 'bounds', 'bounds-password-1');
  });

  afterAll(async () => {
    await t?.cleanup();
    await fresh?.cleanup();
  });

  it.each(CASES)('$name: $status $code, nothing changed', async (c) => {
    const before = await t.inject({ method: 'GET', url: `${API}/integrations` });
    const answer = await fetch(`${base}${API}/${c.url}`, {
      method: c.method,
      headers: { ...t.headers, 'content-type': 'application/json' },
      body: c.body === undefined ? undefined : typeof c.body === 'string' ? c.body : JSON.stringify(c.body),
    });
    const body = (await answer.json()) as { error: { code: string; message: string } };
    mine.set(c.name, { status: answer.status, body });
    expect({ status: answer.status, code: body.error.code }, JSON.stringify(body)).toEqual({ status: c.status, code: c.code });
    if (c.message !== undefined) expect(body.error.message).toMatch(c.message);
    expect((await t.inject({ method: 'GET', url: `${API}/integrations` })).body).toBe(before.body);
  });

  it.each([
    ['a user key holding U+0000', '/users/a%00b/disable', {}],
    ['a user key holding U+0000', '/users/%00/delete', {}],
    ['a form field holding U+0000', '/users/new', { userName: 'a\u0000b', password: 'long-enough-password', permissionSets: 'SUPER' }],
  ])('the console refuses %s (POST %s) below 500 and changes nothing', async (_, path, form) => {
    const before = await t.inject({ method: 'GET', url: `${API}/users` });
    const answer = await console_.post(path, { _csrf: console_.csrf, ...form });
    expect(answer.status).toBeLessThan(500);
    // A key holding U+0000 is refused in the service's words; a form is shown again with its error.
    if (answer.status !== 200) {
      expect(answer.status).toBe(400);
      expect(answer.text).toMatch(NUL_WORDS);
    }
    expect((await t.inject({ method: 'GET', url: `${API}/users` })).body).toBe(before.body);
  });

  it.each(['/tables/%00', '/users/%00', '/integrations/2147483648', '/requests?status=a%00b'])(
    'the console answers GET %s below 500',
    async (path) => {
      expect((await console_.get(path)).status).toBeLessThan(500);
    },
  );
});

describe('both databases', () => {
  it('answer every case alike, word for word', () => {
    const [sqlite, postgres] = [answers.get('sqlite'), answers.get('postgres')];
    if (BACKENDS.some((b) => b.skip)) return;
    expect(sqlite?.size).toBe(CASES.length);
    expect(postgres && Object.fromEntries(postgres)).toEqual(sqlite && Object.fromEntries(sqlite));
  });
});
