/**
 * The console's REST API Connections: the list (with their endpoints), a new connection, and the card
 * with its authentication. Secrets are write-only: the card says "set" or "not set" and never shows a
 * value; a blank secret field keeps the stored one. "Test connection" calls the base URL once.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import { formInteger, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton, field, formError, table } from '../console/widgets.js';
import type { Database } from '../storage/database.js';
import { AUTH_TYPES, type AuthType } from './model.js';
import { testConnection } from './probe.js';
import type { ConnectionInput } from './schemas.js';
import type { SecretBox } from './secrets.js';
import type { OutboundPolicy } from './outbound-policy.js';
import { createConnection, updateConnection } from './service.js';
import { AUTH_USES, type AuthSettingName, type SecretName } from './settings.js';
import { getConnection, listConnections, listEndpoints, loadConnection, type ConnectionView } from './store.js';

export interface RestPagesDeps {
  readonly db: Database;
  readonly clock: Clock;
  readonly secrets: SecretBox;
  /** Where Test connection and Preview may connect. */
  readonly outbound: OutboundPolicy;
}

const AUTH_TITLES: Readonly<Record<AuthType, string>> = {
  none: 'None',
  basic: 'Basic (user name and password)',
  bearer: 'Bearer token',
  apiKey: 'API key',
  oauth2ClientCredentials: 'OAuth 2.0 client credentials',
};
const SETTING_LABELS: Readonly<Record<AuthSettingName, string>> = {
  username: 'User name',
  apiKeyName: 'API key name',
  apiKeyIn: 'API key sent in (header or query)',
  tokenUrl: 'Token URL',
  clientId: 'Client ID',
  scope: 'Scope',
};
const SECRET_LABELS: Readonly<Record<SecretName, string>> = {
  password: 'Password',
  token: 'Token',
  apiKey: 'API key',
  clientSecret: 'Client secret',
};

const AuthFieldsQuery = Type.Object({ authType: Type.Optional(Type.String()) });
const CodeParams = { params: PathKey('code') };

const isAuthType = (v: string): v is AuthType => (AUTH_TYPES as readonly string[]).includes(v);

/** The fields of one authentication type; secrets as password inputs that never carry the stored value. */
export function authFields(type: AuthType, values: Partial<Record<string, string | null>>, isSet: (name: SecretName) => boolean): Html {
  const uses = AUTH_USES[type];
  if (uses.settings.length === 0 && uses.secrets.length === 0) return html`<p class="hint">No credentials are sent.</p>`;
  return html`${uses.settings.map((name) => field({ name, id: `auth-${name}`, label: SETTING_LABELS[name], value: values[name] }))}
  ${uses.secrets.map((name) => {
    const set = isSet(name);
    return field({
      kind: 'password',
      name,
      id: `secret-${name}`,
      autocomplete: 'new-password',
      value: '',
      label: html`${SECRET_LABELS[name]} <span class="status ${set ? 'ok' : 'warn'}">${set ? 'set' : 'not set'}</span>`,
      help: `Write-only: never shown again. ${set ? 'Leave blank to keep the stored value.' : 'Not set yet.'}`,
    });
  })}`;
}

