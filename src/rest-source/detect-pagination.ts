/**
 * "Detect pagination" and "Check pagination": page 1 of an endpoint, fetched as a run would fetch it
 * (the outbound HTTP client and its rules, credentials only to the connection's origin), and at most two
 * more pages followed with the settings detection proposes (src/pagination/detect.ts); then the
 * endpoint's own settings walked over the same pages (at most three, answers reused when the request is
 * the same) and compared with what the API showed (src/pagination/check.ts). Nothing is written; every
 * URL and sentence has the connection's secrets redacted. A probe: within PROBE_BUDGET_MS.
 */
import {
  checkPagination,
  confirmProposal,
  createPaginator,
  extractRecords,
  proposePagination,
  setQueryParams,
  type CheckedPage,
  type FollowedPage,
  type NextStep,
  type PageRequest,
  type PaginationProblem,
  type PaginationSettings,
  type Proposal,
} from '../pagination/index.js';
import {
  buildFirstUrl,
  fetchPage,
  pageError,
  pageResponse,
  paginatorFor,
  withSession,
  type FetchOptions,
  type JsonPage,
  type Session,
} from './fetch-pages.js';
import { FetchError, statusLine } from './http-client.js';
import type { RestConnection, RestEndpoint } from './model.js';
import { findRecords } from './page-records.js';
import { budgetMessage, forProbe, PROBE_BUDGET_MS, withinBudget } from './probe.js';
import { redactText, redactUrl } from './redact.js';

/** Pages detection follows after the first, and the pages the check walks in all. */
export const DETECT_FOLLOW_PAGES = 2;
export const CHECK_PAGES = 3;

export interface SeenPage {
  readonly pageNo: number;
  /** The URL as sent, secrets redacted. */
  readonly url: string;
  /** Records at the proposed Response Data Path; null when it finds no array. */
  readonly recordCount: number | null;
}

export interface PaginationDetection {
  /** Page 1 as sent, secrets redacted. */
  readonly url: string;
  readonly status: number;
  /** The proposed settings, in the engine's form (routes.ts shows them as the API's fields). */
  readonly settings: PaginationSettings;
  readonly evidence: readonly string[];
  readonly notes: readonly string[];
  /** The pages detection fetched with its proposal: page 1 and at most two more. */
  readonly pages: readonly SeenPage[];
  /** Where the endpoint's own settings and the API disagree (the spec's "Pagination problems"), each with its remedy. */
  readonly problems: readonly PaginationProblem[];
}

/** The same request: URL, and the headers and body a paginator set. */
const keyOf = (request: PageRequest): string => JSON.stringify([request.url, request.headers ?? null, request.body ?? null]);

/**
 * Detects the pagination of `endpoint`'s API and checks its configured settings against it. Throws
 * FetchError when page 1 cannot be fetched (as preview does); later pages that fail are reported.
 */
export function detectPagination(
  connection: RestConnection,
  endpoint: RestEndpoint,
  recordsPath: string,
  options: FetchOptions = {},
  budgetMs = PROBE_BUDGET_MS,
): Promise<PaginationDetection> {
  return withinBudget(
    options,
    (budgeted) =>
      withSession(forProbe(connection), budgeted, (session) => detectIn(session, endpoint, recordsPath), endpoint.sessionCookies),
    () => {
      throw new FetchError(1, redactUrl(setQueryParams(connection.baseUrl, connection.query)), budgetMessage(budgetMs), null);
    },
    budgetMs,
  );
}

async function detectIn(session: Session, endpoint: RestEndpoint, recordsPath: string): Promise<PaginationDetection> {
  const answers = new Map<string, JsonPage>();
  /** A page's answer, fetched once per distinct request. */
  const fetchJson = async (request: PageRequest): Promise<JsonPage> => {
    const key = keyOf(request);
    const known = answers.get(key);
    if (known !== undefined) return known;
    const page = await fetchPage(session, endpoint, request);
    if ('action' in page)
      throw pageError(
        session,
        request.pageNo,
        endpoint.method,
        page.shownUrl,
        `the service answered ${statusLine(page.status)}, which the endpoint's response actions say means no records here`,
        page.status,
      );
    answers.set(key, page);
    return page;
  };

  // Page 1 as the endpoint's settings request it (Page Number and Offset/Limit put their parameters in the
  // URL, where detection reads them), or as written when they cannot run.
  const firstRequest = configuredFirst(session, endpoint, recordsPath);
  const firstUrl = firstRequest.url;
  const body = endpoint.method === 'POST' ? (firstRequest.body ?? endpoint.body) : null;
  const first = await fetchJson(firstRequest);
  const proposal0 = proposePagination({
    url: firstUrl,
    method: endpoint.method,
    requestBody: body,
    headers: first.headers,
    body: first.body,
  });
  const { proposal, pages } = await follow(proposal0, firstUrl, body, session.origin, first, fetchJson);
  const checked = await walkConfigured(session, endpoint, recordsPath, fetchJson);
  const problems = checkPagination({
    configured: endpoint.pagination,
    configuredDataPath: endpoint.pagination.responseDataPath,
    proposal,
    firstBody: first.body,
    pages: checked,
  });
  const secrets = session.auth.secrets();
  const clean = (text: string): string => redactText(text, secrets);
  return {
    url: first.shownUrl,
    status: first.status,
    settings: proposal.settings,
    evidence: proposal.evidence.map(clean),
    notes: proposal.notes.map(clean),
    pages,
    problems: problems.map((p) => ({ ...p, message: clean(p.message), remedy: clean(p.remedy) })),
  };
}

