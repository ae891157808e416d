/**
 * `/metrics` after a known sequence of work, on SQLite with the job queue on its worker threads (their
 * counters merged into the scrape): requests submitted, completed and failed by integration, records
 * written, the two histograms, the queue read from the database, the live workers, the HTTP requests
 * by route; and it is not reachable without the `metrics` permission.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, startTestService, type TestService } from '../helpers/service.js';
import { movableClock } from '../helpers/clock.js';
import { until } from '../helpers/until.js';

let t: TestService;
/** The service's clock (the ages it reports); the workers on their threads keep the system clock. */
const clock = movableClock();

beforeAll(async () => {
  t = await startTestService({ workers: true, clock });
});
afterAll(async () => t.cleanup());

const customers = (from: number, n: number) =>
  JSON.stringify(Array.from({ length: n }, (_, i) => ({ no: `M${from + i}`, name: `Customer ${from + i}` })));

/** The value of one sample of the Prometheus text, e.g. `ifw_requests_completed_total{integration="10"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const scrape = async (): Promise<string> => {
  const res = await t.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.body;
};

describe('/metrics', () => {
  it('counts a known sequence of work', async () => {
    const ids: string[] = [];
    for (const payload of [customers(1, 5), customers(10, 7), customers(20, 1), JSON.stringify([{ no: 'BAD' }])]) {
      const res = await t.inject({
        method: 'POST',
        url: `${API}/bulkImportRequests`,
        payload: { integrationSortingOrder: 10, payload },
      });
      expect(res.statusCode).toBe(202);
      ids.push(res.json().requestId as string);
    }
    await until(
      async () => {
        const rows = await t.service.db.kysely.selectFrom('ifw_bulk_import_request').select('status').execute();
        return rows.every((r) => r.status === 'Completed' || r.status === 'Failed');
      },
      { what: 'every request Completed or Failed' },
    );

    const text = await scrape();
    expect(sample(text, 'ifw_requests_submitted_total{integration="10"}')).toBe(4);
    expect(sample(text, 'ifw_requests_completed_total{integration="10"}')).toBe(3);
    expect(sample(text, 'ifw_requests_failed_total{integration="10"}')).toBe(1);
    expect(sample(text, 'ifw_records_written_total{source="bulk"}')).toBe(13);
    expect(sample(text, 'ifw_request_processing_seconds_count{integration="10"}')).toBe(4);
    expect(sample(text, 'ifw_request_submit_to_completed_seconds_count{integration="10"}')).toBe(3);
    expect(sample(text, 'ifw_request_submit_to_completed_seconds_bucket{le="+Inf",integration="10"}')).toBe(3);
    expect(sample(text, 'ifw_queue_requests{status="Pending"}')).toBe(0);
    expect(sample(text, 'ifw_queue_requests{status="Processing"}')).toBe(0);
    expect(sample(text, 'ifw_queue_oldest_pending_age_seconds')).toBe(0);
    expect(sample(text, 'ifw_workers{status="Alive"}')).toBe(1);
    expect(sample(text, 'ifw_workers{status="Dead"}')).toBe(0);
    expect(sample(text, 'ifw_job_queue_entry_status{entry="retention-cleanup",status="Error"}')).toBe(0);
    expect(sample(text, 'ifw_alarms{kind="processorNotRunning"}')).toBe(0);
    expect(sample(text, 'ifw_import_runs_total{outcome="completed"}')).toBeUndefined();
    expect(sample(text, 'ifw_http_requests_total{route="/api/vendor/integrationFramework/v1.0/bulkImportRequests",status="202"}')).toBe(4);

    // A Pending request the workers cannot take (the processor On Hold): the queue figures are the database's.
    await t.inject({ method: 'POST', url: `${API}/jobQueueEntries('bulk-import-processor')/Microsoft.NAV.setOnHold` });
    const held = await t.inject({
      method: 'POST',
      url: `${API}/bulkImportRequests`,
      payload: { integrationSortingOrder: 10, payload: customers(30, 1) },
    });
    expect(held.statusCode).toBe(202);
    clock.advance(90_000);
    const later = await scrape();
    expect(sample(later, 'ifw_queue_requests{status="Pending"}')).toBe(1);
    expect(sample(later, 'ifw_queue_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(90);
    expect(sample(later, 'ifw_job_queue_entry_status{entry="bulk-import-processor",status="On Hold"}')).toBe(1);
    expect(sample(later, 'ifw_requests_submitted_total{integration="10"}')).toBe(5);
    expect(sample(later, 'ifw_http_requests_total{route="/metrics",status="200"}')).toBe(1);
    await t.inject({ method: 'POST', url: `${API}/jobQueueEntries('bulk-import-processor')/Microsoft.NAV.setReady` });
  });

  it('is not reachable without the metrics permission: 401 without credentials, 403 for a set that does not grant it', async () => {
    const anonymous = await t.service.app.inject({ method: 'GET', url: '/metrics' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.body).not.toContain('ifw_');
    for (const set of ['VENDOR IF ALL', 'VENDOR IF STANDARD'] as const) {
      const res = await t.service.app.inject({ method: 'GET', url: '/metrics', headers: await t.headersFor(set) });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.message).toMatch(/metrics/);
    }
  });
});
