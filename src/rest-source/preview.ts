/**
 * "Preview first page": what page 1 of an endpoint looks like to a run. The page is fetched with the
 * run's request path, its records are found exactly as a run finds them (page-records.ts: the
 * integration's records path, else Response Data Path, else the root), they are imported as a run
 * imports them, in a transaction that is rolled back (table-writer/dry-run.ts: the outcome, with a
 * run's messages), and the paginator says what it would do next. A preview that would stop after
 * page 1 although the API may have more, and a source path that matches no record, are warnings with
 * the likely fix. Nothing is written.
 */
import { compileLookup, propertiesHint, type StopReason } from '../pagination/index.js';
import type { ImportOutcome } from '../table-writer/model.js';
import { describeDryRun, type DryRunIntegration, type DryRunRow } from '../table-writer/dry-run.js';
import { fetchPage, pageError, pageResponse, paginatorFor, withSession, type FetchOptions, type Session } from './fetch-pages.js';
import type { RestConnection, RestEndpoint } from './model.js';
import { findRecords, type PageRecordsLocator } from './page-records.js';
import { RecordOrigins } from './record-origins.js';
import { FetchError, statusLine } from './http-client.js';
import { budgetMessage, forProbe, PROBE_BUDGET_MS, withinBudget } from './probe.js';
import { redactText, redactUrl } from './redact.js';
import { setQueryParams } from '../pagination/url.js';

/** What pagination would do after page 1. */
export type PreviewNext =
  | { readonly kind: 'next'; readonly url: string; readonly cursor?: string; readonly warning?: string }
  | { readonly kind: 'stop'; readonly reason: StopReason; readonly detail: string; readonly warning?: string }
  | { readonly kind: 'fail'; readonly error: string };

/** One of the first records as the integration would take it: its row (target field → value), or its errors. */
export type PreviewRow = DryRunRow;
/** The integration the preview maps records with. */
export type PreviewIntegration = DryRunIntegration;

export interface PagePreview {
  /** The URL of page 1 as sent, secrets redacted. */
  readonly url: string;
  readonly status: number;
  /** Which setting found the records (page-records.ts `foundBy`). */
  readonly recordsFoundBy: string;
  /** The records page 1 holds, as a run would import them. */
  readonly recordCount: number;
  /** The first PREVIEW_RECORDS records. */
  readonly records: readonly unknown[];
  /** Those records through the integration; absent when no integration was given or it cannot run (`integrationError`). */
  readonly rows?: readonly PreviewRow[];
  /**
   * What importing page 1's records would do under the integration's settings: the real import, rolled
   * back, its messages worded as a run words them (`record 3 (page 1, record 3): …`). Absent as `rows`.
   */
  readonly outcome?: ImportOutcome;
  /** Amber warnings with their likely fix: pagination that would stop after page 1 too early, source paths that match nothing. */
  readonly warnings: readonly string[];
  /** Why the integration cannot run (the message a run fails with at its start). */
  readonly integrationError?: string;
  readonly next: PreviewNext;
}

export const PREVIEW_RECORDS = 5;

/**
 * Fetches page 1 only and reports what a run would make of it; throws FetchError when page 1 fails,
 * also when its records are not where the settings say (a run fails on that page the same way).
 * `integration`: the endpoint's; undefined for an unsaved endpoint that names none (the records path
 * then counts as blank, and no rows are shown).
 */
export async function previewFirstPage(
  connection: RestConnection,
  endpoint: RestEndpoint,
  integration: PreviewIntegration | undefined,
  options: FetchOptions = {},
  budgetMs = PROBE_BUDGET_MS,
): Promise<PagePreview> {
  // A probe answers within its budget (probe.ts): at most one retry, and no request longer than it.
  const page = await withinBudget(
    options,
    (budgeted) => fetchFirstPage(forProbe(connection), endpoint, integration?.recordsPath ?? '', budgeted),
    () => {
      throw new FetchError(1, redactUrl(setQueryParams(connection.baseUrl, connection.query)), budgetMessage(budgetMs), null);
    },
    budgetMs,
  );
  const { records, next } = page;
  const warnings = [...paginationWarnings(endpoint, page)];
  let mapped: Pick<PagePreview, 'rows' | 'integrationError' | 'outcome'> = {};
  if (integration !== undefined) {
    const { mapping } = integration;
    if ('error' in mapping) {
      mapped = { integrationError: mapping.error };
    } else {
      const origins = new RecordOrigins();
      origins.add(1, records.length);
      const outcome = origins.locatedOutcome(await integration.importRecords(records));
      const dryRun = describeDryRun(integration, mapping, records, outcome, PREVIEW_RECORDS);
      warnings.push(...dryRun.warnings);
      mapped = { rows: dryRun.rows, outcome };
    }
  }
  return {
    url: page.url,
    status: page.status,
    recordsFoundBy: page.recordsFoundBy,
    recordCount: records.length,
    records: records.slice(0, PREVIEW_RECORDS),
    ...mapped,
    next,
    warnings,
  };
}

