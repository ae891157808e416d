/**
 * The console's dashboard at `/`: requests and import runs per status over the last 24 hours, requests
 * and records per minute, and the job queue's health with the spec's troubleshooting hint. The
 * panel refreshes itself every few seconds (a live region).
 */
import type { Clock } from '../core/clock.js';
import type { ConsoleContext, ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { liveRegion, statusBadge, table, time } from '../console/widgets.js';
import { REQUEST_STATUSES } from '../bulk-import/model.js';
import { countRequestsByStatus, recordsPerMinute, requestsPerMinute } from '../bulk-import/page-queries.js';
import { COMPLETED_WITH_WARNINGS, RUN_STATUSES } from '../import-runs/model.js';
import { countRunsByStatus, countRunsWithWarnings } from '../import-runs/page-queries.js';
import { listEntries } from '../job-queue/entries.js';
import type { Database } from '../storage/database.js';
import type { Db } from '../storage/db.js';
import { minuteKeys, perMinuteChart } from './chart.js';

export interface DashboardDeps {
  readonly db: Database;
  readonly clock: Clock;
}

const DAY_MS = 24 * 60 * 60_000;
const CHART_MINUTES = 60;

function counts(title: string, statuses: readonly string[], byStatus: Map<string, number>, link?: (status: string) => string): Html {
  return html`<section aria-label="${title}">
    <h2>${title}</h2>
    <div class="cards">
      ${statuses.map(
        (s) =>
          html`<div class="card">
            <div class="n">${(byStatus.get(s) ?? 0).toLocaleString('en')}</div>
            <div>${link === undefined ? statusBadge(s) : html`<a href="${link(s)}">${s}</a>`}</div>
          </div>`,
      )}
    </div>
  </section>`;
}

async function panel(db: Db, database: Database, now: Date, ctx: ConsoleContext): Promise<Html> {
  const since = new Date(now.getTime() - DAY_MS).toISOString();
  const chartSince = new Date(now.getTime() - CHART_MINUTES * 60_000).toISOString().slice(0, 16);
  const keys = minuteKeys(now, CHART_MINUTES);
  const entries = await listEntries(database);
  const troubled = entries.filter((e) => e.status === 'On Hold' || e.status === 'Error');
  const parts: Html[] = [];
  if (troubled.length > 0) {
    parts.push(
      html`<div class="warning" role="alert">
        <strong>Job queue needs attention.</strong>
        <ul>
          ${troubled.map((e) => html`<li>${e.description} is ${statusBadge(e.status)}${e.lastError === '' ? '' : html`: ${e.lastError}`}</li>`)}
        </ul>
        <p>
          Symptom: a request stays Pending a long time. Cause: the job queue processor is not running. Remedy: check the job queue
          entries${ctx.can('jobQueue') ? html` (<a href="/job-queue">Job Queue Entries</a>)` : ''} and set them Ready.
        </p>
      </div>`,
    );
  }
  if (ctx.can('bulkImport')) {
    const [byStatus, perMinute, records] = await Promise.all([
      countRequestsByStatus(db, since),
      requestsPerMinute(db, chartSince),
      recordsPerMinute(db, chartSince),
    ]);
    parts.push(counts('Bulk import requests, last 24 hours', REQUEST_STATUSES, byStatus, (s) => path(['requests'], { status: s })));
    parts.push(
      html`<section aria-label="Throughput">
        <h2>Throughput</h2>
        ${perMinuteChart('Requests submitted', keys, { label: 'requests', color: '#0b5cad', points: perMinute })}
        ${perMinuteChart('Records imported', keys, { label: 'records', color: '#1a7f37', points: records })}
      </section>`,
    );
  }
  const [runs, withWarnings] = await Promise.all([countRunsByStatus(db, since), countRunsWithWarnings(db, since)]);
  // Of the Completed runs, those that stopped short: amber, and a link to the runs to look at.
  runs.set(COMPLETED_WITH_WARNINGS, withWarnings);
  const runStatuses = RUN_STATUSES.flatMap((s) => (s === 'Completed' ? [s, COMPLETED_WITH_WARNINGS] : [s]));
  parts.push(counts('REST import runs, last 24 hours', runStatuses, runs));
  parts.push(
    html`<section aria-label="Job queue">
      <h2>Job queue</h2>
      ${table({
        rows: entries,
        columns: [
          { header: 'Entry', cell: (e) => e.description },
          { header: 'Status', cell: (e) => statusBadge(e.status) },
          { header: 'Last run', cell: (e) => time(e.lastRunAt) },
          { header: 'Next run', cell: (e) => time(e.nextRunAt) },
          { header: 'Last error', cell: (e) => e.lastError },
        ],
      })}
    </section>`,
  );
  return liveRegion(
    { id: 'dashboard', url: '/' },
    html`<p class="muted">Updated ${time(now.toISOString())}</p>
      ${parts}`,
  );
}

export function dashboardPages(deps: DashboardDeps): ConsolePages {
  return (router) => {
    router.section({ label: 'Dashboard', href: '/', permission: 'read', order: 10 });
    router.get('/', 'read', async (_request, ctx) => {
      const body = await panel(deps.db.kysely, deps.db, deps.clock(), ctx);
      return ctx.partial ? body : ctx.page('Dashboard', body);
    });
  };
}
