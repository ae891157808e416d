/**
 * `/metrics`: the Prometheus text of this process. What the hot paths count (core/metrics.ts) comes
 * from this thread's registry and, merged in, the job queue threads' (asked at the scrape); the
 * figures of the queue itself are read from the database at the scrape, so that on PostgreSQL every
 * process reports the same queue depth, oldest Pending age, entries, workers and alarms.
 *
 * Not public: the route needs the `metrics` permission (SUPER grants it), or the figures are served
 * without authentication on a separate address (IFW_METRICS_PORT, main/service.ts).
 */
import { AggregatorRegistry, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../core/clock.js';
import type { Metrics, MetricsJson } from '../core/metrics.js';
import { queueDepth } from '../bulk-import/page-queries.js';
import { listEntries } from '../job-queue/entries.js';
import { ENTRY_STATUSES, WORKER_STATUSES } from '../job-queue/model.js';
import { listWorkers } from '../job-queue/workers.js';
import type { RoutePlugin } from '../http/server.js';
import type { Db } from '../storage/db.js';
import { ALARM_KINDS, currentAlarms, type AlarmSettings } from './alarms.js';

export interface MetricsDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly alarms: AlarmSettings;
  /** The figures of the job queue threads of this process (none when it runs no workers). */
  readonly threads: () => Promise<readonly MetricsJson[]>;
}

/** Reads the database's figures into gauges of `registry` and answers the whole text at each call. */
export function createScrape(deps: MetricsDeps): () => Promise<{ contentType: string; text: string }> {
  const registers: Registry[] = [deps.metrics.registry];
  const depth = new Gauge({
    name: 'ifw_queue_requests',
    help: 'Bulk import requests waiting (Pending) or being imported (Processing), in the database.',
    labelNames: ['status'],
    registers,
  });
  const oldest = new Gauge({
    name: 'ifw_queue_oldest_pending_age_seconds',
    help: 'Age of the oldest Pending bulk import request (0 when none is Pending).',
    registers,
  });
  const entries = new Gauge({
    name: 'ifw_job_queue_entry_status',
    help: "1 for each job queue entry's current status, 0 for the others.",
    labelNames: ['entry', 'status'],
    registers,
  });
  const workers = new Gauge({ name: 'ifw_workers', help: 'Worker processes by status (Alive, Dead).', labelNames: ['status'], registers });
  const alarms = new Gauge({ name: 'ifw_alarms', help: 'Alarms that hold now, by kind.', labelNames: ['kind'], registers });

  async function readDatabase(): Promise<void> {
    const now = deps.clock();
    const [queue, entryList, workerList, alarmList] = await Promise.all([
      queueDepth(deps.db),
      listEntries(deps.db),
      listWorkers(deps.db, { now, deadMs: deps.alarms.workerDeadSeconds * 1000 }),
      currentAlarms(deps.db, now, deps.alarms),
    ]);
    depth.set({ status: 'Pending' }, queue.pending);
    depth.set({ status: 'Processing' }, queue.processing);
    oldest.set(queue.oldestPendingAt === null ? 0 : Math.max(0, (now.getTime() - Date.parse(queue.oldestPendingAt)) / 1000));
    entries.reset();
    for (const e of entryList) for (const status of ENTRY_STATUSES) entries.set({ entry: e.id, status }, e.status === status ? 1 : 0);
    for (const status of WORKER_STATUSES) workers.set({ status }, workerList.filter((w) => w.status === status).length);
    for (const kind of ALARM_KINDS) alarms.set({ kind }, alarmList.filter((a) => a.kind === kind).length);
  }

  return async () => {
    await readDatabase();
    const [own, threads] = await Promise.all([deps.metrics.registry.getMetricsAsJSON(), deps.threads()]);
    const merged = AggregatorRegistry.aggregate([own, ...threads]);
    return { contentType: merged.contentType, text: await merged.metrics() };
  };
}

export function metricsRoutes(scrape: () => Promise<{ contentType: string; text: string }>): RoutePlugin {
  return (app) => {
    app.get(
      '/metrics',
      {
        config: { permission: 'metrics' },
        schema: {
          summary: 'Prometheus metrics of this process and, read at the scrape, of the queue in the database',
          tags: ['Health'],
          // Prometheus's text format, documented in docs/operations.md; the OpenAPI document is the JSON API's.
          hide: true,
        },
      },
      async (_request, reply) => {
        const { contentType, text } = await scrape();
        return reply.type(contentType).send(text);
      },
    );
  };
}
