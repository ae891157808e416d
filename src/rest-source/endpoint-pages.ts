/**
 * The console's REST API Endpoints: a new endpoint and the card, with the **Pagination** section
 * showing only the settings the chosen Pagination Type uses (htmx swaps them when the type changes),
 * rendered from the type's declaration (src/pagination/) with the spec's help text beside each, validation as the form changes (the same rules as saving), and
 * "Preview first page": the records found on page 1 and what pagination would request next.
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../core/errors.js';
import { formInteger, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { listIntegrations } from '../integrations/store.js';
import {
  COMMON_SETTINGS,
  PAGINATION_TYPE_HELP,
  PAGINATION_TYPES,
  paginationOf,
  type PaginationType,
  type SettingDeclaration,
} from '../pagination/index.js';
import { loadDryRunIntegration } from '../table-writer/dry-run.js';
import type { RestPagesDeps } from './connection-pages.js';
import { FetchError } from './fetch-pages.js';
import { HTTP_METHODS } from './model.js';
import { previewFirstPage, type PagePreview } from './preview.js';
import type { EndpointInput } from './schemas.js';
import { createEndpoint, resolveUnsavedEndpoint, updateEndpoint } from './service.js';
import { endpointViewOf, type EndpointView } from './settings.js';
import { getEndpoint, listConnections, loadConnection, loadEndpoint } from './store.js';

const isType = (v: string): v is PaginationType => (PAGINATION_TYPES as readonly string[]).includes(v);
type Values = Partial<Record<string, string | number | boolean | null>>;
const text = (v: Values[string]): string => (v === null || v === undefined || v === false ? '' : String(v));
/** The own settings of a type, as its declaration lists them (label, kind of input, help). */
const ownSettings = (type: PaginationType): readonly SettingDeclaration[] => Object.values(paginationOf(type).settings);

function textField(name: string, label: string, v: Values, help: string, attrs: Html | string = ''): Html {
  return html`<div class="field">
    <label for="p-${name}">${label}</label
    ><input id="p-${name}" name="${name}" value="${text(v[name])}" aria-describedby="p-${name}-hint" ${attrs} />
    <p class="hint" id="p-${name}-hint">${help}</p>
  </div>`;
}

function checkbox(name: string, label: string, v: Values, help: string): Html {
  return html`<div class="field">
    <input type="checkbox" id="p-${name}" name="${name}" ${v[name] === true || v[name] === 'on' ? html` checked` : ''} />
    <label for="p-${name}" class="inline">${label}</label>
    <p class="hint">${help}</p>
  </div>`;
}

