/**
 * What a run needs from the REST side: the endpoint and its connection (secrets resolved) and the
 * page fetch loop. `sources.ts` gives the real ones; the seam keeps the run orchestration readable
 * without the details of secrets and HTTP.
 */
import type { Db } from '../storage/db.js';
import type { FetchedPage, FetchSummary, RestConnection, RestEndpoint } from '../rest-source/model.js';

export interface ImportSources {
  /** Throws (404 AppError) for an unknown endpoint. */
  loadEndpoint(db: Db, code: string): Promise<RestEndpoint>;
  /** The connection with its secrets opened. */
  loadConnection(db: Db, code: string): Promise<RestConnection>;
  /**
   * Fetches every page, handing each to `onPage` (its records found with `recordsPath`, the integration's,
   * as rest-source/page-records.ts says); throws when a page fails.
   */
  fetchPages(
    connection: RestConnection,
    endpoint: RestEndpoint,
    onPage: (page: FetchedPage) => void | Promise<void>,
    options?: { readonly signal?: AbortSignal; readonly recordsPath?: string; readonly onRetry?: (status: string) => void },
  ): Promise<FetchSummary>;
  /** The run's error message for an error thrown by fetchPages (page, URL and why); undefined when it is not a fetch failure. */
  describeFetchError(err: unknown): string | undefined;
}
