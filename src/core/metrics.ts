/**
 * The service's Prometheus metrics (prom-client), defined once: what the hot paths count. Each thread
 * that does work has its own `Metrics` (a registry of its own, never prom-client's global one); the
 * HTTP thread merges the job queue threads' figures into its own at a scrape (src/dashboard/metrics.ts).
 * Counting is a counter's `inc` or a histogram's `observe`: no other work on the hot paths.
 *
 * The figures of the queue itself (depth, oldest Pending, entries, live workers) are not counted here:
 * they are read from the database at each scrape, so that every process reports the same.
 */
import { Counter, Histogram, Registry } from 'prom-client';

/** Seconds: from 5 ms to 10 minutes. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** A registry's figures as data (`getMetricsAsJSON`), as a worker thread sends them to the HTTP thread. */
export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

export interface Metrics {
  readonly registry: Registry;
  /** Bulk import requests accepted (202), by integration (its sorting order). */
  readonly requestsSubmitted: Counter<'integration'>;
  /** Bulk import requests that ended Completed, by integration. */
  readonly requestsCompleted: Counter<'integration'>;
  /** Bulk import requests that ended Failed, by integration. */
  readonly requestsFailed: Counter<'integration'>;
  /** Records written into target tables (inserted + updated), by source: `bulk` (requests) or `rest` (import runs). */
  readonly recordsWritten: Counter<'source'>;
  /** How long a request's processing took (claim to end), by integration. */
  readonly processingSeconds: Histogram<'integration'>;
  /** From submission to Completed, by integration. */
  readonly submitToCompletedSeconds: Histogram<'integration'>;
  /** REST import runs that ended, by outcome (`completed`, `failed`). */
  readonly importRuns: Counter<'outcome'>;
  /** Pages fetched from remote APIs by import runs. */
  readonly pagesFetched: Counter;
  /** Requests to remote APIs that were retried, by the status that caused the retry (`network` for no answer). */
  readonly remoteRetries: Counter<'status'>;
  /** HTTP requests answered, by route (its pattern) and status code. */
  readonly httpRequests: Counter<'route' | 'status'>;
  /** Webhook delivery attempts, by outcome: `delivered`, `retrying` (failed, tried again later), `failed` (for good). */
  readonly webhookDeliveries: Counter<'outcome'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    requestsSubmitted: new Counter({
      name: 'ifw_requests_submitted_total',
      help: 'Bulk import requests accepted, by integration (sorting order).',
      labelNames: ['integration'],
      registers,
    }),
    requestsCompleted: new Counter({
      name: 'ifw_requests_completed_total',
      help: 'Bulk import requests Completed, by integration.',
      labelNames: ['integration'],
      registers,
    }),
    requestsFailed: new Counter({
      name: 'ifw_requests_failed_total',
      help: 'Bulk import requests Failed, by integration.',
      labelNames: ['integration'],
      registers,
    }),
    recordsWritten: new Counter({
      name: 'ifw_records_written_total',
      help: 'Records written into target tables (inserted + updated), by source (bulk, rest).',
      labelNames: ['source'],
      registers,
    }),
    processingSeconds: new Histogram({
      name: 'ifw_request_processing_seconds',
      help: 'Processing time of a bulk import request, claim to end, by integration.',
      labelNames: ['integration'],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    submitToCompletedSeconds: new Histogram({
      name: 'ifw_request_submit_to_completed_seconds',
      help: 'Time from submission to Completed of a bulk import request, by integration.',
      labelNames: ['integration'],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    importRuns: new Counter({
      name: 'ifw_import_runs_total',
      help: 'REST import runs ended, by outcome (completed, failed).',
      labelNames: ['outcome'],
      registers,
    }),
    pagesFetched: new Counter({ name: 'ifw_pages_fetched_total', help: 'Pages fetched from remote APIs by import runs.', registers }),
    remoteRetries: new Counter({
      name: 'ifw_remote_retries_total',
      help: 'Requests to remote APIs retried, by the status that caused the retry (network: no answer).',
      labelNames: ['status'],
      registers,
    }),
    httpRequests: new Counter({
      name: 'ifw_http_requests_total',
      help: 'HTTP requests answered, by route pattern and status code.',
      labelNames: ['route', 'status'],
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'ifw_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome (delivered, retrying, failed).',
      labelNames: ['outcome'],
      registers,
    }),
  };
}