/** Page 1 as a run sees it: its records (all of them) and the paginator's next step. */
interface FirstPage {
  readonly url: string;
  readonly status: number;
  readonly body: unknown;
  readonly recordsFoundBy: string;
  readonly records: readonly unknown[];
  readonly next: PreviewNext;
}

/**
 * Which setting found the records, in words that do not claim what page 1 disproves: when Response
 * Data Path finds no array to count, it is not said to count the records.
 */
function foundBySentence(locator: PageRecordsLocator, counted: readonly unknown[] | null): string {
  if (counted !== null || locator.shared) return locator.foundBy;
  return `${locator.imported.name}; ${locator.counted.name} finds no record array on page 1, so pagination cannot count records`;
}

/**
 * The preview's amber warnings about pagination: the paginator's own (records not countable, a page
 * size that does not fit, a next link elsewhere in the response), and for a Next Link JSON Path that
 * finds nothing on page 1, the spec's remedy ("fix the path"), since page 1 may only look like the last.
 */
function paginationWarnings(endpoint: RestEndpoint, page: FirstPage): string[] {
  const { next } = page;
  if (next.kind === 'fail') return [];
  if (next.warning !== undefined)
    return [next.kind === 'stop' ? `Pagination would stop after page 1. ${next.warning}.` : `${next.warning}.`];
  const { pagination } = endpoint;
  if (next.kind === 'stop' && pagination.type === 'nextLink' && compileLookup(pagination.nextLinkPath)(page.body).kind === 'none') {
    return [
      `Pagination would stop after page 1: Next Link JSON Path "${pagination.nextLinkPath}" finds nothing in the response${propertiesHint(page.body)}. ` +
        'If the API has more pages, the path is wrong: fix the path.',
    ];
  }
  return [];
}

function fetchFirstPage(
  connection: RestConnection,
  endpoint: RestEndpoint,
  recordsPath: string,
  options: FetchOptions,
): Promise<FirstPage> {
  return withSession(connection, options, async (session) => firstPageOf(session, endpoint, recordsPath), endpoint.sessionCookies);
}

async function firstPageOf(session: Session, endpoint: RestEndpoint, recordsPath: string): Promise<FirstPage> {
  const { paginator, locator } = paginatorFor(session, endpoint, recordsPath);
  const page = await fetchPage(session, endpoint, paginator.first);
  if ('action' in page) {
    const means =
      page.action.action === 'stop'
        ? 'means no more records: a run would complete without records'
        : 'means this page has no records: a run would go on with page 2, which a preview does not fetch';
    const why = `the service answered ${statusLine(page.status)}, which the endpoint's response actions say ${means}`;
    throw pageError(session, 1, endpoint.method, page.shownUrl, why, page.status);
  }
  const found = findRecords(locator, page.body);
  const step = paginator.next(paginator.first, pageResponse(locator, page.body, found, page.headers));
  const { records } = found;
  if (records === null) throw pageError(session, 1, endpoint.method, page.shownUrl, locator.imported.explain(page.body), page.status);
  const secrets = session.auth.secrets();
  let next: PreviewNext;
  switch (step.kind) {
    case 'next':
      next = {
        kind: 'next',
        url: redactUrl(step.request.url, secrets.params),
        ...(step.request.cursor === undefined ? {} : { cursor: redactText(step.request.cursor, secrets) }),
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
    body: page.body,
    recordsFoundBy: foundBySentence(locator, found.counted),
    records,
    next,
  };
}
