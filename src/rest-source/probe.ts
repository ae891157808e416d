/**
 * "Test connection" on the admin pages: can the service be reached with these credentials? It reuses
 * the fetch loop's request path, so what it reports is what a run would see. Its sibling, "preview
 * first page", is preview.ts.
 */
import { setQueryParams } from '../pagination/url.js';
import { AuthError } from './auth.js';
import { sendWithCredentials, withSession, type FetchOptions } from './fetch-pages.js';
import { afterAttempts, statusLine } from './http-client.js';
import type { RestConnection } from './model.js';
import { redactText, redactUrl } from './redact.js';

export interface ConnectionTestResult {
  readonly ok: boolean;
  /** The HTTP status answered, null when there was no answer. */
  readonly status: number | null;
  /** The URL called, secrets redacted. */
  readonly url: string;
  readonly message: string;
}

function answerMessage(status: number): { ok: boolean; message: string } {
  if (status === 401 || status === 403) return { ok: false, message: `the service answered ${status}: check the credentials` };
  if (status >= 500) return { ok: true, message: `reachable, but the service answered ${statusLine(status)}` };
  if (status === 404)
    return { ok: true, message: `reachable: the service answered ${statusLine(status)} (the base URL itself need not be a resource)` };
  return { ok: true, message: `reachable: the service answered ${statusLine(status)}` };
}

/**
 * GETs the base URL (with the connection's query and credentials) once, without retries: any HTTP
 * answer proves reachability, except 401/403 which say the credentials are wrong. Never throws for a
 * remote problem; only the signal's abort or a programming error escapes.
 */
export function testConnection(connection: RestConnection, options: FetchOptions = {}): Promise<ConnectionTestResult> {
  // A probe answers promptly: one attempt, and an unreachable service is reported, not retried.
  const once: RestConnection = { ...connection, retry: { ...connection.retry, maxRetries: 0 } };
  const url = setQueryParams(connection.baseUrl, connection.query);
  return withSession(once, options, async (session) => {
    const result = (
      ok: boolean,
      status: number | null,
      message: string,
      shownUrl = redactUrl(url, session.auth.secrets().params),
    ): ConnectionTestResult => ({
      ok,
      status,
      url: shownUrl,
      message: redactText(message, session.auth.secrets()),
    });
    try {
      const { outcome, shownUrl } = await sendWithCredentials(session, { method: 'GET', url, headers: {}, body: null });
      if (outcome.kind === 'noAnswer') return result(false, null, `${outcome.reason}${afterAttempts(outcome.attempts)}`, shownUrl);
      const { ok, message } = answerMessage(outcome.status);
      return result(ok, outcome.status, message, shownUrl);
    } catch (err) {
      if (err instanceof AuthError) return result(false, null, `${err.message}: check the client id, client secret, scope and token URL`);
      throw err;
    }
  });
}
