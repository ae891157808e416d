/**
 * REST API connections and endpoints: where the framework pulls data from. Secrets (passwords,
 * tokens, API keys, client secrets) are write-only everywhere: the API shows `…IsSet` flags, storage
 * holds them encrypted with IFW_SECRET_KEY.
 */
import type { PaginationSettings, StopReason } from '../pagination/types.js';
import type { IncrementalSettings } from './cursor-values.js';

export const AUTH_TYPES = ['none', 'basic', 'bearer', 'apiKey', 'oauth2ClientCredentials'] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

/** Authentication with its secrets resolved (decrypted): only inside the service, never in an answer or a log. */
export type ConnectionAuth =
  | { readonly type: 'none' }
  | { readonly type: 'basic'; readonly username: string; readonly password: string }
  | { readonly type: 'bearer'; readonly token: string }
  | { readonly type: 'apiKey'; readonly name: string; readonly in: 'header' | 'query'; readonly value: string }
  | {
      readonly type: 'oauth2ClientCredentials';
      readonly tokenUrl: string;
      readonly clientId: string;
      readonly clientSecret: string;
      readonly scope: string | null;
    };

export interface RetryPolicy {
  /** Retries after the first attempt for 429, 5xx and network errors. */
  readonly maxRetries: number;
  /** First backoff delay; doubles each retry, capped, with jitter; Retry-After wins when given. */
  readonly initialDelayMs: number;
}

/** A connection ready to use (secrets resolved). */
export interface RestConnection {
  readonly code: string;
  /** http or https; the origin credentials may be sent to. */
  readonly baseUrl: string;
  readonly auth: ConnectionAuth;
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
}

export const HTTP_METHODS = ['GET', 'POST'] as const;

/**
 * What an answer of a given HTTP status means for a run instead of failing it (response-actions.ts):
 * `stop`, no more records (the pages before it are imported); `skip`, this page has none (fetching
 * goes on with the next position).
 */
export const RESPONSE_ACTIONS = ['stop', 'skip'] as const;
export type ResponseActionKind = (typeof RESPONSE_ACTIONS)[number];
export interface ResponseAction {
  readonly status: number;
  readonly action: ResponseActionKind;
}

/** Why a fetch stopped: the paginator's reasons, or a response action's stop. */
export type RunStopReason = StopReason | 'responseAction';
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface RestEndpoint {
  readonly code: string;
  readonly connectionCode: string;
  /** Relative to the connection's base URL (or absolute on the same origin). */
  readonly path: string;
  readonly method: HttpMethod;
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  /** Request body for POST (a JSON text), sent with every page request. */
  readonly body: string | null;
  /** The integration (Sorting Order) records are imported through. */
  readonly integrationSortingOrder: number;
  readonly pagination: PaginationSettings;
  /** Run on a schedule every N seconds; null: on demand only. */
  readonly scheduleSeconds: number | null;
  /** Statuses that stop fetching or skip a page instead of failing the run; [] by default. */
  readonly responseActions: readonly ResponseAction[];
  /** A cookie jar per run, for the connection's origin only (cookies.ts); false by default. */
  readonly sessionCookies: boolean;
  /** The cursor field bookmark (cursor-values.ts); null or absent: the endpoint has none. */
  readonly incremental?: IncrementalSettings | null;
  /**
   * The bookmark as stored when the endpoint was loaded for a run (its template variables rendered
   * from it, templates.ts); the run moves it only if it is still this value. Absent: not loaded from storage.
   */
  readonly cursorAtLoad?: string | null;
}

/** One fetched page, as the fetch loop hands it to whoever stages it. */
export interface FetchedPage {
  readonly pageNo: number;
  /** The URL called, with secrets (query API keys, userinfo, token-like parameters) redacted. */
  readonly url: string;
  /** The parsed JSON page. */
  readonly body: unknown;
  /**
   * The page's records as a run imports them (page-records.ts: the integration's records path, else
   * Response Data Path, else the root), or null when that setting finds no array.
   */
  readonly records: readonly unknown[] | null;
  /** Why `records` is null, naming the setting that was read (secrets redacted); null when there are records. */
  readonly whyNoRecords: string | null;
}

/** How a completed fetch ended. */
export interface FetchSummary {
  readonly pagesFetched: number;
  /** Records pagination counted over all pages (page-records.ts); null when it found no array on some page. */
  readonly recordCount: number | null;
  readonly stopReason: RunStopReason;
  /** Why it stopped, as a sentence for the run log (e.g. "page 3 has 12 records, fewer than Page Size 50: the last page"). */
  readonly stopDetail: string;
  /** Distinct warnings, e.g. "Max Pages reached (100): the API has more pages; raise Max Pages or Page Size". */
  readonly warnings: readonly string[];
}