function connectionForm(ctx: ConsoleContext, action: string, c: Partial<ConnectionView>, isNew: boolean, error?: string): Html {
  const type: AuthType = c.authType ?? 'none';
  const disabled = !ctx.can('configureConnections');
  const isSet = (name: SecretName) => c[`${name}IsSet`] === true;
  return html`${formError(error)}
    <form method="post" action="${action}">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${
        isNew
          ? field({ name: 'code', label: 'Code', required: true, value: c.code, help: '1 to 50 letters, digits, "_", "." or "-".' })
          : ''
      }
      ${field({
        kind: 'url',
        name: 'baseUrl',
        label: 'Base URL',
        required: true,
        size: 60,
        value: c.baseUrl,
        disabled,
        help: 'Absolute http or https URL without credentials, query or fragment; endpoint paths are resolved against it.',
      })}
      <fieldset>
        <legend>Authentication</legend>
        ${field({
          kind: 'select',
          name: 'authType',
          label: 'Authentication type',
          options: AUTH_TYPES.map((t) => [t, AUTH_TITLES[t]] as const),
          value: type,
          disabled,
          attributes: html` hx-get="/rest/auth-fields" hx-target="#auth-fields" hx-trigger="change"`,
        })}
        <div id="auth-fields" aria-live="polite">${authFields(type, c as Partial<Record<string, string | null>>, isSet)}</div>
      </fieldset>
      <fieldset>
        <legend>Requests</legend>
        ${field({ kind: 'number', name: 'timeoutMs', label: 'Timeout (ms)', min: 100, value: c.timeoutMs, disabled })}
        ${field({
          kind: 'number',
          name: 'maxRetries',
          label: 'Max retries',
          min: 0,
          value: c.maxRetries,
          disabled,
          help: 'Retries for 429, 5xx and network errors.',
        })}
        ${field({ kind: 'number', name: 'initialDelayMs', label: 'Initial retry delay (ms)', min: 0, value: c.initialDelayMs, disabled })}
      </fieldset>
      ${
        ctx.can('configureConnections')
          ? html`<button type="submit">${isNew ? 'Create connection' : 'Save connection'}</button>`
          : html`<p class="hint">Connections (where credentials are sent) are changed by holders of VENDOR IF ALL.</p>`
      }
    </form>`;
}

/** The connection input a form sent: blank secrets are left out (kept), blank numbers take the defaults. */
function inputFrom(form: URLSearchParams, code: string): ConnectionInput {
  const authType = form.get('authType') ?? 'none';
  const input: Record<string, unknown> = { code, baseUrl: form.get('baseUrl') ?? '', authType };
  if (isAuthType(authType)) {
    for (const name of AUTH_USES[authType].settings) input[name] = (form.get(name) ?? '') === '' ? null : form.get(name);
    for (const name of AUTH_USES[authType].secrets) if ((form.get(name) ?? '') !== '') input[name] = form.get(name);
  }
  for (const name of ['timeoutMs', 'maxRetries', 'initialDelayMs']) {
    const v = (form.get(name) ?? '').trim();
    if (v === '') continue;
    input[name] = formInteger(v, name);
  }
  return input as unknown as ConnectionInput;
}

export function connectionPages(deps: RestPagesDeps): ConsolePages {
  const { db, clock, secrets } = deps;

  async function card(
    ctx: ConsoleContext,
    code: string,
    extra: Html | string = '',
    error?: string,
    typed?: Partial<ConnectionView>,
  ): Promise<Html> {
    const c = await getConnection(db.kysely, code);
    if (c === undefined) throw new AppError(404, 'notFound', `No REST API connection '${code}'.`);
    const endpoints = await listEndpoints(db.kysely, { connectionCode: code });
    return ctx.page(
      `REST API connection ${code}`,
      html`<p><a href="/rest">← REST API connections</a></p>
        ${connectionForm(ctx, path(['rest', 'connections', code]), { ...c, ...typed }, false, error)}
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
        return Promise.resolve(authFields(type, {}, () => false));
      },
      { query: AuthFieldsQuery },
    );

    router.get('/rest/connections/new', 'configureConnections', async (_request, ctx) =>
      Promise.resolve(ctx.page('New REST API connection', connectionForm(ctx, '/rest/connections/new', {}, true))),
    );

    router.post('/rest/connections/new', 'configureConnections', async (_request, ctx, form) => {
      const code = form.get('code') ?? '';
      try {
        await createConnection(db, inputFrom(form, code), clock, secrets);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        const typed = {
          code,
          baseUrl: form.get('baseUrl') ?? '',
          authType: isAuthType(form.get('authType') ?? '') ? (form.get('authType') as AuthType) : 'none',
        };
        return ctx.page('New REST API connection', connectionForm(ctx, '/rest/connections/new', typed, true, err.message));
      }
      return redirect(path(['rest', 'connections', code]), { kind: 'info', text: `Connection ${code} was created.` });
    });

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
          return card(ctx, code, '', `Not saved: ${err.message}`, { baseUrl: form.get('baseUrl') ?? '' });
        }
        return redirect(path(['rest', 'connections', code]), { kind: 'info', text: `Connection ${code} was saved.` });
      },
      CodeParams,
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
      CodeParams,
    );
  };
}
