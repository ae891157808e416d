/**
 * Response actions: an endpoint may say that an answer of a given HTTP status means "no more records,
 * stop" or "this page has none, skip it" instead of failing the run. Only statuses that can honestly
 * mean that are accepted: a 2xx other than 200 (200 is a page), or a 4xx that says nothing about the
 * credentials, the rate limit or a transient problem. Those, 3xx and 5xx keep failing the run (after
 * retries where they are retried), so a wrong password or an overloaded API never looks like the end.
 * Also the console's one-line form of the list (`404 stop, 410 skip`).
 */
import { invalidAt } from '../core/validation.js';
import { paginationOf, type PaginationType } from '../pagination/index.js';
import { statusLine } from './http-client.js';
import { RESPONSE_ACTIONS, type ResponseAction, type ResponseActionKind } from './model.js';
import { MAX_RESPONSE_ACTIONS } from './schemas.js';

/** 4xx statuses that never stop or skip, and why (the message's words). */
const REFUSED_4XX: Readonly<Record<number, string>> = {
  401: "it says the credentials are wrong or missing; fix the connection's authentication instead",
  403: "it says the credentials may not read this; fix the connection's authentication or its permissions instead",
  407: 'it says a proxy wants credentials; fix the proxy instead',
  408: 'it says the request timed out, which is not the end of the records',
  429: 'it says the API limits the rate; it is retried with backoff (maxRetries, initialDelayMs) instead',
};

/** Why `status` may not carry an action, or null when it may. */
export function refusedStatus(status: number): string | null {
  if (!Number.isInteger(status) || status < 100 || status > 599) return `${status} is not an HTTP status (100 to 599)`;
  if (status === 200) return '200 is a page of records; a 2xx other than 200 (such as 204) or a 4xx may stop or skip';
  if (status >= 200 && status < 300) return null;
  if (status >= 400 && status < 500) {
    const why = REFUSED_4XX[status];
    return why === undefined ? null : `${statusLine(status)} cannot stop or skip: ${why}`;
  }
  if (status >= 500)
    return `${statusLine(status)} cannot stop or skip: 5xx answers are server errors, retried and then failing the run, so that nothing is imported from a run that broke`;
  if (status >= 300) return `${statusLine(status)} cannot stop or skip: redirects are not followed; use the final URL`;
  return `${status} is an informational status, never a final answer`;
}

/** Whether a type knows its next request without the page's body (a skipped page has none). */
const canSkip = (type: PaginationType): boolean => paginationOf(type).pageSize === 'counted';

/** The rules of `responseActions` (at `at`), for the endpoint's pagination type. */
export function validateResponseActions(
  input: readonly { readonly status: number; readonly action: string }[] | null | undefined,
  paginationType: PaginationType,
  at: string,
): ResponseAction[] {
  if (input === undefined || input === null) return [];
  if (input.length > MAX_RESPONSE_ACTIONS) throw invalidAt(at, `at most ${MAX_RESPONSE_ACTIONS} response actions, got ${input.length}`);
  const seen = new Set<number>();
  const actions: ResponseAction[] = [];
  for (const { status, action } of input) {
    const refused = refusedStatus(status);
    if (refused !== null) throw invalidAt(at, refused);
    if (seen.has(status)) throw invalidAt(at, `${status} is listed twice; give each status one action`);
    seen.add(status);
    if (!(RESPONSE_ACTIONS as readonly string[]).includes(action))
      throw invalidAt(at, `the action of ${status} must be ${RESPONSE_ACTIONS.join(' or ')}, got ${JSON.stringify(action)}`);
    if (action === 'skip' && !canSkip(paginationType)) {
      const { title } = paginationOf(paginationType);
      throw invalidAt(
        at,
        `${status} skip: ${title} pagination finds the next page in the page itself, so a skipped page would end the run; use stop, or a type that counts its pages (Page Number, Offset/Limit)`,
      );
    }
    actions.push({ status, action: action as ResponseActionKind });
  }
  return actions.sort((a, b) => a.status - b.status);
}

/** The action for `status`, or undefined when the answer is handled as always. */
export const actionFor = (actions: readonly ResponseAction[], status: number): ResponseAction | undefined =>
  actions.length === 0 ? undefined : actions.find((a) => a.status === status);

/** The console's text form: `404 stop, 410 skip`. */
export const responseActionsText = (actions: readonly ResponseAction[]): string => actions.map((a) => `${a.status} ${a.action}`).join(', ');

/**
 * The console's text read back: items separated by commas or new lines, each a status and an action
 * (`404 stop`, `404: stop`, `404=stop`). What does not read so is refused naming the item, at `at`.
 */
export function parseResponseActions(text: string, at: string): { status: number; action: string }[] {
  const items = text
    .split(/[,;\n]/)
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return items.map((item) => {
    const match = /^(\d{3})\s*[:=]?\s*([A-Za-z]+)$/.exec(item);
    if (match === null) throw invalidAt(at, `"${item}" is not a status and an action; write for example 404 stop, 410 skip`);
    return { status: Number(match[1]), action: match[2]!.toLowerCase() };
  });
}

/** The stored column read back; a row changed by hand into something else fails here, naming the endpoint. */
export function responseActionsFromColumn(column: string, code: string): ResponseAction[] {
  const parsed: unknown = JSON.parse(column);
  const valid =
    Array.isArray(parsed) &&
    parsed.every(
      (a: unknown) =>
        typeof a === 'object' &&
        a !== null &&
        Number.isInteger((a as ResponseAction).status) &&
        (RESPONSE_ACTIONS as readonly unknown[]).includes((a as ResponseAction).action),
    );
  if (!valid) throw new Error(`REST API endpoint "${code}" has response_actions ${column}, which the service did not write`);
  return (parsed as ResponseAction[]).map(({ status, action }) => ({ status, action }));
}
