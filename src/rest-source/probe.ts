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
 * The whole time a probe ("Test connection", "Preview first page") may take, token request, retries
 * and waits included. A probe holds an HTTP request (an administrator's page or an API call) open, so
 * it answers within this whatever the connection's timeout and retry settings say, which are meant
 * for unattended runs; what happened by then is the answer.
 */
export const PROBE_BUDGET_MS = 10_000;

/** What a probe sees of a connection: no single request may outlast the budget, and at most one retry. */
export function forProbe(connection: RestConnection): RestConnection {
  return {
    ...connection,
    timeoutMs: Math.min(connection.timeoutMs, PROBE_BUDGET_MS),
    retry: { ...connection.retry, maxRetries: Math.min(connection.retry.maxRetries, 1) },
  };
}

/**
 * Runs a probe within PROBE_BUDGET_MS: past it the probe's requests are aborted and `timedOut` answers.
 * The caller's own signal still cancels it.
 */
export async function withinBudget<T>(
  options: FetchOptions,
  run: (options: FetchOptions) => Promise<T>,
  timedOut: () => T,
  budgetMs = PROBE_BUDGET_MS,
): Promise<T> {
  const budget = new AbortController();
  const signal = options.signal === undefined ? budget.signal : AbortSignal.any([options.signal, budget.signal]);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => {
      budget.abort(new Error(`the probe took longer than ${budgetMs / 1000} s`));
      resolve('expired');
    }, budgetMs);
  });
  const work = run({ ...options, signal });
  try {
    const first = await Promise.race([work, expired]);
    if (first !== 'expired') return first;
    work.catch(() => undefined); // aborted: its end no longer matters
    return timedOut();
  } catch (err) {
    if (budget.signal.aborted && options.signal?.aborted !== true) return timedOut();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

export const budgetMessage = (budgetMs = PROBE_BUDGET_MS): string =>
  `no answer within ${budgetMs / 1000} s, the time a test or preview may take (runs use the connection's own timeout and retries)`;

/**
 * GETs the base URL (with the connection's query and credentials) once, without retries: any HTTP
 * answer proves reachability, except 401/403 which say the credentials are wrong. Never throws for a
 * remote problem; only the signal's abort or a programming error escapes.
 */
export function testConnection(
  connection: RestConnection,
  options: FetchOptions = {},
  budgetMs = PROBE_BUDGET_MS,
): Promise<ConnectionTestResult> {
  // A probe answers promptly: one attempt, and an unreachable service is reported, not retried.
  const once: RestConnection = { ...forProbe(connection), retry: { ...connection.retry, maxRetries: 0 } };
  const url = setQueryParams(connection.baseUrl, connection.query);
  const timedOut = (): ConnectionTestResult => ({ ok: false, status: null, url: redactUrl(url, []), message: budgetMessage(budgetMs) });
  return withinBudget(
    options,
    (budgeted) =>
      withSession(once, budgeted, async (session) => {
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
          if (err instanceof AuthError)
            return result(false, null, `${err.message}: check the client id, client secret, scope and token URL`);
          throw err;
        }
      }),
    timedOut,
    budgetMs,
  );
}
