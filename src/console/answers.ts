/**
 * How the console answers a browser: a page, a redirect that carries a one-time flash message in a
 * cookie (a 303 after a plain form post, `HX-Redirect` for htmx), or the page of a refusal or an error;
 * and the security headers every console answer carries.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { cookie, readCookie } from './cookies.js';
import { html, type Html } from './html.js';
import { layout, type Flash } from './layout.js';
import { localPath } from './route-input.js';

export interface Redirect {
  readonly redirect: string;
  readonly flash?: Flash;
}
/** A file the browser saves (a request's payload): streamed, never held whole. */
export interface Download {
  readonly download: NodeJS.ReadableStream;
  readonly fileName: string;
  readonly contentType: string;
}
export type PageResult = Html | Redirect | Download;
export const redirect = (to: string, flash?: Flash): Redirect => (flash === undefined ? { redirect: to } : { redirect: to, flash });

const FLASH_COOKIE = 'ifw_flash';

/**
 * Every console answer, pages, redirects, errors and assets alike: scripts and styles from the service
 * only (no inline script runs, whatever a page shows), no framing by any site, no type sniffing, and
 * no console URL sent to another site as a referrer.
 */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

export const isSecure = (request: FastifyRequest) => request.protocol === 'https';
export const isHtmx = (request: FastifyRequest) => request.headers['hx-request'] === 'true';

/** The flash message the last redirect left, read once: the cookie is cleared with this answer. */
export function readFlash(request: FastifyRequest, reply: FastifyReply): Flash | undefined {
  const raw = readCookie(request.headers.cookie, FLASH_COOKIE);
  if (raw === undefined) return undefined;
  reply.header('set-cookie', cookie(FLASH_COOKIE, '', { secure: isSecure(request), maxAgeSeconds: 0 }));
  const kind = raw.startsWith('error:') ? 'error' : 'info';
  return { kind, text: raw.slice(raw.indexOf(':') + 1) };
}

export function send(request: FastifyRequest, reply: FastifyReply, result: PageResult): FastifyReply {
  if (result instanceof Object && 'download' in result)
    return reply
      .type(result.contentType)
      .header('content-disposition', `attachment; filename="${result.fileName.replace(/[^\w.-]/g, '_')}"`)
      .header('cache-control', 'no-store')
      .send(result.download);
  if (result instanceof Object && 'redirect' in result) {
    if (result.flash !== undefined)
      void reply.header('set-cookie', cookie(FLASH_COOKIE, `${result.flash.kind}:${result.flash.text}`, { secure: isSecure(request) }));
    const to = localPath(result.redirect);
    if (isHtmx(request)) return reply.header('hx-redirect', to).status(204).send();
    return reply.redirect(to, 303);
  }
  return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(result.markup);
}

/** The page for a refusal or an error, in words; inside `page` (the signed-in user's layout) when there is one. */
export function errorPage(status: number, message: string, page?: { page(title: string, body: Html): Html }): Html {
  const title = status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : status >= 500 ? 'Something went wrong' : 'Cannot do that';
  const body = html`<p role="alert">${message}</p>
    <p><a href="/">Back to the dashboard</a></p>`;
  return page === undefined ? layout({ title, body }) : page.page(title, body);
}
