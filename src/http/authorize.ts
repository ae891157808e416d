/**
 * The one place that enforces permissions: before any route that is not public, the caller is
 * authenticated and its permission sets are checked against the permission the route declares
 * (`config.permission`, which `enforcePermissions` makes mandatory). 401 without valid credentials,
 * 403 with valid credentials but without the permission; both before the body is read.
 */
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../auth/authenticate.js';
import { describePrincipal, type Principal } from '../auth/model.js';
import { allows, setsGranting } from '../auth/permission-sets.js';
import { AppError } from '../core/errors.js';
import type { Permission } from '../auth/permissions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; undefined on public routes. */
    principal?: Principal;
  }
}

export function authorizeRequests(app: FastifyInstance, authenticator: Pick<Authenticator, 'authenticate'>): void {
  app.decorateRequest('principal', undefined);
  app.addHook('onRequest', async (request) => {
    const permission: Permission | undefined = request.routeOptions.config.permission;
    // No route matched (the 404 handler) or a public route: nothing to protect.
    if (permission === undefined || permission === 'public') return;
    // Console pages: the console checks the session and the same permission (src/console/).
    if (request.routeOptions.config.session === true) return;
    const principal = await authenticator.authenticate(request.headers.authorization, request.ip);
    if (!allows(principal.permissionSets, permission)) {
      const held = principal.permissionSets.length === 0 ? 'no permission set' : principal.permissionSets.join(', ');
      throw new AppError(
        403,
        'forbidden',
        `The ${describePrincipal(principal)} (holding ${held}) may not do this: it needs the permission '${permission}', granted by ${setsGranting(permission).join(' or ')}.`,
      );
    }
    request.principal = principal;
  });
}
