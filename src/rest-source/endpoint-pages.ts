/**
 * The console's REST API Endpoints: a new endpoint and the card, with the **Pagination** section
 * showing only the settings the chosen Pagination Type uses (htmx swaps them when the type changes),
 * rendered from the type's declaration (src/pagination/) with the spec's help text beside each, validation as the form changes (the same rules as saving), and
 * "Preview first page": the records found on page 1 and what pagination would request next.
 */
import { Type } from 'typebox';
import { AppError } from '../core/errors.js';
import { formInteger, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton, field, formError } from '../console/widgets.js';
import { listIntegrations } from '../integrations/store.js';
import {
  COMMON_SETTINGS,
  PAGINATION_TYPE_HELP,
  PAGINATION_TYPES,
  paginationOf,
  type PaginationType,
  type SettingDeclaration,
} from '../pagination/index.js';
import { dryRunSummary, loadDryRunIntegration } from '../table-writer/dry-run.js';
import type { RestPagesDeps } from './connection-pages.js';
import { FetchError } from './fetch-pages.js';
import { HTTP_METHODS } from './model.js';
import { previewFirstPage, type PagePreview } from './preview.js';
import type { EndpointInput } from './schemas.js';
import { createEndpoint, resolveUnsavedEndpoint, updateEndpoint } from './service.js';
import { endpointViewOf, type EndpointView } from './settings.js';
import { getEndpoint, listConnections, loadConnection, loadEndpoint } from './store.js';

const PaginationFieldsQuery = Type.Object({
  paginationType: Type.Optional(Type.String()),
  code: Type.Optional(Type.String()),
  pageSize: Type.Optional(Type.String()),
  maxPages: Type.Optional(Type.String()),
  responseDataPath: Type.Optional(Type.String()),
});
const NewEndpointQuery = Type.Object({ connection: Type.Optional(Type.String()) });
const CodeParams = { params: PathKey('code') };

const isType = (v: string): v is PaginationType => (PAGINATION_TYPES as readonly string[]).includes(v);
type Values = Partial<Record<string, string | number | boolean | null>>;
const text = (v: Values[string]): string => (v === null || v === undefined || v === false ? '' : String(v));
/** The own settings of a type, as its declaration lists them (label, kind of input, help). */
const ownSettings = (type: PaginationType): readonly SettingDeclaration[] => Object.values(paginationOf(type).settings);

/** A pagination setting's text input; the ids keep a `p-` prefix, apart from the endpoint's own fields. */
function textField(
  name: string,
  label: string,
  v: Values,
  help: string,
  input: { kind?: 'number'; min?: number; required?: boolean } = {},
): Html {
  return field({ ...input, name, id: `p-${name}`, label, value: text(v[name]), help });
}

function checkbox(name: string, label: string, v: Values, help: string): Html {
  return field({ kind: 'checkbox', name, id: `p-${name}`, label, checked: v[name] === true || v[name] === 'on', help });
}

/** One own setting of a pagination type, as its declaration describes it. */
function ownField(setting: SettingDeclaration, v: Values): Html {
  switch (setting.input) {
    case 'checkbox':
      return checkbox(setting.field, setting.label, v, setting.help);
    case 'text':
      return textField(setting.field, setting.label, v, setting.help, { required: true });
    default: {
      const never: never = setting;
      throw new Error(`unknown kind of field ${JSON.stringify(never)}`);
    }
  }
}

/** The settings of one pagination type, then those every type has. */
export function paginationFields(type: PaginationType, v: Values): Html {
  const own = ownSettings(type).map((setting) => ownField(setting, v));
  const countsRecords = paginationOf(type).pageSize === 'counted';
  const { pageSize, maxPages, responseDataPath } = COMMON_SETTINGS;
  return html`${own} ${textField('pageSize', pageSize.label, v, pageSize.help, { kind: 'number', min: 1, required: countsRecords })}
  ${textField('maxPages', maxPages.label, v, maxPages.help, { kind: 'number', min: 1 })}
  ${textField('responseDataPath', responseDataPath.label, v, responseDataPath.help)}`;
}

