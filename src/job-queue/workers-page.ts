/**
 * The console's Workers page: every process that runs workers, Alive or Dead, its host, pid, version,
 * roles, concurrency, heartbeat, last claim and what each lane runs now; refreshed live.
 */
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { ConsolePages } from '../console/console.js';
import { html, type Html } from '../console/html.js';
import { liveRegion, statusBadge, table, time } from '../console/widgets.js';
import type { Db } from '../storage/db.js';
import { listWorkers, type Worker } from './workers.js';

export interface WorkerPagesDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Pick<Config, 'workerDeadSeconds' | 'workerForgetHours'>;
}

function lanes(w: Worker): Html {
  if (w.status === 'Dead') return html`<span class="muted">(not running)</span>`;
  return html`<ul class="plain">
    ${w.lanes.map((l) => html`<li><strong>${l.lane}</strong>: ${l.running === null ? html`<span class="muted">idle</span>` : html`${l.running} since ${time(l.since)}`}</li>`)}
  </ul>`;
}

function workersTable(workers: readonly Worker[]): Html {
  return liveRegion(
    { id: 'workers', url: '/workers' },
    table({
      rows: workers,
      caption: 'Worker processes',
      empty: 'No process runs workers: bulk import requests stay Pending. Start `ifw worker` or `ifw serve` without --no-workers.',
      rowAttributes: (w) => html` data-worker="${w.workerId}" data-status="${w.status}"`,
      columns: [
        { header: 'Process', cell: (w) => html`${w.host} (pid ${w.pid})<br /><code class="muted">${w.workerId}</code>` },
        { header: 'Status', cell: (w) => statusBadge(w.status) },
        { header: 'Version', cell: (w) => w.version },
        { header: 'Roles', cell: (w) => w.roles.join(', ') },
        { header: 'Concurrency', numeric: true, cell: (w) => w.concurrency },
        { header: 'Started', cell: (w) => time(w.startedAt) },
        { header: 'Last heartbeat', cell: (w) => time(w.heartbeatAt) },
        { header: 'Last claim', cell: (w) => time(w.lastClaimAt) },
        { header: 'Running now', cell: lanes },
      ],
    }),
  );
}

export function workerPages(deps: WorkerPagesDeps): ConsolePages {
  const { db, clock, config } = deps;
  return (router) => {
    // Not a section of its own (the top bar is full at 1280 px): the Job Queue page links it for administrators.
    router.get('/workers', 'administer', async (_request, ctx) => {
      const body = workersTable(await listWorkers(db, { now: clock(), deadMs: config.workerDeadSeconds * 1000 }));
      return ctx.partial
        ? body
        : ctx.page(
            'Workers',
            html`<p class="hint">
                Every process that runs workers writes a heartbeat. One silent for ${config.workerDeadSeconds} s is shown Dead (killed, or
                its machine lost); it is removed ${config.workerForgetHours} h after its last heartbeat. A process that stops normally
                leaves the list at once.
              </p>
              ${body}`,
          );
    });
  };
}
