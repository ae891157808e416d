/**
 * The console's Job Queue Entries: each entry's status, interval, last and next run and last error,
 * refreshed live, with Set On Hold, Set Ready and Run now for those allowed to control the queue.
 */
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import { FormBody, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton, liveRegion, statusBadge, table, time } from '../console/widgets.js';
import type { Database } from '../storage/database.js';
import { listEntries, getEntry, type JobQueueEntry } from './entries.js';
import { nextRun } from './next-run.js';
import { holdEntry } from './hold-entry.js';
import { readyEntry } from './ready-entry.js';
import { runEntryNow } from './run-entry-now.js';

export interface JobQueuePagesDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly wake: () => void;
}

/** An entry's buttons: the entry in the path, no field but the CSRF token. */
const EntryAction = { params: PathKey('id'), body: FormBody({}) };

function every(seconds: number): string {
  if (seconds === 0) return 'when woken';
  if (seconds % 3600 === 0) return `every ${seconds / 3600} h`;
  if (seconds % 60 === 0) return `every ${seconds / 60} min`;
  return `every ${seconds} s`;
}

function entriesTable(entries: readonly JobQueueEntry[], ctx: ConsoleContext): Html {
  const control = ctx.can('jobQueue');
  const action = (id: string, verb: string) => path(['job-queue', id, verb]);
  return liveRegion(
    { id: 'job-queue', url: '/job-queue' },
    table({
      rows: entries,
      caption: 'Job queue entries',
      rowAttributes: (e) => html` data-entry="${e.id}"`,
      columns: [
        { header: 'Entry', cell: (e) => html`${e.description}<br /><code class="muted">${e.id}</code>` },
        { header: 'Status', cell: (e) => statusBadge(e.status) },
        { header: 'Interval', cell: (e) => every(e.recurrenceSeconds) },
        { header: 'Last run', cell: (e) => time(e.lastRunAt) },
        { header: 'Last ended', cell: (e) => time(e.lastEndedAt) },
        { header: 'Next run', cell: (e) => nextRun(e) },
        { header: 'Last error', cell: (e) => e.lastError },
        {
          header: 'Actions',
          show: control,
          cell: (e) =>
            html`${actionButton({
              action: action(e.id, 'hold'),
              label: 'Set On Hold',
              accessibleName: `Set On Hold: ${e.description}`,
              csrfToken: ctx.csrfToken,
              enabled: e.status !== 'On Hold',
              confirm: `Put ${e.description} On Hold? Nothing of it runs until it is set Ready.`,
            })}
            ${actionButton({
              action: action(e.id, 'ready'),
              label: 'Set Ready',
              accessibleName: `Set Ready: ${e.description}`,
              csrfToken: ctx.csrfToken,
              enabled: e.status === 'On Hold' || e.status === 'Error',
            })}
            ${actionButton({
              action: action(e.id, 'run'),
              label: 'Run now',
              accessibleName: `Run now: ${e.description}`,
              csrfToken: ctx.csrfToken,
              enabled: e.status !== 'On Hold',
            })}`,
        },
      ],
    }),
  );
}

export function jobQueuePages(deps: JobQueuePagesDeps): ConsolePages {
  const { db, clock } = deps;

  async function entryOf(id: string): Promise<JobQueueEntry> {
    const entry = await getEntry(db, id);
    if (entry === undefined) throw new AppError(404, 'notFound', `No job queue entry '${id}'.`);
    return entry;
  }

  return (router) => {
    router.section({ label: 'Job Queue', href: '/job-queue', permission: 'read', order: 60 });

    router.get('/job-queue', 'read', async (_request, ctx) => {
      const body = entriesTable(await listEntries(db), ctx);
      return ctx.partial
        ? body
        : ctx.page(
            'Job Queue Entries',
            html`<p class="hint">
                On Hold: nothing of the entry runs (bulk import requests stay Pending). Error: its last run failed; it runs again at its
                next time.
              </p>
              ${ctx.can('administer') ? html`<p><a href="/workers">Workers</a>: the processes that run these entries, live.</p>` : ''}
              ${body}`,
          );
    });

    router.post(
      '/job-queue/:id/hold',
      'jobQueue',
      async (request) => {
        const entry = await entryOf(request.params.id);
        await holdEntry(db, { id: entry.id, now: clock() });
        return redirect('/job-queue', { kind: 'info', text: `${entry.description} is On Hold.` });
      },
      EntryAction,
    );

    router.post(
      '/job-queue/:id/ready',
      'jobQueue',
      async (request) => {
        const entry = await entryOf(request.params.id);
        await readyEntry(db, { id: entry.id, now: clock() });
        deps.wake();
        return redirect('/job-queue', { kind: 'info', text: `${entry.description} is Ready.` });
      },
      EntryAction,
    );

    router.post(
      '/job-queue/:id/run',
      'jobQueue',
      async (request) => {
        const entry = await entryOf(request.params.id);
        if (!(await runEntryNow(db, { id: entry.id, now: clock() })))
          return redirect('/job-queue', { kind: 'error', text: `${entry.description} is On Hold; set it Ready to run it.` });
        deps.wake();
        return redirect('/job-queue', { kind: 'info', text: `${entry.description} is due now.` });
      },
      EntryAction,
    );
  };
}
