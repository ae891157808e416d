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

const ENTITIES: Readonly<Record<string, string>> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const decode = (text: string): string => text.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e);
const attribute = (tag: string, name: string): string | undefined => {
  const found = new RegExp(`\\s${name}="([^"]*)"`).exec(tag) ?? new RegExp(`\\s${name}(?=[\\s/>])`).exec(tag);
  return found === null ? undefined : decode(found[1] ?? '');
};

/**
 * What a browser sends when the form of `page` that posts to `action` is submitted, read from the
 * page's own markup: its hidden and text fields with their values (`fill` types into them by name),
 * the checkboxes ticked there or named in `tick` (by value), its textareas, and the name and value of
 * the button pressed (by its label), if it has a name. Disabled controls send nothing.
 */
export function formAsSent(
  page: string,
  action: string,
  options: { readonly fill?: Record<string, string>; readonly tick?: readonly string[]; readonly press?: string } = {},
): [string, string][] {
  const form = [...page.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].find((m) => attribute(m[1]!, 'action') === action);
  if (form === undefined) throw new Error(`The page has no form that posts to ${action}.`);
  const sent: [string, string][] = [];
  let pressed = options.press === undefined;
  const controls = /<(textarea|button)\b([^>]*)>([\s\S]*?)<\/\1\s*>|<(input)\b([^>]*)>/g;
  for (const control of form[2]!.matchAll(controls)) {
    const element = control[1] ?? control[4];
    const tag = control[2] ?? control[5] ?? '';
    const content = control[3] ?? '';
    const name = attribute(tag, 'name');
    if (attribute(tag, 'disabled') !== undefined) continue;
    if (element === 'button') {
      const label = content
        .replace(/<[^>]*>/g, '')
        .replace(/\s+/g, ' ')
        .trim();
      if (options.press !== label) continue;
      pressed = true;
      if (name !== undefined) sent.push([name, attribute(tag, 'value') ?? '']);
      continue;
    }
    if (name === undefined) continue;
    const type = element === 'textarea' ? 'textarea' : (attribute(tag, 'type') ?? 'text');
    const value = element === 'textarea' ? decode(content) : (attribute(tag, 'value') ?? (type === 'checkbox' ? 'on' : ''));
    if (type === 'checkbox' || type === 'radio') {
      if (attribute(tag, 'checked') !== undefined || options.tick?.includes(value) === true) sent.push([name, value]);
    } else if (type !== 'submit' && type !== 'button') sent.push([name, options.fill?.[name] ?? value]);
  }
  if (!pressed) throw new Error(`The form that posts to ${action} has no button '${options.press}'.`);
  return sent;
}
