/**
 * The console's REST API Connections: the list (with their endpoints), a new connection, and the card
 * with its authentication. Secrets are write-only: the card says "set" or "not set" and never shows a
 * value; a blank secret field keeps the stored one, and a form shown again after a refusal says which
 * typed secrets must be typed again. Errors are shown under their input. "Test connection" calls the
 * base URL once.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import { FormBody, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { formErrors, NO_ERRORS } from '../console/form-errors.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton, table } from '../console/widgets.js';
import type { Database } from '../storage/database.js';
import {
  AUTH_TITLES,
  authFields,
  CONNECTION_PLACES,
  ConnectionBody,
  connectionForm,
  inputFrom,
  isAuthType,
  typedSecrets,
  typedValues,
  type ConnectionFormState,
} from './connection-form.js';
import { AUTH_TYPES } from './model.js';
import { testConnection } from './probe.js';
import { LIMITS } from './schemas.js';
import type { SecretBox } from './secrets.js';
import type { OutboundPolicy } from './outbound-policy.js';
import { createConnection, updateConnection } from './service.js';
import { getConnection, listConnections, listEndpoints, loadConnection } from './store.js';

export interface RestPagesDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly secrets: SecretBox;
  /** Where Test connection and Preview may connect. */
  readonly outbound: OutboundPolicy;
}

const AuthFieldsQuery = Type.Object({ authType: Type.Optional(Type.String()) });
const CodeParams = { params: PathKey('code') };
const NoFields = { body: FormBody({}) };

