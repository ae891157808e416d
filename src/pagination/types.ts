/**
 * Pagination settings of a REST API endpoint (spec section 2.3) as a tagged union, and what a
 * paginator decides after each page. Paginators are pure: (settings, previous request, response)
 * → next request or stop, with the reason.
 */
export const PAGINATION_TYPES = ['none', 'nextLink', 'pageNumber', 'offsetLimit'] as const;
export type PaginationType = (typeof PAGINATION_TYPES)[number];

/** Spec 4.4: "Max Pages: default 100". */
export const DEFAULT_MAX_PAGES = 100;

interface Common {
  /** Safety limit against endless loops (spec default 100). */
  readonly maxPages: number;
  /** Records per page; for Next Link informational only; for Offset/Limit also the limit value. */
  readonly pageSize: number | null;
  /**
   * Where the record array is in a response ('' = blank: the root is the array). What pagination
   * counts is handed to it with each response (PageResponse.records), found by the caller.
   */
  readonly responseDataPath: string;
}

export type PaginationSettings =
  | (Common & { readonly type: 'none' })
  | (Common & { readonly type: 'nextLink'; readonly nextLinkPath: string; readonly allowCrossOrigin: boolean })
  | (Common & { readonly type: 'pageNumber'; readonly pageParam: string; readonly pageSize: number })
  | (Common & { readonly type: 'offsetLimit'; readonly offsetParam: string; readonly limitParam: string; readonly pageSize: number });

/** Why a run stopped fetching. */
export type StopReason =
  | 'singlePage' // Pagination Type None: exactly one call
  | 'noNextLink' // Next Link absent, null or ""
  | 'shortPage' // fewer records than Page Size
  | 'maxPages' // Max Pages reached (a warning: records may be missing)
  | 'recordsNotCountable'; // no record array to count on the page: stops there

export interface PageRequest {
  /** 1-based page number of this request. */
  readonly pageNo: number;
  /** The complete URL to call (without credentials: those are added when the request is sent). */
  readonly url: string;
}

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
