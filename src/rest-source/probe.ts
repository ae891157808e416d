/**
 * The two buttons of the admin pages: "test connection" (can the service be reached with these
 * credentials?) and "preview" (what does page 1 look like, and what would pagination do next?).
 * Both reuse the fetch loop's request path, so what they report is what a run would see.
 */
import { compileRecordsGetter } from '../pagination/records.js';
import type { StopReason } from '../pagination/types.js';
import { setQueryParams } from '../pagination/url.js';
import { AuthError } from './auth.js';
import { fetchJsonPage, paginatorFor, sendWithCredentials, withSession, type FetchOptions } from './fetch-pages.js';
import { afterAttempts, statusLine } from './http-client.js';
import type { RestConnection, RestEndpoint } from './model.js';
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

/** What pagination would do after page 1. */
export type PreviewNext =
  | { readonly kind: 'next'; readonly url: string; readonly warning?: string }
  | { readonly kind: 'stop'; readonly reason: StopReason; readonly detail: string; readonly warning?: string }
  | { readonly kind: 'fail'; readonly error: string };

export interface PagePreview {
  /** The URL of page 1 as sent, secrets redacted. */
  readonly url: string;
  readonly status: number;
  /** Records at Response Data Path; null when it finds no array (the stop or warning says why). */
  readonly recordCount: number | null;
  /** The first PREVIEW_RECORDS records. */
  readonly records: readonly unknown[];
  readonly next: PreviewNext;
}

export const PREVIEW_RECORDS = 5;

/** Fetches page 1 only and reports what the paginator would do next; throws FetchError when page 1 fails. */
export function previewFirstPage(connection: RestConnection, endpoint: RestEndpoint, options: FetchOptions = {}): Promise<PagePreview> {
  return withSession(connection, options, async (session) => {
    const paginator = paginatorFor(session, endpoint);
    const page = await fetchJsonPage(session, endpoint, paginator.first);
    const records = compileRecordsGetter(endpoint.pagination.responseDataPath)(page.body);
    const step = paginator.next(paginator.first, { body: page.body, records });
    const secrets = session.auth.secrets();
    let next: PreviewNext;
    switch (step.kind) {
      case 'next':
        next = {
          kind: 'next',
          url: redactUrl(step.request.url, secrets.params),
          ...(step.warning === undefined ? {} : { warning: step.warning }),
        };
        break;
      case 'stop':
        next = step;
        break;
      case 'fail':
        next = { kind: 'fail', error: redactText(step.error, secrets) };
        break;
      default: {
        const unexpected: never = step;
        throw new Error(`unknown step ${JSON.stringify(unexpected)}`);
      }
    }
    return {
      url: page.shownUrl,
      status: page.status,
      recordCount: records?.length ?? null,
      records: (records ?? []).slice(0, PREVIEW_RECORDS),
      next,
    };
  });
}