/** The endpoint input a form sent: only the current pagination type's own settings (the others are kept). */
export function inputFrom(form: URLSearchParams, code: string): EndpointInput {
  const int = (name: string): number | null | undefined => {
    const raw = (form.get(name) ?? '').trim();
    if (raw === '') return name === 'maxPages' ? undefined : null;
    return formInteger(raw, name);
  };
  const type = form.get('paginationType') ?? 'none';
  const input: Record<string, unknown> = {
    code,
    connectionCode: form.get('connectionCode') ?? '',
    path: form.get('path') ?? '',
    method: form.get('method') ?? 'GET',
    integrationSortingOrder: int('integrationSortingOrder') ?? 0,
    paginationType: type,
    pageSize: int('pageSize'),
    responseDataPath: form.get('responseDataPath') ?? '',
    scheduleSeconds: int('scheduleSeconds'),
  };
  const maxPages = int('maxPages');
  if (maxPages !== undefined && maxPages !== null) input.maxPages = maxPages;
  if ((form.get('method') ?? 'GET') === 'POST') input.body = (form.get('body') ?? '') === '' ? null : form.get('body');
  if (isType(type)) {
    for (const { field, input: kind } of ownSettings(type))
      input[field] = kind === 'checkbox' ? form.get(field) === 'on' : (form.get(field) ?? '');
  }
  return input as unknown as EndpointInput;
}