/** The endpoint's first request under its own settings, or the URL as written when they cannot run. */
function configuredFirst(session: Session, endpoint: RestEndpoint, recordsPath: string): PageRequest {
  try {
    return paginatorFor(session, endpoint, recordsPath).paginator.first;
  } catch (err) {
    if (err instanceof FetchError) return { pageNo: 1, url: buildFirstUrl(session.connection, endpoint) };
    throw err;
  }
}

/** Follows the proposal for at most DETECT_FOLLOW_PAGES pages after the first, and confirms it with what they showed. */
async function follow(
  proposal: Proposal,
  firstUrl: string,
  body: string | null,
  origin: string,
  first: JsonPage,
  fetchJson: (request: PageRequest) => Promise<JsonPage>,
): Promise<{ proposal: Proposal; pages: SeenPage[] }> {
  const { settings } = proposal;
  const records = (page: JsonPage): readonly unknown[] | null => extractRecords(page.body, settings.responseDataPath);
  const firstRecords = records(first);
  const pages: SeenPage[] = [{ pageNo: 1, url: first.shownUrl, recordCount: firstRecords?.length ?? null }];
  const followed: FollowedPage[] = [];
  let ended: string | null = null;
  try {
    const paginator = createPaginator(settings, firstUrl, origin, body);
    let request = paginator.first;
    let step: NextStep = paginator.next(request, { body: first.body, records: firstRecords, headers: first.headers });
    for (let n = 0; ; n++) {
      if (step.kind === 'stop') ended = step.detail;
      if (step.kind === 'fail') ended = step.error;
      if (step.kind !== 'next' || n >= DETECT_FOLLOW_PAGES) break;
      request = step.request;
      const page = await fetchJson(request);
      const found = records(page);
      pages.push({ pageNo: request.pageNo, url: page.shownUrl, recordCount: found?.length ?? null });
      followed.push({ pageNo: request.pageNo, url: page.shownUrl, records: found });
      step = paginator.next(request, { body: page.body, records: found, headers: page.headers });
    }
  } catch (err) {
    // A later page that fails is evidence, not the probe's failure: page 1 was answered.
    if (!(err instanceof FetchError)) throw err;
    ended = `following the proposal failed: ${err.message}`;
  }
  return { proposal: confirmProposal(proposal, firstRecords, followed, ended), pages };
}

/** The endpoint's own settings over at most CHECK_PAGES pages: what each page counts, and what its paginator does next. */
async function walkConfigured(
  session: Session,
  endpoint: RestEndpoint,
  recordsPath: string,
  fetchJson: (request: PageRequest) => Promise<JsonPage>,
): Promise<CheckedPage[]> {
  const walked: CheckedPage[] = [];
  let paginator;
  let locator;
  try {
    ({ paginator, locator } = paginatorFor(session, endpoint, recordsPath));
  } catch (err) {
    if (err instanceof FetchError) return [{ pageNo: 1, counted: null, step: { kind: 'fail', error: err.message } }];
    throw err;
  }
  let request = paginator.first;
  for (;;) {
    let page: JsonPage;
    try {
      page = await fetchJson(request);
    } catch (err) {
      if (!(err instanceof FetchError)) throw err;
      walked.push({ pageNo: request.pageNo, counted: null, step: { kind: 'fail', error: err.message } });
      return walked;
    }
    const found = findRecords(locator, page.body);
    const step = paginator.next(request, pageResponse(locator, page.body, found, page.headers));
    walked.push({ pageNo: request.pageNo, counted: found.counted?.length ?? null, step });
    if (step.kind !== 'next' || walked.length >= CHECK_PAGES) return walked;
    request = step.request;
  }
}