export function connectionPages(deps: RestPagesDeps): ConsolePages {
  const { db, clock, secrets } = deps;

  /** The card; after a refused save, `refused` holds what was typed and why. */
  async function card(
    ctx: ConsoleContext,
    code: string,
    extra: Html | string = '',
    refused?: { readonly form: URLSearchParams; readonly error: string },
  ): Promise<Html> {
    const c = await getConnection(db.kysely, code);
    if (c === undefined) throw new AppError(404, 'notFound', `No REST API connection '${code}'.`);
    const endpoints = await listEndpoints(db.kysely, { connectionCode: code });
    const state: ConnectionFormState = {
      values: refused === undefined ? { ...c } : { ...typedValues(refused.form), code },
      isSet: (name) => c[`${name}IsSet`] && (refused === undefined || refused.form.get('authType') === c.authType),
      cleared: refused === undefined ? [] : typedSecrets(refused.form),
      errors: formErrors(refused?.error, CONNECTION_PLACES),
    };
    return ctx.page(
      `REST API connection ${code}`,
      html`<p><a href="/rest">← REST API connections</a></p>
        ${connectionForm(ctx, path(['rest', 'connections', code]), state, false)}
        ${
          ctx.can('configureRest')
            ? html`<div class="actions">
                ${actionButton({
                  action: path(['rest', 'connections', code, 'test']),
                  label: 'Test connection',
                  csrfToken: ctx.csrfToken,
                  secondary: true,
                  showsPage: true,
                })}
              </div>`
            : ''
        }
        ${extra}
        <h2>Endpoints</h2>
        <ul>
          ${endpoints.map((e) => html`<li><a href="${path(['rest', 'endpoints', e.code])}">${e.code}</a> <code>${e.method} ${e.path}</code></li>`)}
        </ul>
        ${ctx.can('configureRest') ? html`<p><a href="${path(['rest', 'endpoints', 'new'], { connection: code })}">New endpoint on this connection</a></p>` : ''}`,
    );
  }

  return (router) => {
    router.section({ label: 'REST APIs', href: '/rest', permission: 'read', order: 40 });

    router.get('/rest', 'read', async (_request, ctx) => {
      const [connections, endpoints] = await Promise.all([listConnections(db.kysely), listEndpoints(db.kysely)]);
      return ctx.page(
        'REST API Connections and Endpoints',
        html`${
            ctx.can('configureRest')
              ? html`<p>
                  ${ctx.can('configureConnections') ? html`<a class="button" href="/rest/connections/new">New connection</a>` : ''}
                  <a class="button" href="/rest/endpoints/new">New endpoint</a>
                </p>`
              : ''
          }
          <h2>Connections</h2>
          ${table({
            rows: connections,
            empty: 'No connections yet.',
            columns: [
              { header: 'Code', cell: (c) => html`<a href="${path(['rest', 'connections', c.code])}">${c.code}</a>` },
              { header: 'Base URL', cell: (c) => c.baseUrl },
              { header: 'Authentication', cell: (c) => AUTH_TITLES[c.authType] },
            ],
          })}
          <h2>Endpoints</h2>
          ${table({
            rows: endpoints,
            empty: 'No endpoints yet.',
            columns: [
              { header: 'Code', cell: (e) => html`<a href="${path(['rest', 'endpoints', e.code])}">${e.code}</a>` },
              { header: 'Connection', cell: (e) => e.connectionCode },
              { header: 'Request', cell: (e) => html`<code>${e.method} ${e.path}</code>` },
              { header: 'Pagination', cell: (e) => e.pagination.type },
              { header: 'Integration', numeric: true, cell: (e) => e.integrationSortingOrder },
              { header: 'Schedule', cell: (e) => (e.scheduleSeconds === null ? 'on demand' : `every ${e.scheduleSeconds} s`) },
            ],
          })}`,
      );
    });

    // The authentication fields of the type chosen on a connection form (htmx swaps them in).
    router.get(
      '/rest/auth-fields',
      'configureConnections',
      async (request) => {
        const type = request.query.authType ?? 'none';
        if (!isAuthType(type)) throw new AppError(400, 'invalidRequest', `Authentication type must be one of ${AUTH_TYPES.join(', ')}.`);
        return Promise.resolve(authFields(type, {}, { isSet: () => false }));
      },
      { query: AuthFieldsQuery },
    );

    const DEFAULTS = {
      authType: 'none',
      timeoutMs: LIMITS.timeoutMs.default,
      maxRetries: LIMITS.maxRetries.default,
      initialDelayMs: LIMITS.initialDelayMs.default,
    };
    const newPage = (ctx: ConsoleContext, state: ConnectionFormState) =>
      ctx.page('New REST API connection', connectionForm(ctx, '/rest/connections/new', state, true));

    router.get('/rest/connections/new', 'configureConnections', async (_request, ctx) =>
      Promise.resolve(newPage(ctx, { values: DEFAULTS, isSet: () => false, errors: NO_ERRORS })),
    );

    router.post(
      '/rest/connections/new',
      'configureConnections',
      async (_request, ctx, form) => {
        const code = form.get('code') ?? '';
        try {
          await createConnection(db, inputFrom(form, code), clock, secrets);
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          return newPage(ctx, {
            values: typedValues(form),
            isSet: () => false,
            cleared: typedSecrets(form),
            errors: formErrors(err.message, CONNECTION_PLACES),
          });
        }
        return redirect(path(['rest', 'connections', code]), { kind: 'info', text: `Connection ${code} was created.` });
      },
      { body: ConnectionBody },
    );

    router.get('/rest/connections/:code', 'read', async (request, ctx) => card(ctx, request.params.code), CodeParams);

    router.post(
      '/rest/connections/:code',
      'configureConnections',
      async (request, ctx, form) => {
        const code = request.params.code;
        try {
          const { code: _code, ...patch } = inputFrom(form, code);
          await updateConnection(db, code, patch, clock, secrets);
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          return card(ctx, code, '', { form, error: err.message });
        }
        return redirect(path(['rest', 'connections', code]), { kind: 'info', text: `Connection ${code} was saved.` });
      },
      { ...CodeParams, body: ConnectionBody },
    );

    router.post(
      '/rest/connections/:code/test',
      'configureRest',
      async (request, ctx) => {
        const code = request.params.code;
        if ((await getConnection(db.kysely, code)) === undefined) throw new AppError(404, 'notFound', `No REST API connection '${code}'.`);
        const result = await testConnection(await loadConnection(db, code, secrets), { outbound: deps.outbound });
        const panel = html`<section
          aria-label="Test result"
          id="test-result"
          class="${result.ok ? 'flash info' : 'flash error'}"
          role="status"
        >
          <strong>${result.ok ? 'Connection works' : 'Connection failed'}</strong>: ${result.message}.
          <span class="muted">Called <code>${result.url}</code>${result.status === null ? '' : `, HTTP ${result.status}`}.</span>
        </section>`;
        return card(ctx, code, panel);
      },
      { ...CodeParams, ...NoFields },
    );
  };
}
