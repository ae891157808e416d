/** The real ImportSources: endpoints and connections from storage, pages from the undici fetch loop. */
import { fetchPages, FetchError } from '../rest-source/fetch-pages.js';
import type { SecretBox } from '../rest-source/secrets.js';
import type { OutboundPolicy } from '../rest-source/outbound-policy.js';
import { loadConnection, loadEndpoint } from '../rest-source/store.js';
import type { ImportSources } from './sources-model.js';

export type { ImportSources } from './sources-model.js';

/**
 * `box` is asked for only when a connection is loaded, so a missing key fails that run, not the queue.
 * `outbound`: where runs may connect (rest-source/outbound-policy.ts).
 */
export function defaultImportSources(box: () => SecretBox, outbound: OutboundPolicy): ImportSources {
  return {
    loadEndpoint,
    loadConnection: (db, code) => loadConnection(db, code, box()),
    fetchPages: (connection, endpoint, onPage, { signal, recordsPath, onRetry } = {}) =>
      fetchPages(connection, endpoint, onPage, {
        outbound,
        ...(onRetry === undefined ? {} : { onRetry }),
        ...(signal === undefined ? {} : { signal }),
        ...(recordsPath === undefined ? {} : { recordsPath }),
      }),
    // FetchError's message already names the page, the method and the redacted URL.
    describeFetchError: (err) => (err instanceof FetchError ? err.message : undefined),
  };
}
