/**
 * The fetch loop of an endpoint import: ask the paginator for a request, send it (with credentials
 * only on the connection's origin, retries, one token refresh after a 401), parse the page, hand it
 * to the caller, repeat until the paginator stops. Pages are handed over one at a time and not kept,
 * so memory does not grow with the number of pages.
 */
import { parseJsonExact } from '../core/exact-json.js';
import { createPaginator } from '../pagination/paginator.js';
import type { NextStep, PageRequest, PageResponse, Paginator, ResponseHeaders } from '../pagination/types.js';
import { isOnOrigin, originOf, setQueryParams } from '../pagination/url.js';
import { watchWrites } from './request-written.js';
import { AuthError, createAuthenticator, type Authenticator, type Credentials, type OAuthTokenCache } from './auth.js';
import {
  afterAttempts,
  describeAnswer,
  exchange,
  excerpt,
  FetchError,
  withHttp,
  type HttpDeps,
  type HttpOptions,
  statusLine,
  type HttpOutcome,
} from './http-client.js';
import { cookieHint, runCookies, type RunCookies } from './cookies.js';
import type { FetchedPage, FetchSummary, HttpMethod, ResponseAction, RestConnection, RestEndpoint, RunStopReason } from './model.js';
import { findRecords, pageRecordsLocator, type PageFindings, type PageRecordsLocator } from './page-records.js';
import { isSecretName, redactText, redactUrl } from './redact.js';
import { actionFor } from './response-actions.js';

export { FetchError } from './http-client.js';

export interface FetchOptions extends HttpOptions {
  /** OAuth2 token cache; default: the process-wide one. */
  readonly tokenCache?: OAuthTokenCache;
}

export interface FetchPagesOptions extends FetchOptions {
  /** The records path of the integration the records go through ('' or absent: blank); see page-records.ts. */
  readonly recordsPath?: string;
}

/**
 * baseUrl + endpoint.path joined as text (so a base path like `/v1` is kept, unlike RFC 3986
 * resolution of `/customers`), then connection.query and endpoint.query set on it, the endpoint's
 * winning. An absolute endpoint path is used as is.
 */
