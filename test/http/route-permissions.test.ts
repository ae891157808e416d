/**
 * Every route of the API, walked with no credentials and as each permission set, against the table
 * in docs/security.md: 401 without credentials, 403 where the table says a set lacks the permission,
 * and past the permission check (any other answer) where it has it. The table must list exactly the
 * routes the server has, so a route added later is caught here until it is documented; a route that
 * declares no permission at all stops the server from starting.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allows, type PermissionSetName } from '../../src/auth/permission-sets.js';
import { API_BASE } from '../../src/http/odata.js';
import { PERMISSIONS, type Permission } from '../../src/auth/permissions.js';
import { declaredRoutes, type DeclaredRoute } from '../../src/http/permissions.js';
import { buildServer } from '../../src/http/server.js';
import type { Headers } from '../helpers/auth.js';
import { startTestService, type TestService } from '../helpers/service.js';

const SECURITY_DOC = path.resolve(import.meta.dirname, '../../docs/security.md');
const SETS: PermissionSetName[] = ['VENDOR IF STANDARD', 'VENDOR IF ALL', 'SUPER'];
type Outcome = 'allowed' | 403;

interface DocumentedRoute {
  readonly method: string;
  readonly route: string;
  readonly permission: Permission;
  readonly outcomes: Record<PermissionSetName, Outcome>;
}

/** `/api/…/v1.0/bulkImportRequests/:key/details` → `bulkImportRequests({key})/details`; other paths stay absolute. */
function displayRoute(url: string): string {
  const relative = url.startsWith(`${API_BASE}/`) ? url.slice(API_BASE.length + 1) : url;
  return relative.replace(/\/:([A-Za-z]+)(?=\/|$)/g, '({$1})');
}

/** The table rows between the route markers of docs/security.md. */
function documentedRoutes(): DocumentedRoute[] {
  const text = fs.readFileSync(SECURITY_DOC, 'utf8');
  const block = /<!-- route-table:start -->([\s\S]*?)<!-- route-table:end -->/.exec(text)?.[1];
  if (block === undefined) throw new Error('docs/security.md has no route table between <!-- route-table:start/end --> markers');
  const rows: DocumentedRoute[] = [];
  for (const line of block.split('\n')) {
    const m = /^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \| `(\w+)` \| (✓|403) \| (✓|403) \| (✓|403) \|$/.exec(line.trim());
    if (m === null) continue;
    const [, method, route, permission, standard, all, superSet] = m;
    if (!(PERMISSIONS as readonly string[]).includes(permission!))
      throw new Error(`docs/security.md: unknown permission ${permission} for ${method} ${route}`);
    const outcome = (cell: string | undefined): Outcome => (cell === '✓' ? 'allowed' : 403);
    rows.push({
      method: method!,
      route: route!,
      permission: permission as Permission,
      outcomes: { 'VENDOR IF STANDARD': outcome(standard), 'VENDOR IF ALL': outcome(all), SUPER: outcome(superSet) },
    });
  }
  return rows;
}

/** What the table row of a route should say, from the code; printed when the document is out of date. */
function tableRow(route: DeclaredRoute): string {
  const cells = SETS.map((set) => (allows([set], route.permission) ? '✓' : '403'));
  return `| ${route.method} | \`${displayRoute(route.url)}\` | \`${route.permission}\` | ${cells.join(' | ')} |`;
}

/** A concrete URL for a route: keys that name nothing, so that no request changes anything. */
function concreteUrl(url: string): string {
  return url
    .replace(/\/:key(?=\/|$)/g, "('zz-no-such-key')")
    .replace(/\/:fieldKey(?=\/|$)/g, '(999)')
    .replace(/\*$/, 'index.css');
}

let t: TestService;
let routes: DeclaredRoute[];
const credentials = new Map<PermissionSetName, Headers>();

beforeAll(async () => {
  t = await startTestService({ workers: false });
  await t.service.app.ready();
  // HEAD routes are fastify's automatic twins of GET routes; they are walked with their GET's row.
  // Console pages answer signed-in browser sessions, not credentials: test/console-*.test.ts walk them.
  routes = declaredRoutes(t.service.app as unknown as FastifyInstance).filter((r) => r.method !== 'HEAD' && !r.session);
  for (const set of SETS) credentials.set(set, await t.headersFor(set));
});

afterAll(async () => {
  await t.cleanup();
});

describe('route permissions', () => {
  it('docs/security.md lists exactly the routes the server has, with the permission each declares', () => {
    const documented = documentedRoutes();
    const expected = routes.map(tableRow).sort();
    const actual = documented
      .map(
        (d) =>
          `| ${d.method} | \`${d.route}\` | \`${d.permission}\` | ${SETS.map((s) => (d.outcomes[s] === 'allowed' ? '✓' : '403')).join(' | ')} |`,
      )
      .sort();
    expect(actual, `docs/security.md route table is out of date; it should read:\n${routes.map(tableRow).join('\n')}`).toEqual(expected);
  });

  it('walks every route: 401 without credentials, and 403 or allowed per permission set exactly as documented', async () => {
    const failures: string[] = [];
    const documented = new Map(documentedRoutes().map((d) => [`${d.method} ${d.route}`, d]));
    for (const route of routes) {
      const doc = documented.get(`${route.method} ${displayRoute(route.url)}`);
      if (doc === undefined) {
        failures.push(`${route.method} ${route.url} is not in docs/security.md`);
        continue;
      }
      const url = concreteUrl(route.url);
      const send = (headers: Partial<Headers>) =>
        t.service.app.inject({
          method: route.method as 'GET',
          url,
          headers: { ...headers, ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { 'content-type': 'application/json' }) },
          ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: '{}' }),
        });
      for (const method of route.method === 'GET' ? ['GET', 'HEAD'] : [route.method]) {
        const anonymous = await t.service.app.inject({ method: method as 'GET', url });
        const wanted = doc.permission === 'public' ? 'not 401/403' : 401;
        const ok =
          doc.permission === 'public' ? anonymous.statusCode !== 401 && anonymous.statusCode !== 403 : anonymous.statusCode === 401;
        if (!ok) failures.push(`${method} ${url} without credentials: ${anonymous.statusCode}, expected ${wanted}`);
        if (!ok || doc.permission === 'public') continue;
        if (anonymous.headers['www-authenticate'] === undefined)
          failures.push(`${method} ${url} without credentials: 401 without WWW-Authenticate`);
      }
      for (const set of SETS) {
        const res = await send(credentials.get(set)!);
        const expected = doc.outcomes[set];
        const got = res.statusCode === 401 || res.statusCode === 403 ? res.statusCode : 'allowed';
        if (got !== expected)
          failures.push(`${route.method} ${url} as ${set}: ${res.statusCode} ${res.body.slice(0, 120)}, expected ${expected}`);
        if (res.statusCode >= 500) failures.push(`${route.method} ${url} as ${set}: ${res.statusCode} ${res.body.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(routes.length).toBeGreaterThan(50);
  });

  it('refuses to build a server with a route that declares no permission', async () => {
    const unused = { authenticate: () => Promise.reject(new Error('not called')) };
    await expect(
      buildServer({
        logger: pino({ level: 'silent' }),
        bodyLimitBytes: 1024,
        authenticator: unused,
        routes: [(app) => void app.get(`${API_BASE}/undeclared`, (_request, reply) => reply.send({}))],
      }),
    ).rejects.toThrow(/GET \/api\/vendor\/integrationFramework\/v1\.0\/undeclared does not declare config\.permission/);
  });
});
