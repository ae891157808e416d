/**
 * The console's import runs: "Run import now" on an endpoint's card, the list of runs, and a run's
 * page, which shows pages arriving while the run goes on and, at its end, the stop reason, warnings,
 * the page log, the per-record errors with the page and place of each record, the spec's "Pagination
 * problems" remedies where the run shows their symptom, and Cancel for a Queued or Running run.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import { FormBody, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton, field, fields, liveRegion, select, statusBadge, table, time } from '../console/widgets.js';
import { integrationLink, integrationNames } from '../integrations/integration-link.js';
import { getIntegration } from '../integrations/store.js';
import { getEndpoint } from '../rest-source/store.js';
import type { Database } from '../storage/database.js';
import { isFinalStatus, RUN_STATUSES, runStatusLabel, type ImportRun } from './model.js';
import { getRun, listRunPages, listRuns } from './queries.js';
import { queueEndpointRun } from './queue-endpoint-run.js';
import { deliveryLog } from '../webhooks/pages.js';
import { deliveriesOf } from '../webhooks/store.js';
import { cancelRun } from './cancel-run.js';
import { listRunErrors } from './run-errors.js';

export interface ImportRunPagesDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly wake: () => void;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PAGE_LOG_LIMIT = 1000;
/** Every kept error (at most MAX_KEPT_ERRORS, 1 000) is shown. */
const ERRORS_LIMIT = 1000;
const RunsQuery = Type.Object({ endpoint: Type.Optional(Type.String()), status: Type.Optional(Type.String()) });

/** The rows of the spec's "Pagination problems" table whose symptom this run shows. */
export function paginationHints(run: ImportRun, paginationType: string | undefined): string[] {
  if (run.status !== 'Completed') return [];
  const hints: string[] = [];
  if (run.pagesFetched === 1 && run.stopReason !== 'maxPages')
    hints.push(
      paginationType === 'none'
        ? 'Only the first page was imported because Pagination Type is None. If the API has more pages, set the Pagination Type.'
        : 'Only the first page was imported. If the API has more pages: match Page Size to the real page size, and check Response Data Path (records that cannot be counted stop pagination after page 1).',
    );
  if (run.stopReason === 'maxPages')
    hints.push(
      'Pagination ran to Max Pages: records may be missing. Either Next Link JSON Path always finds a value or Page Size is below the real page size (fix the path or Page Size; set Max Pages low, e.g. 3, while testing), or Max Pages is too low for the volume (raise Max Pages or Page Size).',
    );
  return hints;
}

