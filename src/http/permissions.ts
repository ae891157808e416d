/**
 * Every route declares the permission it needs in its `config.permission`; `enforcePermissions`
 * refuses to start a server with a route that declares none. `authorize.ts` checks the declared
 * permission in one place, against the caller's permission sets.
 */
import type { FastifyInstance } from 'fastify';
import type { Permission } from '../auth/permissions.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    permission?: Permission;
    /**
     * The route belongs to the admin console: its caller is the user of a signed-in browser session,
     * checked by the console (src/console/), not the Authorization header.
     */
    session?: boolean;
  }
}

/** Paths served by plugins (the OpenAPI UI) that cannot carry a route config of ours. */
const PLUGIN_PUBLIC_PREFIXES = ['/docs'];

export interface DeclaredRoute {
  readonly method: string;
  readonly url: string;
  readonly permission: Permission;
  /** A console page or form, authenticated by its session cookie. */
  readonly session: boolean;
}

const declared = new WeakMap<FastifyInstance, DeclaredRoute[]>();

/** Every route of the server with the permission it declares, in registration order. */
export function declaredRoutes(app: FastifyInstance): readonly DeclaredRoute[] {
  return declared.get(app) ?? [];
}

export function enforcePermissions(app: FastifyInstance): void {
  const routes: DeclaredRoute[] = [];
  declared.set(app, routes);
  const record = (method: string | string[], url: string, permission: Permission, session = false) => {
    for (const m of Array.isArray(method) ? method : [method]) routes.push({ method: m, url, permission, session });
  };
  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as { permission?: Permission; session?: boolean };
    if (config.permission !== undefined) {
      record(route.method, route.url, config.permission, config.session === true);
      return;
    }
    if (PLUGIN_PUBLIC_PREFIXES.some((p) => route.url === p || route.url.startsWith(`${p}/`))) {
      route.config = { ...config, permission: 'public' };
      record(route.method, route.url, 'public');
      return;
    }
    const methods = Array.isArray(route.method) ? route.method.join(',') : route.method;
    throw new Error(`route ${methods} ${route.url} does not declare config.permission`);
  });
}
