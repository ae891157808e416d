/**
 * Every route declares the permission it needs in its `config.permission`; `enforcePermissions`
 * refuses to start a server with a route that declares none. Authentication (a later addition) checks
 * the declared permission in one place, against the caller's permission sets.
 */
import type { FastifyInstance } from 'fastify';

export const PERMISSIONS = [
  /** Health checks, the OpenAPI document and its UI. */
  'public',
  /** Submit, poll, list, cancel and reset bulk import requests. */
  'bulkImport',
  /** Read integrations, target tables and import results. */
  'read',
  /** Create and change target tables, integrations, fields and mappings. */
  'configure',
  /** Create and change REST API connections and endpoints (and their pagination); test and preview them. */
  'configureRest',
  /** Start imports from REST API endpoints. */
  'runImports',
  /** Control job queue entries (Ready / On Hold, interval). */
  'jobQueue',
  /** Administer users and applications. */
  'administer',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

declare module 'fastify' {
  interface FastifyContextConfig {
    permission?: Permission;
  }
}

/** Paths served by plugins (the OpenAPI UI) that cannot carry a route config of ours. */
const PLUGIN_PUBLIC_PREFIXES = ['/docs'];

export function enforcePermissions(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as { permission?: Permission };
    if (config.permission !== undefined) return;
    if (PLUGIN_PUBLIC_PREFIXES.some((p) => route.url === p || route.url.startsWith(`${p}/`))) {
      route.config = { ...config, permission: 'public' };
      return;
    }
    const methods = Array.isArray(route.method) ? route.method.join(',') : route.method;
    throw new Error(`route ${methods} ${route.url} does not declare config.permission`);
  });
}
