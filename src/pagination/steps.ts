/**
 * What every paginator shares: what it is asked (the previous request and its response), what it
 * answers (the next request, stop with the reason, or fail), its decision function, and the Max Pages
 * stop. Paginators are pure: (settings, previous request, response) → next request or stop.
 */

/** Why a run stopped fetching. */
export type StopReason =
  | 'singlePage' // Pagination Type None: exactly one call
  | 'noNextLink' // Next Link absent, null or ""
  | 'shortPage' // fewer records than Page Size
  | 'maxPages' // Max Pages reached (a warning: records may be missing)
  | 'recordsNotCountable' // no record array to count on the page: stops there
  | 'noCursor' // Cursor: the page has no cursor for the next one
  | 'hasMoreFalse' // stop condition: Has More JSON Path is false
  | 'totalReached' // stop condition: the records fetched reach Total Count JSON Path
  | 'emptyPage'; // stop condition: a page without records

/** Every stop reason, for the API descriptions. */
export const STOP_REASONS: readonly StopReason[] = [
  'singlePage',
  'noNextLink',
  'shortPage',
  'maxPages',
  'recordsNotCountable',
  'noCursor',
  'hasMoreFalse',
  'totalReached',
  'emptyPage',
];

export interface PageRequest {
  /** 1-based page number of this request. */
  readonly pageNo: number;
  /** The complete URL to call (without credentials: those are added when the request is sent). */
  readonly url: string;
  /** Headers the paginator sets (a cursor, a page number), over the endpoint's; absent: none. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The JSON body to send instead of the endpoint's (a cursor or page number set in it); absent: the endpoint's. */
  readonly body?: string;
  /** The cursor this request carries (Cursor pagination), for loop messages. */
  readonly cursor?: string;
}

/** Response headers as Node gives them: lower-case names, a repeated header as an array. */
export type ResponseHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** What a paginator looks at after a page. */
export interface PageResponse {
  /** The parsed JSON body. */
  readonly body: unknown;
  /** The records to count (by default those at Response Data Path), or null when there is no such array. */
  readonly records: readonly unknown[] | null;
  /**
   * Why `records` is null, as a sentence naming the setting that was read; asked only when pagination
   * needs it. Default: why Response Data Path finds no array (records.ts explainNoRecords).
   */
  readonly whyNoRecords?: () => string;
  /** The response headers (Link Header, a cursor in a header); absent: none. */
  readonly headers?: ResponseHeaders;
}

export type NextStep =
  /** `warning`: something the run should report although fetching goes on (e.g. a page larger than Page Size). */
  | { readonly kind: 'next'; readonly request: PageRequest; readonly warning?: string }
  /** `detail`: a sentence for the run log saying why it stopped; `warning` when records may be missing. */
  | { readonly kind: 'stop'; readonly reason: StopReason; readonly detail: string; readonly warning?: string }
  | { readonly kind: 'fail'; readonly error: string };

/** A small state machine: the first request, then one decision per fetched page. */
export interface Paginator {
  readonly first: PageRequest;
  next(previous: PageRequest, response: PageResponse): NextStep;
}

/** A strategy decides from the previous request and its response alone; history (loops) is the paginator's. */
export type Strategy = (previous: PageRequest, response: PageResponse) => NextStep;

/** What a pagination type's paginator factory returns: its first request and its strategy. */
export interface Start {
  readonly first: PageRequest;
  readonly strategy: Strategy;
}

/** The warning wording is part of the contract: users and docs search for it. */
export const maxPagesWarning = (maxPages: number): string =>
  `Max Pages reached (${maxPages}): the API has more pages; raise Max Pages or Page Size`;

export function maxPagesStop(maxPages: number, evidence: string): NextStep {
  return {
    kind: 'stop',
    reason: 'maxPages',
    detail: `stopped at Max Pages (${maxPages}) although ${evidence}`,
    warning: maxPagesWarning(maxPages),
  };
}
