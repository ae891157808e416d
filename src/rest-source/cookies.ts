/**
 * Cookies within a run: for APIs that keep paging state in a session cookie, an endpoint may keep a
 * cookie jar for the length of one run (`sessionCookies`). The jar is new for every run, preview and
 * test, and lives in memory only. It takes cookies only from answers of the connection's origin and
 * sends them only there: RFC 6265 would send a cookie of 127.0.0.1 to every port of it, and a next
 * link to another origin never gets one. Cookie values are secrets: they are never logged, never in
 * an answer, an error message or the page log.
 *
 * Without the jar, whether the origin set cookies is still noted, so that a page that fails after it
 * did can say that sessionCookies may be what is missing.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { CookieJar } from 'tough-cookie';
import { isOnOrigin } from '../pagination/url.js';

export interface RunCookies {
  /** Whether the jar is on (`sessionCookies`). */
  readonly enabled: boolean;
  /** Takes the Set-Cookie headers of an answer from `url` (only on the connection's origin, only when enabled). */
  received(url: string, headers: IncomingHttpHeaders): void;
  /** The Cookie header value for a request to `url`, or null (none kept, another origin, or the jar is off). */
  cookieFor(url: string): string | null;
  /** Whether the connection's origin set a cookie during this fetch (kept or not). */
  readonly offered: boolean;
}

const setCookiesOf = (headers: IncomingHttpHeaders): readonly string[] => {
  const value = headers['set-cookie'];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
};

/** A run's cookies for `origin`; with `enabled` false nothing is kept or sent. */
export function runCookies(origin: string, enabled: boolean): RunCookies {
  const jar = enabled ? new CookieJar() : null;
  let offered = false;
  let kept = false;
  return {
    enabled,
    get offered() {
      return offered;
    },
    received(url, headers) {
      const cookies = setCookiesOf(headers);
      if (cookies.length === 0 || !isOnOrigin(url, origin)) return;
      offered = true;
      if (jar === null) return;
      // A cookie the jar refuses (a foreign Domain, a bad date) is left out, as a browser would.
      for (const cookie of cookies) if (jar.setCookieSync(cookie, url, { ignoreError: true }) !== undefined) kept = true;
    },
    cookieFor(url) {
      if (jar === null || !kept || !isOnOrigin(url, origin)) return null;
      const value = jar.getCookieStringSync(url);
      return value === '' ? null : value;
    },
  };
}

/** What a failed page's message adds when the origin set cookies that the endpoint does not keep. */
export const cookieHint = (cookies: RunCookies): string =>
  !cookies.enabled && cookies.offered
    ? '; an earlier answer set cookies and this endpoint does not keep them: if the API keeps its paging state in a session cookie, turn on sessionCookies (Session cookies)'
    : '';
