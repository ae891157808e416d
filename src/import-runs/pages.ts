/**
 * The console's import runs: "Run import now" on an endpoint's card, the list of runs, and a run's
 * page, which shows pages arriving while the run goes on and, at its end, the stop reason, warnings,
 * the page log, and the spec's "Pagination problems" remedies where the run shows their symptom.
 */
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import { redirect, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { fields, statusBadge, time } from '../console/widgets.js';
import { getEndpoint } from '../rest-source/store.js';
import type { Database } from '../storage/database.js';
import { isFinalStatus, type ImportRun } from './model.js';
import { getRun, listRunPages, listRuns } from './queries.js';
import { queueEndpointRun } from './queue-endpoint-run.js';

export interface ImportRunPagesDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly wake: () => void;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PAGE_LOG_LIMIT = 1000;

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

  const runIdOf = (request: FastifyRequest): string => {
    const id = (request.params as { id: string }).id;
    if (!GUID.test(id)) throw new AppError(404, 'notFound', `No import run ${id}.`);
    return id.toLowerCase();
  };

  async function runBody(run: ImportRun): Promise<Html> {
    const [pages, endpoint] = await Promise.all([
      listRunPages(db, run.runId, { skip: 0, limit: PAGE_LOG_LIMIT }),
      getEndpoint(db.kysely, run.endpointCode),
    ]);
    const live = !isFinalStatus(run.status);
    const hints = paginationHints(run, endpoint?.pagination.type);
    return html`<div
      id="run"
      ${live ? html` hx-get="${path(['runs', run.runId])}" hx-trigger="every 1s" hx-swap="outerHTML"` : ''}
      aria-live="polite"
    >
      ${fields([
        ['Run ID', html`<code>${run.runId}</code>`],
        ['Status', statusBadge(run.status)],
        ['Endpoint', html`<a href="${path(['rest', 'endpoints', run.endpointCode])}">${run.endpointCode}</a>`],
        ['Integration', html`<a href="${path(['integrations', run.integrationSortingOrder])}">${run.integrationSortingOrder}</a>`],
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
      ${
        run.warnings.length === 0
          ? ''
          : html`<div class="warning" role="status">
              <strong>Warnings</strong>
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
      <h2>Page log (${pages.length})</h2>
      <table>
        <thead>
          <tr>
            <th scope="col" class="num">Page</th>
            <th scope="col">URL called</th>
            <th scope="col" class="num">Records</th>
          </tr>
        </thead>
        <tbody>
          ${pages.map(
            (p) =>
              html`<tr>
                <td class="num">${p.pageNo}</td>
                <td><code>${p.url}</code></td>
                <td class="num">${p.recordsFetched}</td>
              </tr>`,
          )}
          ${
            pages.length === 0
              ? html`<tr>
                  <td colspan="3" class="muted">No page fetched yet.</td>
                </tr>`
              : ''
          }
        </tbody>
      </table>
    </div>`;
  }

  return (router) => {
    router.section({ label: 'Import Runs', href: '/runs', permission: 'read', order: 45 });

    router.post('/rest/endpoints/:code/run', 'runImports', async (request) => {
      const code = (request.params as { code: string }).code;
      const run = await queueEndpointRun(db, code, 'manual', clock());
      deps.wake();
      return redirect(path(['runs', run.runId]), { kind: 'info', text: `An import run of ${code} was queued.` });
    });

    router.get('/runs', 'read', async (request, ctx) => {
      const endpoint = ((request.query as { endpoint?: string }).endpoint ?? '').trim();
      const filter = endpoint === '' ? [] : [{ property: 'endpointCode', op: 'eq' as const, value: endpoint }];
      const runs = await listRuns(db, { filter, skip: 0, limit: 100, descending: true });
      const live = runs.some((r) => !isFinalStatus(r.status));
      const body = html`<div
        id="runs"
        ${live ? html` hx-get="${path(['runs'], { endpoint })}" hx-trigger="every 2s" hx-swap="outerHTML"` : ''}
      >
        <table>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Endpoint</th>
              <th scope="col">Status</th>
              <th scope="col">Queued</th>
              <th scope="col" class="num">Pages</th>
              <th scope="col" class="num">Records</th>
              <th scope="col">Stop reason</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            ${runs.map(
              (r) =>
                html`<tr>
                  <td>
                    <a href="${path(['runs', r.runId])}"><code>${r.runId}</code></a>
                  </td>
                  <td>${r.endpointCode}</td>
                  <td>${statusBadge(r.status)}</td>
                  <td>${time(r.queuedAt)}</td>
                  <td class="num">${r.pagesFetched}</td>
                  <td class="num">${r.recordsFetched}</td>
                  <td>${r.stopReason ?? ''}</td>
                  <td>${r.errorMessage}</td>
                </tr>`,
            )}
            ${
              runs.length === 0
                ? html`<tr>
                    <td colspan="8" class="muted">No import runs.</td>
                  </tr>`
                : ''
            }
          </tbody>
        </table>
      </div>`;
      if (ctx.partial) return body;
      return ctx.page(
        endpoint === '' ? 'Import Runs' : `Import runs of ${endpoint}`,
        html`<form class="filters" method="get" action="/runs" role="search" aria-label="Filter runs">
            <div><label for="f-endpoint">Endpoint</label><input id="f-endpoint" name="endpoint" value="${endpoint}" /></div>
            <button type="submit">Filter</button>
          </form>
          ${body}`,
      );
    });

    router.get('/runs/:id', 'read', async (request, ctx) => {
      const run = await getRun(db, runIdOf(request));
      if (run === undefined) throw new AppError(404, 'notFound', `No import run ${runIdOf(request)}.`);
      const body = await runBody(run);
      return ctx.partial
        ? body
        : ctx.page(
            `Import run ${run.runId}`,
            html`<p><a href="/runs">← All import runs</a></p>
              ${body}`,
          );
    });
  };
}
