/**
 * Pagination settings of a REST API endpoint (spec section 2.3) as a tagged union, and what a
 * paginator decides after each page. Paginators are pure: (settings, previous request, response)
 * → next request or stop, with the reason.
 */
export const PAGINATION_TYPES = ['none', 'nextLink', 'pageNumber', 'offsetLimit'] as const;
export type PaginationType = (typeof PAGINATION_TYPES)[number];

interface Common {
  /** Safety limit against endless loops (spec default 100). */
  readonly maxPages: number;
  /** Records per page; for Next Link informational only; for Offset/Limit also the limit value. */
  readonly pageSize: number | null;
  /** Where the record array is in a response ('' = the root is the array). */
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
  | 'recordsNotCountable'; // Response Data Path unset or not an array: stops after page 1

export interface PageRequest {
  /** 1-based page number of this request. */
  readonly pageNo: number;
  /** The complete URL to call. */
  readonly url: string;
}

export type NextStep =
  | { readonly kind: 'next'; readonly request: PageRequest }
  | { readonly kind: 'stop'; readonly reason: StopReason; readonly warning?: string }
  | { readonly kind: 'fail'; readonly error: string };
