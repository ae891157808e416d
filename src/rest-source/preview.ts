/**
 * "Preview first page": what page 1 of an endpoint looks like to a run. The page is fetched with the
 * run's request path, its records are found exactly as a run finds them (page-records.ts: the
 * integration's records path, else Response Data Path, else the root), the first few go through the
 * integration's mapping and validation (mapped rows, or each record's errors in a bulk import's
 * words), and the paginator says what it would do next. Nothing is written.
 */
import type { StopReason } from '../pagination/types.js';
import { mapSample, type DryRunIntegration, type DryRunRow } from '../table-writer/dry-run.js';
import { fetchJsonPage, pageError, pageResponse, paginatorFor, withSession, type FetchOptions } from './fetch-pages.js';
import type { RestConnection, RestEndpoint } from './model.js';
import { findRecords } from './page-records.js';
import { FetchError } from './http-client.js';
import { budgetMessage, forProbe, PROBE_BUDGET_MS, withinBudget } from './probe.js';
import { redactText, redactUrl } from './redact.js';
import { setQueryParams } from '../pagination/url.js';

/** What pagination would do after page 1. */
export type PreviewNext =
  | { readonly kind: 'next'; readonly url: string; readonly warning?: string }
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
export function previewFirstPage(
  connection: RestConnection,
  endpoint: RestEndpoint,
  integration: PreviewIntegration | undefined,
  options: FetchOptions = {},
  budgetMs = PROBE_BUDGET_MS,
): Promise<PagePreview> {
  // A probe answers within its budget (probe.ts): at most one retry, and no request longer than it.
  return withinBudget(
    options,
    (budgeted) => previewOnce(forProbe(connection), endpoint, integration, budgeted),
    () => {
      throw new FetchError(1, redactUrl(setQueryParams(connection.baseUrl, connection.query)), budgetMessage(budgetMs), null);
    },
    budgetMs,
  );
}

function previewOnce(
  connection: RestConnection,
  endpoint: RestEndpoint,
  integration: PreviewIntegration | undefined,
  options: FetchOptions,
): Promise<PagePreview> {
  return withSession(connection, options, async (session) => {
    const { paginator, locator } = paginatorFor(session, endpoint, integration?.recordsPath ?? '');
    const page = await fetchJsonPage(session, endpoint, paginator.first);
    const found = findRecords(locator, page.body);
    const step = paginator.next(paginator.first, pageResponse(locator, page.body, found));
    const { records } = found;
    if (records === null) throw pageError(session, 1, endpoint.method, page.shownUrl, locator.imported.explain(page.body), page.status);
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
    const sample = records.slice(0, PREVIEW_RECORDS);
    let mapped: Pick<PagePreview, 'rows' | 'integrationError'> = {};
    if (integration !== undefined) {
      const { mapping } = integration;
      mapped =
        'error' in mapping ? { integrationError: mapping.error } : { rows: await mapSample(mapping, integration.relationExists, sample) };
    }
    return {
      url: page.shownUrl,
      status: page.status,
      recordsFoundBy: locator.foundBy,
      recordCount: records.length,
      records: sample,
      ...mapped,
      next,
    };
  });
}