function previewPanel(p: PagePreview): Html {
  const next =
    p.next.kind === 'next'
      ? html`Pagination would request next: <code>${p.next.url}</code>`
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

  async function form(ctx: ConsoleContext, action: string, v: Values, isNew: boolean, error?: string): Promise<Html> {
    const [connections, integrations] = await Promise.all([listConnections(db.kysely), listIntegrations(db.kysely)]);
    const type: PaginationType = isType(text(v.paginationType)) ? (text(v.paginationType) as PaginationType) : 'none';
    const disabled = !ctx.can('configureRest');
    return html`${formError(error)}
      <form
        method="post"
        action="${action}"
        ${ctx.can('configureRest') ? html` hx-post="/rest/endpoints/validate" hx-trigger="change delay:300ms" hx-target="#validation" hx-swap="innerHTML"` : ''}
      >
        <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
        ${isNew ? field({ name: 'code', label: 'Code', required: true, value: text(v.code) }) : html`<input type="hidden" name="code" value="${text(v.code)}" />`}
        ${field({
          kind: 'select',
          name: 'connectionCode',
          label: 'Connection',
          required: true,
          disabled,
          options: connections.map((c) => [c.code, `${c.code} (${c.baseUrl})`] as const),
          value: text(v.connectionCode),
        })}
        ${field({ kind: 'select', name: 'method', label: 'Method', disabled, options: HTTP_METHODS, value: text(v.method) || 'GET' })}
        ${field({
          name: 'path',
          label: 'Path',
          required: true,
          size: 60,
          value: text(v.path),
          disabled,
          help: "Relative to the connection's base URL, or absolute on its origin; may carry a query.",
        })}
        ${field({ kind: 'textarea', name: 'body', label: 'Body (POST only)', rows: 3, value: text(v.body), disabled })}
        ${field({
          kind: 'select',
          name: 'integrationSortingOrder',
          label: 'Integration',
          required: true,
          disabled,
          options: integrations.map((i) => [String(i.sortingOrder), `${i.sortingOrder} ${i.name}`] as const),
          value: text(v.integrationSortingOrder),
        })}
        ${field({
          kind: 'number',
          name: 'scheduleSeconds',
          label: 'Schedule (seconds)',
          min: 1,
          value: text(v.scheduleSeconds),
          disabled,
          help: 'Import every N seconds; blank: on demand only.',
        })}
        <fieldset>
          <legend>Pagination</legend>
          ${field({
            kind: 'select',
            name: 'paginationType',
            label: 'Pagination Type',
            disabled,
            options: PAGINATION_TYPES.map((t) => [t, paginationOf(t).title] as const),
            value: type,
            help: PAGINATION_TYPE_HELP,
            attributes: html` hx-get="/rest/pagination-fields" hx-target="#pagination-fields" hx-trigger="change" hx-include="closest form"`,
          })}
          <div id="pagination-fields" aria-live="polite">${paginationFields(type, v)}</div>
        </fieldset>
        <div id="validation" aria-live="polite"></div>
        ${ctx.can('configureRest') ? html`<button type="submit">${isNew ? 'Create endpoint' : 'Save endpoint'}</button>` : ''}
        ${isNew && ctx.can('configure') ? html`<button type="submit" class="secondary" formaction="/integrations/from-sample/endpoint" formnovalidate>Preview first page and create its table</button>` : ''}
      </form>`;
  }

  async function card(ctx: ConsoleContext, code: string, extra: Html | string = '', error?: string, typed?: Values): Promise<Html> {
    const endpoint = await getEndpoint(db.kysely, code);
    if (endpoint === undefined) throw new AppError(404, 'notFound', `No REST API endpoint '${code}'.`);
    const view: EndpointView = endpointViewOf(endpoint);
    // Plain form posts, without htmx: Preview answers the card with its result, Run redirects to the run's page.
    const actions = (verb: string, label: string, secondary = false) =>
      actionButton({ action: path(['rest', 'endpoints', code, verb]), label, csrfToken: ctx.csrfToken, secondary, showsPage: true });
    return ctx.page(
      `REST API endpoint ${code}`,
      html`<p>
          <a href="/rest">← REST API connections and endpoints</a> ·
          <a href="${path(['runs'], { endpoint: code })}">Import runs of this endpoint</a>
        </p>
        <p>
          ${ctx.can('configureRest') ? actions('preview', 'Preview first page', true) : ''}
          ${ctx.can('runImports') ? actions('run', 'Run import now') : ''}
        </p>
        ${extra} ${await form(ctx, path(['rest', 'endpoints', code]), { ...(view as unknown as Values), ...typed }, false, error)}`,
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

    router.post('/rest/endpoints/validate', 'configureRest', async (_request, _ctx, body) => {
      try {
        await resolveUnsavedEndpoint(db, inputFrom(body, body.get('code') ?? 'unsaved'), secrets);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        return html`<p class="field-error" role="alert">${err.message}</p>`;
      }
      return html`<p class="ok">These settings are valid.</p>`;
    });

    router.get(
      '/rest/endpoints/new',
      'configureRest',
      async (request, ctx) =>
        ctx.page(
          'New REST API endpoint',
          await form(ctx, '/rest/endpoints/new', { connectionCode: request.query.connection ?? '', paginationType: 'none' }, true),
        ),
      { query: NewEndpointQuery },
    );

    router.post('/rest/endpoints/new', 'configureRest', async (_request, ctx, body) => {
      const code = body.get('code') ?? '';
      try {
        await createEndpoint(db, inputFrom(body, code), clock);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        return ctx.page('New REST API endpoint', await form(ctx, '/rest/endpoints/new', Object.fromEntries(body), true, err.message));
      }
      return redirect(path(['rest', 'endpoints', code]), { kind: 'info', text: `Endpoint ${code} was created.` });
    });

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
          return card(ctx, code, '', `Not saved: ${err.message}`, Object.fromEntries(body));
        }
        return redirect(path(['rest', 'endpoints', code]), { kind: 'info', text: `Endpoint ${code} was saved.` });
      },
      CodeParams,
    );

    router.post(
      '/rest/endpoints/:code/preview',
      'configureRest',
      async (request, ctx) => {
        const code = request.params.code;
        const endpoint = await loadEndpoint(db, code);
        const connection = await loadConnection(db, endpoint.connectionCode, secrets);
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
      CodeParams,
    );
  };
}