export function buildFirstUrl(connection: RestConnection, endpoint: RestEndpoint): string {
  const path = endpoint.path.trim();
  const joined = /^https?:\/\//i.test(path)
    ? path
    : path === ''
      ? connection.baseUrl
      : `${connection.baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  return setQueryParams(joined, { ...connection.query, ...endpoint.query });
}

/** Headers merged case-insensitively, later sources winning; the name keeps the spelling of the winner. */
export function mergeHeaders(...sources: readonly Readonly<Record<string, string>>[]): Record<string, string> {
  const byLowerName = new Map<string, [string, string]>();
  for (const source of sources) for (const [name, value] of Object.entries(source)) byLowerName.set(name.toLowerCase(), [name, value]);
  return Object.fromEntries(byLowerName.values());
}

const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** Configured headers that may carry credentials stay on the connection's origin too, not only the auth ones. */
const isCredentialHeader = (name: string): boolean => CREDENTIAL_HEADERS.has(name.toLowerCase()) || isSecretName(name);

/** One connection's fetch context: HTTP dependencies, credentials and where they may go. */
export interface Session {
  readonly connection: RestConnection;
  readonly deps: HttpDeps;
  readonly auth: Authenticator;
  readonly origin: string;
  /** The merged headers of the last request per side of the origin line: a run sends the same ones on every page. */
  readonly headerMemo: { sameOrigin?: MergedHeaders; otherOrigin?: MergedHeaders };
  /** The fetch's cookie jar for the connection's origin (cookies.ts); off unless the endpoint keeps session cookies. */
  readonly cookies: RunCookies;
}

interface MergedHeaders {
  readonly source: Outgoing['headers'];
  readonly withBody: boolean;
  readonly credentials: Credentials | null;
  readonly headers: Readonly<Record<string, string>>;
}

/** The origins an administrator chose for a connection: its base URL's, and its token URL's. */
function chosenOrigins(connection: RestConnection): ReadonlySet<string> {
  const origins = new Set([originOf(connection.baseUrl)]);
  if (connection.auth.type === 'oauth2ClientCredentials') origins.add(originOf(connection.auth.tokenUrl));
  return origins;
}

export function withSession<T>(
  connection: RestConnection,
  options: FetchOptions,
  use: (session: Session) => Promise<T>,
  sessionCookies = false,
): Promise<T> {
  const origin = originOf(connection.baseUrl);
  return withHttp(
    connection.timeoutMs,
    options,
    (deps) =>
      use({
        connection,
        deps,
        auth: createAuthenticator(connection, deps, options.tokenCache),
        origin,
        headerMemo: {},
        cookies: runCookies(origin, sessionCookies),
      }),
    chosenOrigins(connection),
  );
}

export interface Sent {
  readonly outcome: HttpOutcome;
  /** The URL as sent, secrets redacted: what messages and pages show. */
  readonly shownUrl: string;
}

export interface Outgoing {
  readonly method: HttpMethod;
  /** A normalised absolute URL (URL.href), as paginators produce. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | null;
}

const BASE_HEADERS = { accept: 'application/json', 'user-agent': 'ifw' };

/** Connection, then endpoint headers, then credentials (same origin) or minus anything credential-like (other origins). */
function headersFor(session: Session, out: Outgoing, credentials: Credentials | null): Readonly<Record<string, string>> {
  const side = credentials === null ? 'otherOrigin' : 'sameOrigin';
  const withBody = out.body !== null;
  const memo = session.headerMemo[side];
  if (memo !== undefined && memo.source === out.headers && memo.withBody === withBody && memo.credentials === credentials)
    return memo.headers;
  const merged = mergeHeaders(
    BASE_HEADERS,
    session.connection.headers,
    withBody ? { 'content-type': 'application/json' } : {},
    out.headers,
  );
  const headers =
    credentials === null
      ? Object.fromEntries(Object.entries(merged).filter(([name]) => !isCredentialHeader(name)))
      : mergeHeaders(merged, credentials.headers);
  session.headerMemo[side] = { source: out.headers, withBody, credentials, headers };
  return headers;
}

/** The jar's cookies after a configured Cookie header, if any (the headers stay as they are without cookies). */
function withCookies(headers: Readonly<Record<string, string>>, cookies: string | null): Readonly<Record<string, string>> {
  if (cookies === null) return headers;
  const configured = Object.keys(headers).find((name) => name.toLowerCase() === 'cookie');
  if (configured === undefined) return { ...headers, cookie: cookies };
  return { ...headers, [configured]: `${headers[configured]}; ${cookies}` };
}

async function sendOnceWithCredentials(session: Session, out: Outgoing): Promise<Sent> {
  const { connection } = session;
  const credentials = isOnOrigin(out.url, session.origin) ? await session.auth.credentials() : null;
  const url = credentials !== null && Object.keys(credentials.query).length > 0 ? setQueryParams(out.url, credentials.query) : out.url;
  const request = {
    method: out.method,
    url,
    headers: withCookies(headersFor(session, out, credentials), session.cookies.cookieFor(out.url)),
    body: out.body,
    timeoutMs: connection.timeoutMs,
  };
  const outcome = await exchange(request, connection.retry, session.deps);
  if (outcome.kind === 'answer') session.cookies.received(out.url, outcome.headers);
  return { outcome, shownUrl: redactUrl(url, session.auth.secrets().params) };
}

/** Sends with credentials where they belong; after a 401 on the connection's origin, refreshes an OAuth2 token once and retries. */
export async function sendWithCredentials(session: Session, out: Outgoing): Promise<Sent> {
  const sent = await sendOnceWithCredentials(session, out);
  const unauthorized = sent.outcome.kind === 'answer' && sent.outcome.status === 401;
  if (unauthorized && isOnOrigin(out.url, session.origin) && session.auth.invalidate()) return sendOnceWithCredentials(session, out);
  return sent;
}

/** A FetchError whose message names the page, the method and the redacted URL, with every secret removed. */
export function pageError(
  session: Session,
  pageNo: number,
  method: HttpMethod,
  url: string,
  why: string,
  status: number | null = null,
): FetchError {
  const shown = redactUrl(url, session.auth.secrets().params);
  return new FetchError(pageNo, shown, redactText(`page ${pageNo} (${method} ${shown}): ${why}`, session.auth.secrets()), status);
}

export interface JsonPage {
  readonly status: number;
  readonly shownUrl: string;
  readonly body: unknown;
  /** The response headers (Link Header and a cursor in a header read them). */
  readonly headers: ResponseHeaders;
}

/** An answer whose status has a response action: it is not read as a page. */
export interface ActedPage {
  readonly status: number;
  readonly shownUrl: string;
  readonly action: ResponseAction;
}

/** What is sent for a page: the endpoint's request, with the headers and body its paginator set. */
function outgoing(endpoint: RestEndpoint, request: PageRequest): Outgoing {
  return {
    method: endpoint.method,
    url: request.url,
    headers: request.headers === undefined ? endpoint.headers : mergeHeaders(endpoint.headers, request.headers),
    body: endpoint.method === 'POST' ? (request.body ?? endpoint.body) : null,
  };
}

/**
 * Fetches one page: its parsed JSON, or the response action its status has (response-actions.ts);
 * throws FetchError for anything else that is not a 2xx JSON answer.
 */
export async function fetchPage(session: Session, endpoint: RestEndpoint, request: PageRequest): Promise<JsonPage | ActedPage> {
  const out = outgoing(endpoint, request);
  let sent: Sent;
  try {
    sent = await sendWithCredentials(session, out);
  } catch (err) {
    if (err instanceof AuthError) throw pageError(session, request.pageNo, out.method, request.url, err.message);
    throw err;
  }
  const { outcome, shownUrl } = sent;
  const fail = (why: string, status: number | null = null): FetchError =>
    pageError(session, request.pageNo, out.method, shownUrl, why, status);
  if (outcome.kind === 'noAnswer') throw fail(`${outcome.reason}${afterAttempts(outcome.attempts)}`);
  const action = actionFor(endpoint.responseActions, outcome.status);
  if (action !== undefined) return { status: outcome.status, shownUrl, action };
  if (outcome.status < 200 || outcome.status >= 300) {
    const hint = outcome.status >= 400 && outcome.status < 500 ? cookieHint(session.cookies) : '';
    throw fail(`${describeAnswer(outcome.status, outcome.text, outcome.attempts)}${hint}`, outcome.status);
  }
  if (outcome.text.trim() === '') throw fail(`the service answered ${outcome.status} with an empty body, not JSON`, outcome.status);
  try {
    return { status: outcome.status, shownUrl, body: parseJsonExact(outcome.text), headers: outcome.headers };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw fail(`the response is not valid JSON (${reason}); it begins: ${excerpt(outcome.text, 200)}`, outcome.status);
  }
}

/**
 * The paginator and where a page's records are, or a FetchError for page 1 when the settings cannot
 * run (they are validated on save too).
 */
export function paginatorFor(
  session: Session,
  endpoint: RestEndpoint,
  recordsPath: string,
): { paginator: Paginator; locator: PageRecordsLocator } {
  const firstUrl = buildFirstUrl(session.connection, endpoint);
  try {
    return {
      paginator: createPaginator(endpoint.pagination, firstUrl, session.origin, endpoint.method === 'POST' ? endpoint.body : null),
      locator: pageRecordsLocator(endpoint.pagination.responseDataPath, recordsPath),
    };
  } catch (err) {
    throw pageError(session, 1, endpoint.method, firstUrl, err instanceof Error ? err.message : String(err));
  }
}

/** What pagination is shown of a page: the records it counts, and (asked only when needed) why there are none. */
export const pageResponse = (locator: PageRecordsLocator, body: unknown, found: PageFindings, headers?: ResponseHeaders): PageResponse =>
  found.counted === null
    ? { body, records: null, whyNoRecords: () => locator.counted.explain(body), headers }
    : { body, records: found.counted, headers };

/**
 * Fetches every page of `endpoint`. The request for the next page is sent, and written to the socket
 * (request-written.ts), before `onPage` handles the current one, so staging a page overlaps the
 * server's work on the next; at most two pages are held
 * (the one handled and the one arriving), whatever the number of pages. Every page fetched is handed
 * to `onPage`, also the one whose next link fails the fetch (so a failed run's log shows it). Resolves
 * with how the fetch ended; rejects with FetchError for a remote or configuration problem (nothing of
 * the run should then be imported), or with whatever `onPage` throws, or with the signal's reason.
 */
export function fetchPages(
  connection: RestConnection,
  endpoint: RestEndpoint,
  onPage: (page: FetchedPage) => Promise<void> | void,
  options: FetchPagesOptions = {},
): Promise<FetchSummary> {
  return withSession(
    connection,
    options,
    async (session) => {
      const { paginator, locator } = paginatorFor(session, endpoint, options.recordsPath ?? '');
      const warnings = new Set<string>();
      const skipped: ActedPage[] = [];
      const writes = watchWrites();
      let pagesFetched = 0;
      let recordCount: number | null = 0;
      let request = paginator.first;
      try {
        session.deps.signal?.throwIfAborted();
        let arriving = fetchPage(session, endpoint, request);
        for (;;) {
          const page = await arriving;
          const { body, found, step } =
            'action' in page ? actedStep(paginator, endpoint, request, page, skipped) : readStep(paginator, locator, request, page);
          pagesFetched++;
          recordCount = recordCount === null || found.counted === null ? null : recordCount + found.counted.length;
          if (step.kind === 'next') {
            session.deps.signal?.throwIfAborted();
            const { url } = step.request;
            arriving = fetchPage(session, endpoint, step.request);
            // Awaited on the next turn of the loop; until then a failure must not count as unhandled.
            arriving.catch(() => undefined);
            await writes.written(isOnOrigin(url, session.origin) ? session.origin : originOf(url), arriving);
          }
          const { records } = found;
          const whyNoRecords = records === null ? redactText(locator.imported.explain(body), session.auth.secrets()) : null;
          await onPage({ pageNo: request.pageNo, url: page.shownUrl, body, records, whyNoRecords });
          if (step.kind === 'fail') throw pageError(session, request.pageNo, endpoint.method, page.shownUrl, step.error);
          if (step.warning !== undefined) warnings.add(step.warning);
          if (step.kind === 'stop') {
            if (skipped.length > 0) warnings.add(skippedWarning(skipped));
            return { pagesFetched, recordCount, stopReason: step.reason, stopDetail: step.detail, warnings: [...warnings] };
          }
          request = step.request;
        }
      } finally {
        writes.close();
      }
    },
    endpoint.sessionCookies,
  );
}

type LoopStep = NextStep | { readonly kind: 'stop'; readonly reason: RunStopReason; readonly detail: string; readonly warning?: string };
interface Handled {
  readonly body: unknown;
  readonly found: PageFindings;
  readonly step: LoopStep;
}

/** A page read as JSON: its records, and what the paginator makes of it. */
function readStep(paginator: Paginator, locator: PageRecordsLocator, request: PageRequest, page: JsonPage): Handled {
  const found = findRecords(locator, page.body);
  return { body: page.body, found, step: paginator.next(request, pageResponse(locator, page.body, found, page.headers)) };
}

const NOTHING_FOUND: PageFindings = { records: [], counted: [] };

/**
 * A page whose status has a response action: `stop` ends fetching there (the page is logged, without
 * records); `skip` goes on as after a full page (only the types that count their pages may skip:
 * response-actions.ts), so the paginator is shown Page Size records that are not there.
 */
function actedStep(paginator: Paginator, endpoint: RestEndpoint, request: PageRequest, page: ActedPage, skipped: ActedPage[]): Handled {
  const said = `page ${request.pageNo} answered ${statusLine(page.status)}`;
  if (page.action.action === 'stop') {
    const last = request.pageNo === 1 ? 'there are no records' : `the last page was page ${request.pageNo - 1}`;
    const detail = `${said}, which the endpoint's response actions say means no more records: ${last}`;
    return { body: null, found: NOTHING_FOUND, step: { kind: 'stop', reason: 'responseAction', detail } };
  }
  skipped.push(page);
  const full = new Array<null>(endpoint.pagination.pageSize ?? 0).fill(null);
  return { body: null, found: NOTHING_FOUND, step: paginator.next(request, { body: null, records: full }) };
}

/** The warning of a run that skipped pages: which, and why (their records, if any, are not imported). */
function skippedWarning(skipped: readonly ActedPage[]): string {
  const statuses = [...new Set(skipped.map((p) => statusLine(p.status)))].join(', ');
  const pages = skipped.length === 1 ? '1 page was' : `${skipped.length} pages were`;
  return `${pages} skipped by the endpoint's response actions (${statuses}); whatever records they held are not imported`;
}
