/**
 * The admin console's shell: sign-in and sign-out, the session check, the permission check, CSRF
 * protection and the page around every page, in one place. Feature folders write the pages (their
 * `pages.ts`) as `ConsolePages`; the composition root hands them in, as it does API routes.
 *
 * Every console route declares `session: true` and a permission, like an API route: the API's
 * Authorization check skips it (http/authorize.ts) and this shell checks the session's user against
 * the same permission sets instead. A page or button the user may not use is not offered (pages ask
 * `ctx.can`), and its URL answers 403 here.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Authenticator, SignedInUser } from '../auth/authenticate.js';
import type { Principal } from '../auth/model.js';
import { allows } from '../auth/permission-sets.js';
import type { Permission } from '../auth/permissions.js';
import { AppError } from '../core/errors.js';
import type { App, RoutePlugin } from '../http/server.js';
import { consoleAsset } from './assets.js';
import { cookie, readCookie } from './cookies.js';
import { CONSOLE_SECURITY_HEADERS, errorPage, isHtmx, isSecure, readFlash, redirect, send, type PageResult } from './answers.js';
import type { Html } from './html.js';
import { layout, type Flash, type NavItem } from './layout.js';
import { loginPage } from './login-page.js';
import { checkedInput, FormBody, formFields, FormText, localPath, PathKey, type ConsoleRequest, type RouteSchemas } from './route-input.js';
import { csrfMatches, type Session, type Sessions } from './sessions.js';

export { CONSOLE_SECURITY_HEADERS, redirect, type Download, type PageResult, type Redirect } from './answers.js';

export interface ConsoleContext {
  readonly user: Principal;
  readonly session: Session;
  readonly csrfToken: string;
  /** Whether the user holds a permission: pages offer only what it allows. */
  can(permission: Permission): boolean;
  /** A whole page: the layout with the sections this user may open around `body`. */
  page(title: string, body: Html): Html;
  /** Whether htmx asks (a live refresh or a partial update): answer the fragment, not the page. */
  readonly partial: boolean;
}

export {
  FormBody,
  FormCheckbox,
  formInteger,
  FormList,
  FormText,
  PathKey,
  sortingOrderOf,
  wholeNumber,
  type ConsoleRequest,
  type RouteSchemas,
} from './route-input.js';

export type PageHandler<S extends RouteSchemas = RouteSchemas> = (request: ConsoleRequest<S>, ctx: ConsoleContext) => Promise<PageResult>;
export type FormHandler<S extends RouteSchemas = RouteSchemas> = (
  request: ConsoleRequest<S>,
  ctx: ConsoleContext,
  form: URLSearchParams,
) => Promise<PageResult>;

export interface Section {
  readonly label: string;
  readonly href: string;
  readonly permission: Permission;
  /** Position in the top bar, lowest first. */
  readonly order: number;
}

export interface FormOptions<S extends RouteSchemas = RouteSchemas> extends RouteSchemas {
  readonly params?: S['params'];
  readonly query?: S['query'];
  readonly body?: S['body'];
  /**
   * The largest form body this route reads, in bytes; default FORM_LIMIT_BYTES. Only a form where a
   * payload is pasted needs more.
   */
  readonly bodyLimit?: number;
}

export interface ConsoleRouter {
  section(section: Section): void;
  get<S extends RouteSchemas = RouteSchemas>(path: string, permission: Permission, handler: PageHandler<S>, schemas?: S): void;
  /** A state-changing form: the CSRF token is checked before the handler runs. */
  post<S extends RouteSchemas = RouteSchemas>(
    path: string,
    permission: Permission,
    handler: FormHandler<S>,
    options?: S & FormOptions<S>,
  ): void;
  /** A form that changes something and shows its page again when the change is refused (`Action`). */
  action<S extends RouteSchemas = RouteSchemas>(
    path: string,
    permission: Permission,
    action: Action<S>,
    options?: S & FormOptions<S>,
  ): void;
}

/**
 * A form that changes something: `change` makes the change and says where to go next (a redirect with
 * a flash, or a page that asks first); a refusal it throws (an AppError below 500, in the rules' own
 * words) is answered by `refused`, the form's page again with that message. Other errors go on to the
 * console's error page.
 */
export interface Action<S extends RouteSchemas = RouteSchemas> {
  readonly change: (request: ConsoleRequest<S>, ctx: ConsoleContext) => Promise<PageResult>;
  readonly refused: (request: ConsoleRequest<S>, ctx: ConsoleContext, message: string) => Html | Promise<Html>;
}

/** What a feature folder contributes to the console. */
export type ConsolePages = (router: ConsoleRouter) => void;

export interface ConsoleDeps {
  readonly sessions: Sessions;
  readonly authenticator: Authenticator;
  readonly pages: readonly ConsolePages[];
}

const LoginQuery = Type.Object({ next: Type.Optional(Type.String()) });
const LoginBody = FormBody({ userName: FormText(), password: FormText(), next: Type.Optional(FormText()) });