export function importRunPages(deps: ImportRunPagesDeps): ConsolePages {
  const { db, clock } = deps;

  const runIdOf = (id: string): string => {
    if (!GUID.test(id)) throw new AppError(404, 'notFound', `No import run ${id}.`);
    return id.toLowerCase();
  };

  async function runBody(run: ImportRun, ctx: ConsoleContext): Promise<Html> {
    const [pages, errors, endpoint, integration] = await Promise.all([
      listRunPages(db, run.runId, { skip: 0, limit: PAGE_LOG_LIMIT }),
      listRunErrors(db, run.runId, { skip: 0, limit: ERRORS_LIMIT }),
      getEndpoint(db.kysely, run.endpointCode),
      getIntegration(db, run.integrationSortingOrder),
    ]);
    const live = !isFinalStatus(run.status);
    const hints = paginationHints(run, endpoint?.pagination.type);
    return liveRegion(
      { id: 'run', url: path(['runs', run.runId]), live },
      html`${fields([
          ['Run ID', html`<code>${run.runId}</code>`],
          ['Status', statusBadge(runStatusLabel(run))],
          ['Endpoint', html`<a href="${path(['rest', 'endpoints', run.endpointCode])}">${run.endpointCode}</a>`],
          ['Integration', integrationLink(run.integrationSortingOrder, integration?.name)],
          ['Trigger', run.trigger],
          ['Queued at', time(run.queuedAt)],
          ['Started at', time(run.startedAt)],
          ['Ended at', time(run.endedAt)],
          ['Duration', run.durationMs === null ? '' : `${(run.durationMs / 1000).toFixed(1)} s`],
          ['Pages fetched', String(run.pagesFetched)],
          ['Records fetched', String(run.recordsFetched)],
          ['Inserted', String(run.insertedCount)],
          ['Updated', String(run.updatedCount)],
          ['Skipped', String(run.skippedCount)],
          ['Stop reason', run.stopReason === null ? '' : html`<strong>${run.stopReason}</strong>: ${run.stopDetail}`],
          ['Error', run.errorMessage],
          ['Attempts', String(run.attempts)],
        ])}
        <div class="actions">
          ${actionButton({
            action: path(['runs', run.runId, 'cancel']),
            label: 'Cancel run',
            csrfToken: ctx.csrfToken,
            confirm: `Cancel import run ${run.runId}? Nothing of it will be imported.`,
            enabled: live,
            disabledReason: 'Only a Queued or Running run can be cancelled.',
            danger: true,
          })}
        </div>
        ${
          run.warnings.length === 0
            ? ''
            : html`<div class="warning" role="status">
                <strong>Warnings: records may be missing</strong>
                <ul>
                  ${run.warnings.map((w) => html`<li>${w}</li>`)}
                </ul>
              </div>`
        }
        ${
          hints.length === 0
            ? ''
            : html`<div class="warning" role="status">
                <strong>Pagination problems</strong>
                <ul>
                  ${hints.map((h) => html`<li>${h}</li>`)}
                </ul>
              </div>`
        }
        <h2>Record errors (${errors.length})</h2>
        ${table({
          rows: errors,
          caption: 'Record errors, with the page and place each record came from',
          empty: 'No record errors.',
          columns: [
            { header: 'Record', numeric: true, cell: (e) => e.recordNo ?? '—' },
            { header: 'Page', numeric: true, cell: (e) => e.pageNo ?? '—' },
            { header: 'On page', numeric: true, cell: (e) => e.recordOnPage ?? '—' },
            { header: 'Field', cell: (e) => e.field ?? '—' },
            { header: 'Value', cell: (e) => html`<code>${e.value ?? ''}</code>` },
            { header: 'Rule', cell: (e) => e.rule },
            { header: 'Message', cell: (e) => e.message },
          ],
        })}
        <h2>Page log (${pages.length})</h2>
        ${table({
          rows: pages,
          caption: 'Page log',
          empty: 'No page fetched yet.',
          columns: [
            { header: 'Page', numeric: true, cell: (p) => p.pageNo },
            { header: 'URL called', cell: (p) => html`<code>${p.url}</code>` },
            { header: 'Records', numeric: true, cell: (p) => p.recordsFetched },
          ],
        })}`,
    );
  }

  return (router) => {
    router.section({ label: 'Import Runs', href: '/runs', permission: 'read', order: 45 });

    router.post(
      '/rest/endpoints/:code/run',
      'runImports',
      async (request) => {
        const { code } = request.params;
        const run = await queueEndpointRun(db, code, 'manual', clock());
        deps.wake();
        return redirect(path(['runs', run.runId]), { kind: 'info', text: `An import run of ${code} was queued.` });
      },
      { params: PathKey('code'), body: FormBody({}) },
    );

    router.get(
      '/runs',
      'read',
      async (request, ctx) => {
        const endpoint = (request.query.endpoint ?? '').trim();
        const status = (request.query.status ?? '').trim();
        if (status !== '' && !(RUN_STATUSES as readonly string[]).includes(status))
          throw new AppError(400, 'invalidRequest', `Status must be one of ${RUN_STATUSES.join(', ')}.`);
        const filter = [
          ...(endpoint === '' ? [] : [{ property: 'endpointCode', op: 'eq' as const, value: endpoint }]),
          ...(status === '' ? [] : [{ property: 'status', op: 'eq' as const, value: status }]),
        ];
        const [runs, names] = await Promise.all([listRuns(db, { filter, skip: 0, limit: 100, descending: true }), integrationNames(db)]);
        const live = runs.some((r) => !isFinalStatus(r.status));
        const body = liveRegion(
          { id: 'runs', url: path(['runs'], { endpoint, status }), live },
          table({
            rows: runs,
            caption: 'Import runs, newest first',
            empty: 'No import runs.',
            columns: [
              { header: 'Run', cell: (r) => html`<a href="${path(['runs', r.runId])}"><code>${r.runId}</code></a>` },
              { header: 'Endpoint', cell: (r) => html`<a href="${path(['rest', 'endpoints', r.endpointCode])}">${r.endpointCode}</a>` },
              { header: 'Integration', cell: (r) => integrationLink(r.integrationSortingOrder, names.get(r.integrationSortingOrder)) },
              { header: 'Status', cell: (r) => statusBadge(runStatusLabel(r)) },
              { header: 'Queued', cell: (r) => time(r.queuedAt) },
              { header: 'Pages', numeric: true, cell: (r) => r.pagesFetched },
              { header: 'Records', numeric: true, cell: (r) => r.recordsFetched },
              { header: 'Stop reason', cell: (r) => r.stopReason ?? '' },
              { header: 'Error', cell: (r) => r.errorMessage },
            ],
          }),
        );
        if (ctx.partial) return body;
        return ctx.page(
          endpoint === '' ? 'Import Runs' : `Import runs of ${endpoint}`,
          html`<form class="filters" method="get" action="/runs" role="search" aria-label="Filter runs">
              ${field({ name: 'endpoint', id: 'f-endpoint', label: 'Endpoint', value: endpoint, className: '' })}
              ${select(
                'status',
                'Status',
                RUN_STATUSES.map((s) => [s, s]),
                status,
              )}
              <button type="submit">Filter</button> <a href="/runs">Clear</a>
            </form>
            ${body}`,
        );
      },
      { query: RunsQuery },
    );

    router.post(
      '/runs/:id/cancel',
      'runImports',
      async (request) => {
        const id = runIdOf(request.params.id);
        await cancelRun(db, id, clock);
        return redirect(path(['runs', id]), { kind: 'info', text: `Import run ${id} was cancelled.` });
      },
      { params: PathKey('id'), body: FormBody({}) },
    );

    router.get(
      '/runs/:id',
      'read',
      async (request, ctx) => {
        const id = runIdOf(request.params.id);
        const run = await getRun(db, id);
        if (run === undefined) throw new AppError(404, 'notFound', `No import run ${id}.`);
        const body = await runBody(run, ctx);
        return ctx.partial
          ? body
          : ctx.page(
              `Import run ${run.runId}`,
              html`<p><a href="/runs">← All import runs</a></p>
                ${body} ${deliveryLog(await deliveriesOf(db, run.runId), ctx, 'Webhook deliveries', true)}`,
            );
      },
      { params: PathKey('id') },
    );
  };
}
