/**
 * The console's REST API Connections: the list (with their endpoints), a new connection, and the card
 * with its authentication. Secrets are write-only: the card says "set" or "not set" and never shows a
 * value; a blank secret field keeps the stored one. "Test connection" calls the base URL once.
 */
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import { redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
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

const isAuthType = (v: string): v is AuthType => (AUTH_TYPES as readonly string[]).includes(v);

/** The fields of one authentication type; secrets as password inputs that never carry the stored value. */
export function authFields(type: AuthType, values: Partial<Record<string, string | null>>, isSet: (name: SecretName) => boolean): Html {
  const uses = AUTH_USES[type];
  if (uses.settings.length === 0 && uses.secrets.length === 0) return html`<p class="hint">No credentials are sent.</p>`;
  return html`${uses.settings.map(
    (name) =>
      html`<div class="field">
        <label for="auth-${name}">${SETTING_LABELS[name]}</label><input id="auth-${name}" name="${name}" value="${values[name] ?? ''}" />
      </div>`,
  )}
  ${uses.secrets.map((name) => {
    const set = isSet(name);
    return html`<div class="field">
      <label for="secret-${name}"
        >${SECRET_LABELS[name]} <span class="status ${set ? 'ok' : 'warn'}">${set ? 'set' : 'not set'}</span></label
      >
      <input
        id="secret-${name}"
        name="${name}"
        type="password"
        autocomplete="new-password"
        value=""
        aria-describedby="secret-${name}-hint"
      />
      <p class="hint" id="secret-${name}-hint">
        Write-only: never shown again. ${set ? 'Leave blank to keep the stored value.' : 'Not set yet.'}
      </p>
    </div>`;
  })}`;
}

function connectionForm(ctx: ConsoleContext, action: string, c: Partial<ConnectionView>, isNew: boolean, error?: string): Html {
  const type: AuthType = c.authType ?? 'none';
  const dis = ctx.can('configureConnections') ? '' : html` disabled`;
  const isSet = (name: SecretName) => c[`${name}IsSet`] === true;
  return html`${error === undefined ? '' : html`<div class="flash error" role="alert">${error}</div>`}
    <form method="post" action="${action}">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${
        isNew
          ? html`<div class="field">
              <label for="code">Code</label><input id="code" name="code" required value="${c.code ?? ''}" />
              <p class="hint">1 to 50 letters, digits, "_", "." or "-".</p>
            </div>`
          : ''
      }
      <div class="field">
        <label for="baseUrl">Base URL</label
        ><input id="baseUrl" name="baseUrl" type="url" required size="60" value="${c.baseUrl ?? ''}" ${dis} />
        <p class="hint">Absolute http or https URL without credentials, query or fragment; endpoint paths are resolved against it.</p>
      </div>
      <fieldset>
        <legend>Authentication</legend>
        <div class="field">
          <label for="authType">Authentication type</label
          ><select id="authType" name="authType" ${dis} hx-get="/rest/auth-fields" hx-target="#auth-fields" hx-trigger="change">
            ${AUTH_TYPES.map((t) => html`<option value="${t}" ${t === type ? html` selected` : ''}>${AUTH_TITLES[t]}</option>`)}
          </select>
        </div>
        <div id="auth-fields" aria-live="polite">${authFields(type, c as Partial<Record<string, string | null>>, isSet)}</div>
      </fieldset>
      <fieldset>
        <legend>Requests</legend>
        <div class="field">
          <label for="timeoutMs">Timeout (ms)</label
          ><input id="timeoutMs" name="timeoutMs" type="number" min="100" value="${c.timeoutMs ?? ''}" ${dis} />
        </div>
        <div class="field">
          <label for="maxRetries">Max retries</label
          ><input id="maxRetries" name="maxRetries" type="number" min="0" value="${c.maxRetries ?? ''}" ${dis} />
          <p class="hint">Retries for 429, 5xx and network errors.</p>
        </div>
        <div class="field">
          <label for="initialDelayMs">Initial retry delay (ms)</label
          ><input id="initialDelayMs" name="initialDelayMs" type="number" min="0" value="${c.initialDelayMs ?? ''}" ${dis} />
        </div>
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
    const n = Number(v);
    if (!Number.isSafeInteger(n)) throw new AppError(400, 'invalidRequest', `${name}: must be a whole number; got '${v}'.`);
    input[name] = n;
  }
  return input as unknown as ConnectionInput;
}

export function connectionPages(deps: RestPagesDeps): ConsolePages {
  const { db, clock, secrets } = deps;
  const codeOf = (request: FastifyRequest) => (request.params as { code: string }).code;

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
        ${ctx.can('configureRest') ? html`<form method="post" action="${path(['rest', 'connections', code, 'test'])}"><input type="hidden" name="_csrf" value="${ctx.csrfToken}" /><button type="submit" class="secondary">Test connection</button></form>` : ''}
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
          <table>
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col">Base URL</th>
                <th scope="col">Authentication</th>
              </tr>
            </thead>
            <tbody>
              ${connections.map(
                (c) =>
                  html`<tr>
                    <td><a href="${path(['rest', 'connections', c.code])}">${c.code}</a></td>
                    <td>${c.baseUrl}</td>
                    <td>${AUTH_TITLES[c.authType]}</td>
                  </tr>`,
              )}
              ${
                connections.length === 0
                  ? html`<tr>
                      <td colspan="3" class="muted">No connections yet.</td>
                    </tr>`
                  : ''
              }
            </tbody>
          </table>
          <h2>Endpoints</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col">Connection</th>
                <th scope="col">Request</th>
                <th scope="col">Pagination</th>
                <th scope="col" class="num">Integration</th>
                <th scope="col">Schedule</th>
              </tr>
            </thead>
            <tbody>
              ${endpoints.map(
                (e) =>
                  html`<tr>
                    <td><a href="${path(['rest', 'endpoints', e.code])}">${e.code}</a></td>
                    <td>${e.connectionCode}</td>
                    <td><code>${e.method} ${e.path}</code></td>
                    <td>${e.pagination.type}</td>
                    <td class="num">${e.integrationSortingOrder}</td>
                    <td>${e.scheduleSeconds === null ? 'on demand' : `every ${e.scheduleSeconds} s`}</td>
                  </tr>`,
              )}
              ${
                endpoints.length === 0
                  ? html`<tr>
                      <td colspan="6" class="muted">No endpoints yet.</td>
                    </tr>`
                  : ''
              }
            </tbody>
          </table>`,
      );
    });

    // The authentication fields of the type chosen on a connection form (htmx swaps them in).
    router.get('/rest/auth-fields', 'configureConnections', async (request) => {
      const type = (request.query as { authType?: string }).authType ?? 'none';
      if (!isAuthType(type)) throw new AppError(400, 'invalidRequest', `Authentication type must be one of ${AUTH_TYPES.join(', ')}.`);
      return Promise.resolve(authFields(type, {}, () => false));
    });

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

    router.get('/rest/connections/:code', 'read', async (request, ctx) => card(ctx, codeOf(request)));

    router.post('/rest/connections/:code', 'configureConnections', async (request, ctx, form) => {
      const code = codeOf(request);
      try {
        const { code: _code, ...patch } = inputFrom(form, code);
        await updateConnection(db, code, patch, clock, secrets);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        return card(ctx, code, '', `Not saved: ${err.message}`, { baseUrl: form.get('baseUrl') ?? '' });
      }
      return redirect(path(['rest', 'connections', code]), { kind: 'info', text: `Connection ${code} was saved.` });
    });

    router.post('/rest/connections/:code/test', 'configureRest', async (request, ctx) => {
      const code = codeOf(request);
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
    });
  };
}