const SESSION_COOKIE = 'ifw_session';
const LOGIN_CSRF_COOKIE = 'ifw_login';
/** Console forms are a few fields: a larger body is refused as it arrives (413). */
export const FORM_LIMIT_BYTES = 256 * 1024;

interface Signed {
  readonly user: Principal;
  readonly session: Session;
}

const signedIn = new WeakMap<FastifyRequest, Signed>();

export function consoleRoutes(deps: ConsoleDeps): RoutePlugin {
  const { sessions, authenticator } = deps;
  const sections: Section[] = [];
  const routes: {
    method: 'GET' | 'POST';
    path: string;
    permission: Permission;
    handler: FormHandler;
    schemas: RouteSchemas;
    bodyLimit?: number;
  }[] = [];
  // The handlers' request types follow their schemas, which the route checks before it calls them.
  const router: ConsoleRouter = {
    section: (s) => sections.push(s),
    get: (path, permission, handler, schemas = {} as never) =>
      routes.push({ method: 'GET', path, permission, handler: (r, c) => handler(r as never, c), schemas }),
    post: (path, permission, handler, options = {} as never) => {
      const { bodyLimit, ...schemas } = options as FormOptions;
      routes.push({ method: 'POST', path, permission, handler: handler, schemas, ...(bodyLimit === undefined ? {} : { bodyLimit }) });
    },
    action: (path, permission, action, options) =>
      router.post(
        path,
        permission,
        async (request, ctx) => {
          try {
            return await action.change(request, ctx);
          } catch (err) {
            if (err instanceof AppError && err.status < 500) return action.refused(request, ctx, err.message);
            throw err;
          }
        },
        options,
      ),
  };
  for (const pages of deps.pages) pages(router);
  sections.sort((a, b) => a.order - b.order);

  function contextFor(request: FastifyRequest, reply: FastifyReply, signed: Signed): ConsoleContext {
    const can = (p: Permission) => allows(signed.user.permissionSets, p);
    const path = request.url.split('?')[0] ?? '/';
    const nav: NavItem[] = sections
      .filter((s) => can(s.permission))
      .map((s) => ({
        label: s.label,
        href: s.href,
        current: s.href === '/' ? path === '/' : path === s.href || path.startsWith(`${s.href}/`),
      }));
    let flash: Flash | undefined;
    let flashRead = false;
    return {
      user: signed.user,
      session: signed.session,
      csrfToken: signed.session.csrfToken,
      can,
      partial: isHtmx(request),
      page(title, body) {
        if (!flashRead) {
          flash = readFlash(request, reply);
          flashRead = true;
        }
        return layout({
          title,
          body,
          nav,
          user: { name: signed.user.name, csrfToken: signed.session.csrfToken },
          ...(flash === undefined ? {} : { flash }),
        });
      },
    };
  }

  /** The signed-in user of the request's session cookie, as the user is now; undefined when none. */
  async function resume(request: FastifyRequest): Promise<Signed | undefined> {
    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (token === undefined) return undefined;
    return sessions.resume(token);
  }

  return (app: App) => {
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES },
      (_request, body, done) => {
        done(null, new URLSearchParams(body.toString()));
      },
    );

    app.addHook('onSend', (_request, reply, payload, done) => {
      void reply.headers(CONSOLE_SECURITY_HEADERS);
      done(null, payload);
    });

    app.setErrorHandler((err: Error, request, reply) => {
      const signed = signedIn.get(request);
      const ctx = signed === undefined ? undefined : contextFor(request, reply, signed);
      if (err instanceof AppError) {
        return reply
          .status(err.status)
          .headers(err.headers)
          .type('text/html; charset=utf-8')
          .send(errorPage(err.status, err.message, ctx).markup);
      }
      const status = (err as { statusCode?: number }).statusCode;
      if (status !== undefined && status >= 400 && status < 500)
        return reply
          .status(status)
          .type('text/html; charset=utf-8')
          .send(errorPage(status, err.message, ctx).markup);
      request.log.error({ err }, 'internal error in the console');
      return reply
        .status(500)
        .type('text/html; charset=utf-8')
        .send(errorPage(500, 'An internal error occurred; it has been logged.', ctx).markup);
    });

    // Signed in and allowed, decided before any of the body is read: a request without a live session
    // costs a cookie lookup, whatever it sends. The connection is closed after the answer, so that a
    // body nobody reads is not received either.
    app.addHook('onRequest', async (request, reply) => {
      const permission = request.routeOptions.config.permission;
      if (permission === undefined || permission === 'public') return;
      const signed = await resume(request);
      if (signed === undefined) {
        if (hasBody(request)) void reply.header('connection', 'close');
        const next = request.method === 'GET' && !isHtmx(request) ? request.url : undefined;
        return send(request, reply, redirect(next === undefined || next === '/' ? '/login' : `/login?next=${encodeURIComponent(next)}`));
      }
      signedIn.set(request, signed);
      if (!allows(signed.user.permissionSets, permission)) {
        if (hasBody(request)) void reply.header('connection', 'close');
        throw new AppError(
          403,
          'forbidden',
          `Your permission sets (${signed.user.permissionSets.join(', ') || 'none'}) do not allow this page or action.`,
        );
      }
      return undefined;
    });

    // Forms: the session's CSRF token and our own origin, once the (small) body is read.
    app.addHook('preHandler', (request, _reply, done) => {
      const signed = signedIn.get(request);
      try {
        if (signed !== undefined && request.method === 'POST') checkForm(request, signed.session);
      } catch (err) {
        return done(err as Error);
      }
      done();
    });

    for (const route of routes) {
      app.route({
        method: route.method,
        url: route.path,
        config: { permission: route.permission, session: true },
        ...(route.bodyLimit === undefined ? {} : { bodyLimit: route.bodyLimit }),
        handler: async (request, reply) => {
          const signed = signedIn.get(request);
          if (signed === undefined) throw new AppError(401, 'unauthorized', 'Sign in first.');
          if (route.schemas.params !== undefined) checkedInput(request, route.schemas.params, 'params');
          if (route.schemas.query !== undefined) checkedInput(request, route.schemas.query, 'querystring');
          const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
          if (route.schemas.body !== undefined)
            request.body = checkedInput(request, route.schemas.body, 'body', formFields(form, route.schemas.body));
          const ctx = contextFor(request, reply, signed);
          return send(request, reply, await route.handler(request as ConsoleRequest, ctx, form));
        },
      });
    }

    app.get('/assets/:name', { config: { permission: 'public', session: true } }, async (request, reply) => {
      const asset = consoleAsset(checkedInput(request, PathKey('name'), 'params').name);
      if (asset === undefined) throw new AppError(404, 'notFound', 'No such asset.');
      return reply.type(asset.contentType).header('cache-control', 'public, max-age=3600').send(asset.body);
    });

    app.get('/login', { config: { permission: 'public', session: true } }, async (request, reply) => {
      const next = localPath(checkedInput(request, LoginQuery, 'querystring').next);
      if ((await resume(request)) !== undefined) return reply.redirect(next, 303);
      return sendLogin(request, reply, next, undefined, 200);
    });

    app.post('/login', { config: { permission: 'public', session: true } }, async (request, reply) => {
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
      const next = localPath(form.get('next') ?? undefined);
      const expected = readCookie(request.headers.cookie, LOGIN_CSRF_COOKIE);
      if (!sameOrigin(request) || expected === undefined || form.get('_csrf') !== expected)
        return sendLogin(request, reply, next, 'The sign-in form expired or came from another site; sign in again.', 403);
      let user: SignedInUser;
      let userName = '';
      try {
        const body = checkedInput(request, LoginBody, 'body', formFields(form, LoginBody));
        userName = body.userName;
        user = await authenticator.signIn(userName, body.password, request.ip);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        if (err.headers['retry-after'] !== undefined) void reply.header('retry-after', err.headers['retry-after']);
        return sendLogin(request, reply, next, err.message, err.status, userName);
      }
      const { token } = await sessions.create(user.userId, user.securityStamp);
      reply.header('set-cookie', [
        cookie(SESSION_COOKIE, token, { secure: isSecure(request) }),
        cookie(LOGIN_CSRF_COOKIE, '', { secure: isSecure(request), maxAgeSeconds: 0 }),
      ]);
      return reply.redirect(next, 303);
    });

    app.post('/logout', { config: { permission: 'public', session: true } }, async (request, reply) => {
      const signed = await resume(request);
      if (signed !== undefined) {
        checkForm(request, signed.session);
        await sessions.end(signed.session);
      }
      reply.header('set-cookie', cookie(SESSION_COOKIE, '', { secure: isSecure(request), maxAgeSeconds: 0 }));
      return reply.redirect('/login', 303);
    });
  };
}

