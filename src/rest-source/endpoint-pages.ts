/**
 * The console's REST API Endpoints: a new endpoint and the card, with the **Pagination** section
 * showing only the settings the chosen Pagination Type uses (htmx swaps them when the type changes),
 * rendered from the type's declaration (src/pagination/) with the spec's help text beside each
 * (endpoint-form.ts); a live check as the form changes that runs what Create or Save runs, database
 * included; errors under their input; and "Preview first page": the records found on page 1 and what
 * pagination would request next.
 */
import { Type } from 'typebox';
import { AppError } from '../core/errors.js';
import { FormBody, FormText, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { formErrors, placeError, type FormErrors } from '../console/form-errors.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton, formError } from '../console/widgets.js';
import { PAGINATION_TYPES } from '../pagination/index.js';
import { dryRunSummary, loadDryRunIntegration } from '../table-writer/dry-run.js';
import type { RestPagesDeps } from './connection-pages.js';
import {
  ENDPOINT_PLACES,
  EndpointBody,
  endpointForm,
  inputFrom,
  isType,
  paginationFields,
  typedValues,
  type Values,
} from './endpoint-form.js';
import { detectPagination } from './detect-pagination.js';
import { detectionPanel, filledNote } from './detect-pages.js';
import { proposedFields } from './detect-routes.js';
import { resolveUnsavedEndpoint } from './unsaved.js';
import { FetchError } from './fetch-pages.js';
import { getIntegration, listIntegrations } from '../integrations/store.js';
import { previewFirstPage, type PagePreview } from './preview.js';
import { LIMITS } from './schemas.js';
import { checkEndpointChange, checkNewEndpoint, createEndpoint, updateEndpoint } from './service.js';
import { endpointViewOf, type EndpointView } from './settings.js';
import { getBookmark, getEndpoint, listConnections, loadEndpointWithConnection } from './store.js';
import { NO_BOOKMARK } from './cursor-values.js';
import { cursorPanel } from './cursor-panel.js';
import { resetCursor, setCursor } from './cursor-service.js';

const PaginationFieldsQuery = Type.Object({
  paginationType: Type.Optional(Type.String()),
  code: Type.Optional(Type.String()),
  pageSize: Type.Optional(Type.String()),
  maxPages: Type.Optional(Type.String()),
  responseDataPath: Type.Optional(Type.String()),
});
const NewEndpointQuery = Type.Object({ connection: Type.Optional(Type.String()) });
const CodeParams = { params: PathKey('code') };
const NoFields = { body: FormBody({}) };
const CursorBody = FormBody({ value: FormText(200) });

function previewPanel(p: PagePreview): Html {
  const next =
    p.next.kind === 'next'
      ? html`Pagination would request next:
          <code>${p.next.url}</code>${p.next.cursor === undefined ? '' : html` with cursor <code>${p.next.cursor}</code>`}`
      : p.next.kind === 'stop'
        ? html`Pagination would stop after this page (${p.next.reason}): ${p.next.detail}`
        : html`Pagination would fail: ${p.next.error}`;
  const { outcome } = p;
  return html`<section aria-label="Preview" id="preview" class="card">
    <h2>Preview of page 1</h2>
    <p role="status">
      <strong>${p.recordCount} record${p.recordCount === 1 ? '' : 's'} found</strong> on <code>${p.url}</code> (HTTP ${p.status});
      ${p.recordsFoundBy}.
    </p>
    <p>${next}</p>
    ${
      p.warnings.length === 0
        ? ''
        : html`<div class="warning" role="status">
            <strong>Warnings</strong>
            <ul>
              ${p.warnings.map((w) => html`<li>${w}</li>`)}
            </ul>
          </div>`
    }
    ${p.integrationError === undefined ? '' : html`<p class="flash error">The integration cannot run: ${p.integrationError}</p>`}
    ${
      outcome === undefined
        ? ''
        : html`<h3>Importing these records</h3>
            <p class="${outcome.ok ? 'ok' : 'bad'}"><strong>${dryRunSummary(outcome)}</strong></p>
            ${outcome.errorMessage === '' ? '' : html`<p>The run's error message would be: <q>${outcome.errorMessage}</q></p>`}`
    }
    ${
      p.rows === undefined
        ? ''
        : html`<h3>The first records through the integration</h3>
            <ul>
              ${p.rows.map((r) =>
                'row' in r
                  ? html`<li>Record ${r.recordNo}: <code>${JSON.stringify(r.row)}</code></li>`
                  : html`<li class="bad">Record ${r.recordNo}: ${r.errors.join('; ')}</li>`,
              )}
            </ul>`
    }
    <details>
      <summary>Raw records</summary>
      <pre>${JSON.stringify(p.records, null, 2)}</pre>
    </details>
  </section>`;
}

export function endpointPages(deps: RestPagesDeps): ConsolePages {
  const { db, clock, secrets } = deps;

  async function form(ctx: ConsoleContext, action: string, v: Values, isNew: boolean, errors?: FormErrors): Promise<Html> {
    const [connections, integrations] = await Promise.all([listConnections(db.kysely), listIntegrations(db.kysely)]);
    return endpointForm(ctx, { connections, integrations }, action, v, isNew, errors);
  }

  async function card(ctx: ConsoleContext, code: string, extra: Html | string = '', errors?: FormErrors, typed?: Values): Promise<Html> {
    const endpoint = await getEndpoint(db.kysely, code);
    if (endpoint === undefined) throw new AppError(404, 'notFound', `No REST API endpoint '${code}'.`);
    const view: EndpointView = endpointViewOf(endpoint);
    const bookmark = (await getBookmark(db.kysely, code)) ?? NO_BOOKMARK;
    // Plain form posts, without htmx: Preview answers the card with its result, Run redirects to the run's page.
    const actions = (verb: string, label: string, secondary = false) =>
      actionButton({ action: path(['rest', 'endpoints', code, verb]), label, csrfToken: ctx.csrfToken, secondary, showsPage: true });
    return ctx.page(
      `REST API endpoint ${code}`,
      html`<p>
          <a href="/rest">← REST API connections and endpoints</a> ·
          <a href="${path(['runs'], { endpoint: code })}">Import runs of this endpoint</a> ·
          <a href="${path(['webhooks'], { endpoint: code })}">Webhooks</a>
        </p>
        <p>
          ${ctx.can('configureRest') ? actions('preview', 'Preview first page', true) : ''}
          ${ctx.can('configureRest') ? actions('detect-pagination', 'Detect pagination', true) : ''}
          ${ctx.can('runImports') ? actions('run', 'Run import now') : ''}
        </p>
        ${extra} ${cursorPanel(ctx, endpoint, bookmark)}
        ${await form(ctx, path(['rest', 'endpoints', code]), { ...(view as unknown as Values), ...typed }, false, errors)}`,
    );
  }

  return (router) => {
    router.get(
      '/rest/pagination-fields',
      'configureRest',
      async (request) => {
        const q = request.query;
        const type = q.paginationType ?? 'none';
        if (!isType(type)) throw new AppError(400, 'invalidRequest', `Pagination Type must be one of ${PAGINATION_TYPES.join(', ')}.`);
        // The kept settings of the type switched to come back from the saved endpoint, as saving would restore them.
        const saved = q.code === undefined || q.code === '' ? undefined : await getEndpoint(db.kysely, q.code);
        const kept = saved === undefined ? {} : (endpointViewOf(saved) as unknown as Values);
        return paginationFields(type, {
          ...kept,
          pageSize: q.pageSize ?? '',
          maxPages: q.maxPages ?? '',
          responseDataPath: q.responseDataPath ?? '',
        });
      },
      { query: PaginationFieldsQuery },
    );

    /** The live check: valid, or the refusal in the form's words. */
    const liveCheck = async (check: () => Promise<unknown>): Promise<Html> => {
      try {
        await check();
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        return html`<p class="field-error" role="alert">${placeError(err.message, ENDPOINT_PLACES).words}</p>`;
      }
      return html`<p class="ok">These settings are valid.</p>`;
    };

    router.post(
      '/rest/endpoints/new/validate',
      'configureRest',
      async (_request, _ctx, body) => liveCheck(() => checkNewEndpoint(db, inputFrom(body, body.get('code') ?? ''))),
      { body: EndpointBody },
    );

    router.post(
      '/rest/endpoints/:code/validate',
      'configureRest',
      async (request, _ctx, body) => {
        const code = request.params.code;
        return liveCheck(async () => {
          const { code: _code, ...patch } = inputFrom(body, code);
          return checkEndpointChange(db, code, patch);
        });
      },
      { ...CodeParams, body: EndpointBody },
    );

    router.get(
      '/rest/endpoints/new',
      'configureRest',
      async (request, ctx) =>
        ctx.page(
          'New REST API endpoint',
          await form(
            ctx,
            '/rest/endpoints/new',
            { connectionCode: request.query.connection ?? '', method: 'GET', paginationType: 'none', maxPages: LIMITS.maxPages.default },
            true,
          ),
        ),
      { query: NewEndpointQuery },
    );

    router.post(
      '/rest/endpoints/new',
      'configureRest',
      async (_request, ctx, body) => {
        const code = body.get('code') ?? '';
        try {
          await createEndpoint(db, inputFrom(body, code), clock);
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          const errors = formErrors(err.message, ENDPOINT_PLACES);
          return ctx.page('New REST API endpoint', await form(ctx, '/rest/endpoints/new', typedValues(body), true, errors));
        }
        return redirect(path(['rest', 'endpoints', code]), { kind: 'info', text: `Endpoint ${code} was created.` });
      },
      { body: EndpointBody },
    );

    // Detect pagination on the new endpoint's form: the form as typed is probed (nothing saved) and comes
    // back filled with the proposal, the detection above it.
    router.post(
      '/rest/endpoints/new/detect-pagination',
      'configureRest',
      async (_request, ctx, body) => {
        const typed = typedValues(body);
        const page = async (extra: Html | string, values: Values, errors?: FormErrors) =>
          ctx.page('New REST API endpoint', html`${extra}${await form(ctx, '/rest/endpoints/new', values, true, errors)}`);
        const input = inputFrom(body, body.get('code') ?? '');
        try {
          const { connection, endpoint } = await resolveUnsavedEndpoint(db, { ...input, code: input.code || undefined }, secrets);
          const recordsPath = (await getIntegration(db, endpoint.integrationSortingOrder))?.recordsPath ?? '';
          const detection = await detectPagination(connection, endpoint, recordsPath, { outbound: deps.outbound });
          return await page(html`${detectionPanel(ctx, null, detection)}${filledNote(true)}`, {
            ...typed,
            ...proposedFields(detection.settings),
          });
        } catch (err) {
          if (err instanceof FetchError)
            return page(formError(html`<strong>Detect pagination: page ${err.pageNo} failed</strong>: ${err.message}`, 'detect'), typed);
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          return page('', typed, formErrors(err.message, ENDPOINT_PLACES));
        }
      },
      { body: EndpointBody },
    );

    router.get('/rest/endpoints/:code', 'read', async (request, ctx) => card(ctx, request.params.code), CodeParams);

    router.post(
      '/rest/endpoints/:code',
      'configureRest',
      async (request, ctx, body) => {
        const code = request.params.code;
        try {
          const { code: _code, ...patch } = inputFrom(body, code);
          await updateEndpoint(db, code, patch, clock);
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          return card(ctx, code, '', formErrors(err.message, ENDPOINT_PLACES), typedValues(body));
        }
        return redirect(path(['rest', 'endpoints', code]), { kind: 'info', text: `Endpoint ${code} was saved.` });
      },
      { ...CodeParams, body: EndpointBody },
    );

    /** The bookmark set or reset: the card again, with what changed or why it was refused. */
    const changeCursor = async (ctx: ConsoleContext, code: string, change: () => Promise<unknown>, done: string) => {
      try {
        await change();
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        return card(ctx, code, formError(`The bookmark was not changed: ${err.message}`, 'bookmark'));
      }
      return redirect(path(['rest', 'endpoints', code]), { kind: 'info', text: done });
    };
    router.post(
      '/rest/endpoints/:code/cursor',
      'configureRest',
      async (request, ctx, body) =>
        changeCursor(
          ctx,
          request.params.code,
          () => setCursor(db, request.params.code, body.get('value') ?? '', clock),
          'The bookmark was set.',
        ),
      { ...CodeParams, body: CursorBody },
    );
    router.post(
      '/rest/endpoints/:code/cursor/reset',
      'configureRest',
      async (request, ctx) =>
        changeCursor(
          ctx,
          request.params.code,
          () => resetCursor(db, request.params.code, clock),
          'The bookmark was reset: the next run starts over.',
        ),
      { ...CodeParams, ...NoFields },
    );

    router.post(
      '/rest/endpoints/:code/preview',
      'configureRest',
      async (request, ctx) => {
        const code = request.params.code;
        const { endpoint, connection } = await loadEndpointWithConnection(db, code, secrets);
        const integration = await loadDryRunIntegration(db, endpoint.integrationSortingOrder);
        try {
          const preview = await previewFirstPage(connection, endpoint, integration, { outbound: deps.outbound });
          // "Create table and mappings from this sample": the previewed records, posted to /integrations/from-sample.
          const fromSample = ctx.can('configure')
            ? html`<form method="post" action="/integrations/from-sample">
                <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
                <input type="hidden" name="endpointCode" value="${code}" />
                <input type="hidden" name="payload" value="${JSON.stringify(preview.records)}" />
                <button type="submit" class="secondary">Create table and mappings from this sample</button>
              </form>`
            : '';
          return await card(ctx, code, html`${previewPanel(preview)}${fromSample}`);
        } catch (err) {
          if (!(err instanceof FetchError)) throw err;
          const failure = html`<strong>Page ${err.pageNo} failed</strong>: ${err.message}
            <span class="muted">(<code>${err.url}</code>${err.status === null ? '' : `, HTTP ${err.status}`})</span>`;
          return card(ctx, code, formError(failure, 'preview'));
        }
      },
      { ...CodeParams, ...NoFields },
    );

    // Detect pagination: the proposal and the check of the saved settings; "Use these settings" fills the form, unsaved.
    router.post(
      '/rest/endpoints/:code/detect-pagination',
      'configureRest',
      async (request, ctx) => {
        const code = request.params.code;
        const { endpoint, connection } = await loadEndpointWithConnection(db, code, secrets);
        const recordsPath = (await getIntegration(db, endpoint.integrationSortingOrder))?.recordsPath ?? '';
        try {
          const detection = await detectPagination(connection, endpoint, recordsPath, { outbound: deps.outbound });
          return await card(ctx, code, detectionPanel(ctx, code, detection));
        } catch (err) {
          if (!(err instanceof FetchError)) throw err;
          return card(ctx, code, formError(html`<strong>Detect pagination: page ${err.pageNo} failed</strong>: ${err.message}`, 'detect'));
        }
      },
      { ...CodeParams, ...NoFields },
    );

    router.post(
      '/rest/endpoints/:code/use-detected',
      'configureRest',
      async (request, ctx, body) => card(ctx, request.params.code, filledNote(), undefined, typedValues(body)),
      { ...CodeParams, body: EndpointBody },
    );
  };
}
