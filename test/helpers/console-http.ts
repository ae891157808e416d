/**
 * The admin console over real sockets without a browser: sign in through the login form as a browser
 * would (its CSRF cookie and token, Origin), then GET pages and POST forms with the session cookie.
 */
import { expect } from 'vitest';

export interface Browserless {
  readonly cookie: string;
  readonly csrf: string;
  get(path: string): Promise<{ status: number; text: string; headers: Headers }>;
  post(
    path: string,
    form: Record<string, string>,
    headers?: Record<string, string>,
  ): Promise<{ status: number; text: string; headers: Headers }>;
}

export const setCookies = (headers: Headers): string[] => headers.getSetCookie();

/** Signs in through the login form as a browser would, without one: the cookie and the page's CSRF token. */
export async function signInHttp(base: string, userName: string, password: string): Promise<Browserless> {
  const form = await fetch(`${base}/login`);
  const loginCookie = setCookies(form.headers)
    .find((c) => c.startsWith('ifw_login='))!
    .split(';')[0]!;
  const loginToken = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const answer = await fetch(`${base}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie, origin: base },
    body: new URLSearchParams({ _csrf: loginToken, userName, password, next: '/' }).toString(),
  });
  expect(answer.status).toBe(303);
  const session = setCookies(answer.headers).find((c) => c.startsWith('ifw_session='))!;
  const sessionCookie = session.split(';')[0]!;
  const home = await fetch(`${base}/`, { headers: { cookie: sessionCookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await home.text())![1]!;
  const client: Browserless = {
    cookie: sessionCookie,
    csrf,
    async get(path) {
      const r = await fetch(`${base}${path}`, { redirect: 'manual', headers: { cookie: sessionCookie } });
      return { status: r.status, text: await r.text(), headers: r.headers };
    },
    async post(path, fields, headers = {}) {
      const r = await fetch(`${base}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: sessionCookie, origin: base, ...headers },
        body: new URLSearchParams(fields).toString(),
      });
      return { status: r.status, text: await r.text(), headers: r.headers };
    },
  };
  return client;
}