function sendLogin(
  request: FastifyRequest,
  reply: FastifyReply,
  next: string,
  error: string | undefined,
  status: number,
  userName = '',
): FastifyReply {
  // A fresh token per form shown: the sign-in form is protected before any session exists (login CSRF).
  const token = readCookie(request.headers.cookie, LOGIN_CSRF_COOKIE) ?? crypto.randomUUID();
  reply.header('set-cookie', cookie(LOGIN_CSRF_COOKIE, token, { secure: isSecure(request) }));
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(loginPage({ next, error, csrfToken: token, userName }).markup);
}

/**
 * A browser sends Origin on every POST; one that names another site is refused whatever it carries.
 * Behind a trusted proxy (IFW_TRUST_PROXY), scheme and host are those the browser used.
 */
function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  return origin === `${request.protocol}://${request.host}`;
}

/** Whether a request carries a body (that nobody has read yet, in onRequest). */
const hasBody = (request: FastifyRequest): boolean =>
  request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;

function checkForm(request: FastifyRequest, session: Session): void {
  const header = request.headers['x-csrf-token'];
  const submitted =
    typeof header === 'string' ? header : request.body instanceof URLSearchParams ? (request.body.get('_csrf') ?? undefined) : undefined;
  if (!sameOrigin(request) || !csrfMatches(session, submitted))
    throw new AppError(
      403,
      'forbidden',
      'This form did not come from a page of this console (its security token is missing or stale); reload the page and try again.',
    );
}
