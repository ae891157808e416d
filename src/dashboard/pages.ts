/**
 * The console's dashboard at `/`: a health line (green, amber or red, saying why), requests and import
 * runs per status over the last 24 hours (failures in red), requests and records imported per minute
 * (bulk import requests and REST import runs), and the job queue's health with the spec's
 * troubleshooting hint. The panel refreshes itself every few seconds (a live region).
 */
import type { Clock } from '../core/clock.js';
import type { ConsoleContext, ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { liveRegion, statusBadge, table, time } from '../console/widgets.js';
import { REQUEST_STATUSES } from '../bulk-import/model.js';
import { countRequestsByStatus, recordsPerMinute, requestsPerMinute } from '../bulk-import/page-queries.js';
import { COMPLETED_WITH_WARNINGS, RUN_STATUSES } from '../import-runs/model.js';
import { countRunsByStatus, countRunsWithWarnings, runRecordsPerMinute } from '../import-runs/page-queries.js';
import { listEntries, type JobQueueEntry } from '../job-queue/entries.js';
import { nextRun } from '../job-queue/next-run.js';
import type { Database } from '../storage/database.js';
import type { Db } from '../storage/db.js';
import { minuteKeys, perMinuteChart, type Series } from './chart.js';
import { currentAlarms, type Alarm, type AlarmSettings } from './alarms.js';
import { healthOf, type Health } from './health.js';

export interface DashboardDeps {
  readonly db: Database;
  readonly clock: Clock;
  /** When the alarms speak (alarms.ts). */
  readonly alarms: AlarmSettings;
}

const DAY_MS = 24 * 60 * 60_000;
const CHART_MINUTES = 60;

/** How a status's count is coloured: red for a failure, amber for a state that asks for a look. */
type Tone = 'bad' | 'warn' | undefined;
const toneOf = (status: string, n: number): Tone =>
  n === 0 ? undefined : status === 'Failed' ? 'bad' : /warning/i.test(status) ? 'warn' : undefined;

function counts(
  title: string,
  statuses: readonly string[],
  byStatus: ReadonlyMap<string, number>,
  link?: (status: string) => string,
): Html {
  return html`<section aria-label="${title}">
    <h2>${title}</h2>
    <div class="cards">
      ${statuses.map((s) => {
        const n = byStatus.get(s) ?? 0;
        const tone = toneOf(s, n);
        const label = tone === undefined ? s : html`<span class="badge ${tone}">${s}</span>`;
        return html`<div class="card${tone === undefined ? '' : ` tone-${tone}`}">
          <div class="n">${n.toLocaleString('en')}</div>
          <div>${link === undefined ? (tone === undefined ? statusBadge(s) : label) : html`<a href="${link(s)}">${label}</a>`}</div>
        </div>`;
      })}
    </div>
  </section>`;
}

/**
 * REST import runs per status over the last 24 hours, and, of the Completed ones, those that stopped
 * short ("Completed with warnings": amber, linking to the Completed runs to look at).
 */
function runCounts(byStatus: ReadonlyMap<string, number>, withWarnings: number): Html {
  const counted = new Map(byStatus).set(COMPLETED_WITH_WARNINGS, withWarnings);
  const statuses = RUN_STATUSES.flatMap((s) => (s === 'Completed' ? [s, COMPLETED_WITH_WARNINGS] : [s]));
  return counts('REST import runs, last 24 hours', statuses, counted, (s) =>
    path(['runs'], { status: s === COMPLETED_WITH_WARNINGS ? 'Completed' : s }),
  );
}

const HEALTH_WORD: Record<Health['level'], string> = { green: 'Healthy', amber: 'Needs a look', red: 'Problems' };

function healthLine(health: Health): Html {
  const [first, ...more] = health.reasons;
  return html`<div class="health health-${health.level}" role="status" id="health">
    <strong>${HEALTH_WORD[health.level]}:</strong>
    ${
      more.length === 0
        ? html`<span>${first}</span>`
        : html`<ul>
            ${health.reasons.map((r) => html`<li>${r}</li>`)}
          </ul>`
    }
  </div>`;
}

function jobQueueWarning(troubled: readonly JobQueueEntry[], ctx: ConsoleContext): Html {
  return html`<div class="warning" role="alert">
    <strong>Job queue needs attention.</strong>
    <ul>
      ${troubled.map((e) => html`<li>${e.description} is ${statusBadge(e.status)}${e.lastError === '' ? '' : html`: ${e.lastError}`}</li>`)}
    </ul>
    <p>
      Symptom: a request stays Pending a long time. Cause: the job queue processor is not running. Remedy: check the job queue
      entries${ctx.can('jobQueue') ? html` (<a href="/job-queue">Job Queue Entries</a>)` : ''} and set them Ready.
    </p>
  </div>`;
}

/** The alarms other than an entry On Hold or in Error (those have their own box, as before): symptom, cause, what to do. */
function alarmBox(alarms: readonly Alarm[], ctx: ConsoleContext): Html {
  return html`<div class="warning" role="alert" id="alarms">
    <strong>Alarms</strong>
    <ul>
      ${alarms.map(
        (a) =>
          html`<li data-alarm="${a.alarmId}">
            <strong>${a.symptom}.</strong> Cause: ${a.cause}. What to do: ${a.remedy}.
            ${a.kind === 'processorNotRunning' && ctx.can('administer') ? html`(<a href="/workers">Workers</a>)` : ''}
          </li>`,
      )}
    </ul>
  </div>`;
}

/** What the dashboard shows of bulk import requests, to a user who may see them. */
async function requestFigures(db: Db, since: string, chartSince: string) {
  const [byStatus, perMinute, records] = await Promise.all([
    countRequestsByStatus(db, since),
    requestsPerMinute(db, chartSince),
    recordsPerMinute(db, chartSince),
  ]);
  return { byStatus, perMinute, records };
}

async function panel(db: Db, database: Database, now: Date, ctx: ConsoleContext, settings: AlarmSettings): Promise<Html> {
  const since = new Date(now.getTime() - DAY_MS).toISOString();
  const chartSince = new Date(now.getTime() - CHART_MINUTES * 60_000).toISOString().slice(0, 16);
  const keys = minuteKeys(now, CHART_MINUTES);
  const seesRequests = ctx.can('bulkImport');
  const [alarms, entries, runsByStatus, runsWithWarnings, runRecords, requests] = await Promise.all([
    currentAlarms(database, now, settings),
    listEntries(database),
    countRunsByStatus(db, since),
    countRunsWithWarnings(db, since),
    runRecordsPerMinute(db, chartSince),
    seesRequests ? requestFigures(db, since, chartSince) : undefined,
  ]);
  const troubled = entries.filter((e) => e.status === 'On Hold' || e.status === 'Error');
  const others = alarms.filter((a) => a.kind !== 'entryOnHold' && a.kind !== 'entryInError');
  const parts: Html[] = [
    healthLine(
      healthOf({
        runs: runsByStatus,
        runsWithWarnings,
        entries,
        alarms: others,
        ...(requests === undefined ? {} : { requests: requests.byStatus }),
      }),
    ),
  ];
  if (others.length > 0) parts.push(alarmBox(others, ctx));
  if (troubled.length > 0) parts.push(jobQueueWarning(troubled, ctx));
  if (requests !== undefined)
    parts.push(
      counts('Bulk import requests, last 24 hours', REQUEST_STATUSES, requests.byStatus, (s) => path(['requests'], { status: s })),
    );
  parts.push(runCounts(runsByStatus, runsWithWarnings));
  const recordSeries: Series[] = [
    ...(requests === undefined ? [] : [{ label: 'Bulk import requests', points: requests.records }]),
    { label: 'REST import runs', points: runRecords },
  ];
  parts.push(
    html`<section aria-label="Throughput">
      <h2>Throughput</h2>
      ${
        requests === undefined
          ? ''
          : perMinuteChart({
              title: 'Requests submitted',
              noun: 'requests',
              keys,
              series: [{ label: 'Requests', points: requests.perMinute }],
            })
      }
      ${perMinuteChart({ title: 'Records imported', noun: 'records imported', keys, series: recordSeries })}
    </section>`,
  );
  parts.push(
    html`<section aria-label="Job queue">
      <h2>Job queue</h2>
      ${table({
        rows: entries,
        caption: 'Job queue entries',
        columns: [
          { header: 'Entry', cell: (e) => e.description },
          { header: 'Status', cell: (e) => statusBadge(e.status) },
          { header: 'Last run', cell: (e) => time(e.lastRunAt) },
          { header: 'Next run', cell: (e) => nextRun(e) },
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
      const body = await panel(deps.db.kysely, deps.db, deps.clock(), ctx, deps.alarms);
      return ctx.partial ? body : ctx.page('Dashboard', body);
    });
  };
}