/** One own setting of a pagination type, as its declaration describes it. */
function ownField(setting: SettingDeclaration, v: Values): Html {
  switch (setting.input) {
    case 'checkbox':
      return checkbox(setting.field, setting.label, v, setting.help);
    case 'text':
      return textField(setting.field, setting.label, v, setting.help, html` required`);
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
  return html`${own}
  ${textField('pageSize', pageSize.label, v, pageSize.help, html` type="number" min="1"${countsRecords ? html` required` : ''}`)}
  ${textField('maxPages', maxPages.label, v, maxPages.help, html` type="number" min="1"`)}
  ${textField('responseDataPath', responseDataPath.label, v, responseDataPath.help)}`;
}

/** The endpoint input a form sent: only the current pagination type's own settings (the others are kept). */
function inputFrom(form: URLSearchParams, code: string): EndpointInput {
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
  const warning = p.next.kind === 'fail' ? undefined : p.next.warning;
  return html`<section aria-label="Preview" id="preview" class="card">
    <h2>Preview of page 1</h2>
    <p role="status">
      <strong>${p.recordCount} record${p.recordCount === 1 ? '' : 's'} found</strong> on <code>${p.url}</code> (HTTP ${p.status});
      ${p.recordsFoundBy}.
    </p>
    <p>${next}</p>
    ${warning === undefined ? '' : html`<p class="warning">${warning}</p>`}
    ${p.integrationError === undefined ? '' : html`<p class="flash error">The integration cannot run: ${p.integrationError}</p>`}
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
  const codeOf = (request: FastifyRequest) => (request.params as { code: string }).code;

  async function form(ctx: ConsoleContext, action: string, v: Values, isNew: boolean, error?: string): Promise<Html> {
    const [connections, integrations] = await Promise.all([listConnections(db.kysely), listIntegrations(db.kysely)]);
    const type: PaginationType = isType(text(v.paginationType)) ? (text(v.paginationType) as PaginationType) : 'none';
    const dis = ctx.can('configureRest') ? '' : html` disabled`;
    const opt = (value: string, label: string, selected: string) =>
      html`<option value="${value}" ${value === selected ? html` selected` : ''}>${label}</option>`;
    return html`${error === undefined ? '' : html`<div class="flash error" role="alert">${error}</div>`}
      <form
        method="post"
        action="${action}"
        ${ctx.can('configureRest') ? html` hx-post="/rest/endpoints/validate" hx-trigger="change delay:300ms" hx-target="#validation" hx-swap="innerHTML"` : ''}
      >
        <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
        ${isNew ? html`<div class="field"><label for="code">Code</label><input id="code" name="code" required value="${text(v.code)}" /></div>` : html`<input type="hidden" name="code" value="${text(v.code)}" />`}
        <div class="field">
          <label for="connectionCode">Connection</label
          ><select id="connectionCode" name="connectionCode" required${dis}>
            ${connections.map((c) => opt(c.code, `${c.code} (${c.baseUrl})`, text(v.connectionCode)))}
          </select>
        </div>
        <div class="field">
          <label for="method">Method</label
          ><select id="method" name="method" ${dis}>
            ${HTTP_METHODS.map((m) => opt(m, m, text(v.method) || 'GET'))}
          </select>
        </div>
        <div class="field">
          <label for="path">Path</label><input id="path" name="path" required size="60" value="${text(v.path)}" ${dis} />
          <p class="hint">Relative to the connection's base URL, or absolute on its origin; may carry a query.</p>
        </div>
        <div class="field">
          <label for="body">Body (POST only)</label><textarea id="body" name="body" rows="3" ${dis}>${text(v.body)}</textarea>
        </div>
        <div class="field">
          <label for="integrationSortingOrder">Integration</label
          ><select id="integrationSortingOrder" name="integrationSortingOrder" required${dis}>
            ${integrations.map((i) => opt(String(i.sortingOrder), `${i.sortingOrder} ${i.name}`, text(v.integrationSortingOrder)))}
          </select>
        </div>
        <div class="field">
          <label for="scheduleSeconds">Schedule (seconds)</label
          ><input id="scheduleSeconds" name="scheduleSeconds" type="number" min="1" value="${text(v.scheduleSeconds)}" ${dis} />
          <p class="hint">Import every N seconds; blank: on demand only.</p>
        </div>
        <fieldset>
          <legend>Pagination</legend>
          <div class="field">
            <label for="paginationType">Pagination Type</label
            ><select
              id="paginationType"
              name="paginationType"
              ${dis}
              hx-get="/rest/pagination-fields"
              hx-target="#pagination-fields"
              hx-trigger="change"
              hx-include="closest form"
              aria-describedby="paginationType-hint"
            >
              ${PAGINATION_TYPES.map((t) => opt(t, paginationOf(t).title, type))}
            </select>
            <p class="hint" id="paginationType-hint">${PAGINATION_TYPE_HELP}</p>
          </div>
          <div id="pagination-fields" aria-live="polite">${paginationFields(type, v)}</div>
        </fieldset>
        <div id="validation" aria-live="polite"></div>
        ${ctx.can('configureRest') ? html`<button type="submit">${isNew ? 'Create endpoint' : 'Save endpoint'}</button>` : ''}
      </form>`;
  }

  async function card(ctx: ConsoleContext, code: string, extra: Html | string = '', error?: string, typed?: Values): Promise<Html> {
    const endpoint = await getEndpoint(db.kysely, code);
    if (endpoint === undefined) throw new AppError(404, 'notFound', `No REST API endpoint '${code}'.`);
    const view: EndpointView = endpointViewOf(endpoint);
    const actions = (verb: string, label: string, cls = '') =>
      html`<form class="inline" method="post" action="${path(['rest', 'endpoints', code, verb])}">
        <input type="hidden" name="_csrf" value="${ctx.csrfToken}" /><button type="submit" ${cls === '' ? '' : html` class="${cls}"`}>
          ${label}
        </button>
      </form>`;
    return ctx.page(
      `REST API endpoint ${code}`,
      html`<p>
          <a href="/rest">← REST API connections and endpoints</a> ·
          <a href="${path(['runs'], { endpoint: code })}">Import runs of this endpoint</a>
        </p>
        <p>
          ${ctx.can('configureRest') ? actions('preview', 'Preview first page', 'secondary') : ''}
          ${ctx.can('runImports') ? actions('run', 'Run import now') : ''}
        </p>
        ${extra} ${await form(ctx, path(['rest', 'endpoints', code]), { ...(view as unknown as Values), ...typed }, false, error)}`,
    );
  }

  return (router) => {
    router.get('/rest/pagination-fields', 'configureRest', async (request) => {
      const q = request.query as Record<string, string>;
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
    });

    router.post('/rest/endpoints/validate', 'configureRest', async (_request, _ctx, body) => {
      try {
        await resolveUnsavedEndpoint(db, inputFrom(body, body.get('code') ?? 'unsaved'), secrets);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        return html`<p class="field-error" role="alert">${err.message}</p>`;
      }
      return html`<p class="ok">These settings are valid.</p>`;
    });

    router.get('/rest/endpoints/new', 'configureRest', async (request, ctx) => {
      const connection = (request.query as { connection?: string }).connection ?? '';
      return ctx.page(
        'New REST API endpoint',
        await form(ctx, '/rest/endpoints/new', { connectionCode: connection, paginationType: 'none' }, true),
      );
    });

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

    router.get('/rest/endpoints/:code', 'read', async (request, ctx) => card(ctx, codeOf(request)));

    router.post('/rest/endpoints/:code', 'configureRest', async (request, ctx, body) => {
      const code = codeOf(request);
      try {
        const { code: _code, ...patch } = inputFrom(body, code);
        await updateEndpoint(db, code, patch, clock);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        return card(ctx, code, '', `Not saved: ${err.message}`, Object.fromEntries(body));
      }
      return redirect(path(['rest', 'endpoints', code]), { kind: 'info', text: `Endpoint ${code} was saved.` });
    });

    router.post('/rest/endpoints/:code/preview', 'configureRest', async (request, ctx) => {
      const code = codeOf(request);
      const endpoint = await loadEndpoint(db, code);
      const connection = await loadConnection(db, endpoint.connectionCode, secrets);
      const integration = await loadDryRunIntegration(db, endpoint.integrationSortingOrder);
      try {
        return await card(ctx, code, previewPanel(await previewFirstPage(connection, endpoint, integration, { outbound: deps.outbound })));
      } catch (err) {
        if (!(err instanceof FetchError)) throw err;
        return card(
          ctx,
          code,
          html`<section aria-label="Preview" id="preview" class="flash error" role="alert">
            <strong>Page ${err.pageNo} failed</strong>: ${err.message}
            <span class="muted">(<code>${err.url}</code>${err.status === null ? '' : `, HTTP ${err.status}`})</span>
          </section>`,
        );
      }
    });
  };
}
