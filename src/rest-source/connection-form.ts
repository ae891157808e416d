/**
 * The REST API connection form: its fields (the authentication type's settings and write-only secrets,
 * each marked with the type that requires it), the defaults it shows, where each property the rules
 * may name is shown, and the input it sends. A refused form comes back with what was typed, except
 * its secrets, and says under each typed secret that it must be typed again.
 */
import { Type } from 'typebox';
import { FormBody, FormText, type ConsoleContext } from '../console/console.js';
import { NO_ERRORS, numberAt, type FormErrors, type FormPlaces } from '../console/form-errors.js';
import { html, type Html } from '../console/html.js';
import { field, formError } from '../console/widgets.js';
import { SECRET_LIMIT } from './common-rules.js';
import { AUTH_TYPES, type AuthType } from './model.js';
import { LIMITS, type ConnectionInput } from './schemas.js';
import { API_KEY_LOCATIONS, AUTH_SETTING_NAMES, AUTH_USES, SECRET_NAMES, type AuthSettingName, type SecretName } from './settings.js';

export const AUTH_TITLES: Readonly<Record<AuthType, string>> = {
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

/** Which type a setting or secret is required for, in the label: "(required for OAuth 2.0)". */
const REQUIRED_FOR: Readonly<Record<AuthType, string>> = {
  none: '',
  basic: 'Basic',
  bearer: 'Bearer',
  apiKey: 'API key',
  oauth2ClientCredentials: 'OAuth 2.0',
};
/** Every setting of a type is required but the OAuth scope. */
const OPTIONAL_SETTINGS: readonly AuthSettingName[] = ['scope'];
const SECRET_WORDS: Readonly<Record<SecretName, string>> = {
  password: 'the password',
  token: 'the token',
  apiKey: 'the API key',
  clientSecret: 'the client secret',
};

const Optional = (maxLength?: number) => Type.Optional(FormText(maxLength));
/** A secret's field takes more than the rules allow, so that a secret too long is refused under it. */
const SECRET_FIELD = 2 * SECRET_LIMIT;

/** A connection's form: every field optional, as the authentication type decides which are there. */
export const ConnectionBody = FormBody({
  code: Optional(),
  baseUrl: Optional(),
  authType: Optional(100),
  ...(Object.fromEntries(AUTH_SETTING_NAMES.map((n) => [n, Optional()])) as Record<AuthSettingName, ReturnType<typeof Optional>>),
  ...(Object.fromEntries(SECRET_NAMES.map((n) => [n, Optional(SECRET_FIELD)])) as Record<SecretName, ReturnType<typeof Optional>>),
  timeoutMs: Optional(100),
  maxRetries: Optional(100),
  initialDelayMs: Optional(100),
});

/** A value of a form or a stored connection as an input shows it. */
const textOf = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');

export const isAuthType = (v: string): v is AuthType => (AUTH_TYPES as readonly string[]).includes(v);

/** Where the connection form shows each property the rules may name. */
export const CONNECTION_PLACES: FormPlaces = {
  inputs: {
    code: { name: 'code', label: 'Code' },
    baseUrl: { name: 'baseUrl', label: 'Base URL' },
    authType: { name: 'authType', label: 'Authentication type' },
    ...Object.fromEntries(AUTH_SETTING_NAMES.map((n) => [n, { name: n, label: SETTING_LABELS[n] }])),
    ...Object.fromEntries(SECRET_NAMES.map((n) => [n, { name: n, label: SECRET_LABELS[n] }])),
    timeoutMs: { name: 'timeoutMs', label: 'Timeout (ms)' },
    maxRetries: { name: 'maxRetries', label: 'Max retries' },
    initialDelayMs: { name: 'initialDelayMs', label: 'Initial retry delay (ms)' },
  },
};

/** How the authentication fields are shown: which secrets are stored, which were typed and not sent back, the errors. */
export interface AuthFieldsState {
  readonly isSet: (name: SecretName) => boolean;
  /** Secrets typed in a form that was refused: the browser must be told they are blank again. */
  readonly cleared?: readonly SecretName[];
  readonly errors?: FormErrors;
  readonly disabled?: boolean;
}

/** The fields of one authentication type; secrets as password inputs that never carry the stored value. */
export function authFields(type: AuthType, values: Readonly<Record<string, unknown>>, state: AuthFieldsState): Html {
  const value = (name: string): string => textOf(values[name]);
  const uses = AUTH_USES[type];
  if (uses.settings.length === 0 && uses.secrets.length === 0) return html`<p class="hint">No credentials are sent.</p>`;
  const errors = state.errors ?? NO_ERRORS;
  const disabled = state.disabled === true;
  return html`${uses.settings.map((name) => {
    const required = !OPTIONAL_SETTINGS.includes(name);
    const common = { name, id: `auth-${name}`, label: SETTING_LABELS[name], disabled, ...errors.on(name) };
    const marks = required ? { required: true, requiredFor: REQUIRED_FOR[type] } : {};
    return name === 'apiKeyIn'
      ? field({ ...common, ...marks, kind: 'select', options: API_KEY_LOCATIONS, blank: '', value: value(name) })
      : field({ ...common, ...marks, value: value(name) });
  })}
  ${uses.secrets.map((name) => {
    const set = state.isSet(name);
    const cleared = state.cleared?.includes(name) === true;
    return field({
      kind: 'password',
      name,
      id: `secret-${name}`,
      autocomplete: 'new-password',
      value: '',
      disabled,
      required: !set,
      requiredFor: REQUIRED_FOR[type],
      label: html`${SECRET_LABELS[name]} <span class="status ${set ? 'ok' : 'warn'}">${set ? 'set' : 'not set'}</span>`,
      help: `Write-only: never shown again. ${set ? 'Leave blank to keep the stored value.' : 'Not set yet.'}`,
      ...(cleared
        ? {
            notice: `Type ${SECRET_WORDS[name]} again: it is not sent back to the browser${set ? ' (left blank, the stored one is kept)' : ''}.`,
          }
        : {}),
      ...errors.on(name),
    });
  })}`;
}

/** What a connection form shows: the values typed (or stored), the stored secrets, what was refused. */
export interface ConnectionFormState {
  readonly values: Readonly<Record<string, unknown>>;
  readonly isSet: (name: SecretName) => boolean;
  readonly cleared?: readonly SecretName[];
  readonly errors: FormErrors;
}

export function connectionForm(ctx: ConsoleContext, action: string, f: ConnectionFormState, isNew: boolean): Html {
  const c = f.values;
  const text = (name: string): string => textOf(c[name]);
  const type: AuthType = isAuthType(text('authType')) ? (text('authType') as AuthType) : 'none';
  const disabled = !ctx.can('configureConnections');
  const at = (name: string) => f.errors.on(name);
  const banner = f.errors.summary === undefined ? undefined : `${isNew ? 'Not created' : 'Not saved'}: ${f.errors.summary}`;
  return html`${formError(banner)}
    <form method="post" action="${action}">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${
        isNew
          ? field({
              name: 'code',
              label: 'Code',
              required: true,
              value: text('code'),
              help: '1 to 50 letters, digits, "_", "." or "-".',
              ...at('code'),
            })
          : ''
      }
      ${field({
        kind: 'url',
        name: 'baseUrl',
        label: 'Base URL',
        required: true,
        size: 60,
        value: text('baseUrl'),
        disabled,
        help: 'Absolute http or https URL without credentials, query or fragment; endpoint paths are resolved against it.',
        ...at('baseUrl'),
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
          ...at('authType'),
        })}
        <div id="auth-fields" aria-live="polite">
          ${authFields(type, c, {
            isSet: f.isSet,
            errors: f.errors,
            disabled,
            ...(f.cleared === undefined ? {} : { cleared: f.cleared }),
          })}
        </div>
      </fieldset>
      <fieldset>
        <legend>Requests</legend>
        ${field({
          kind: 'number',
          name: 'timeoutMs',
          label: 'Timeout (ms)',
          min: LIMITS.timeoutMs.min,
          value: text('timeoutMs'),
          disabled,
          help: `Default ${LIMITS.timeoutMs.default}.`,
          ...at('timeoutMs'),
        })}
        ${field({
          kind: 'number',
          name: 'maxRetries',
          label: 'Max retries',
          min: 0,
          value: text('maxRetries'),
          disabled,
          help: `Retries for 429, 5xx and network errors. Default ${LIMITS.maxRetries.default}.`,
          ...at('maxRetries'),
        })}
        ${field({
          kind: 'number',
          name: 'initialDelayMs',
          label: 'Initial retry delay (ms)',
          min: 0,
          value: text('initialDelayMs'),
          disabled,
          help: `Doubled on each retry. Default ${LIMITS.initialDelayMs.default}.`,
          ...at('initialDelayMs'),
        })}
      </fieldset>
      ${
        ctx.can('configureConnections')
          ? html`<button type="submit">${isNew ? 'Create connection' : 'Save connection'}</button>`
          : html`<p class="hint">Connections (where credentials are sent) are changed by holders of VENDOR IF ALL.</p>`
      }
    </form>`;
}

/** The connection input a form sent: blank secrets are left out (kept), blank numbers take the defaults. */
export function inputFrom(form: URLSearchParams, code: string): ConnectionInput {
  const authType = form.get('authType') ?? 'none';
  const input: Record<string, unknown> = { code, baseUrl: form.get('baseUrl') ?? '', authType };
  if (isAuthType(authType)) {
    for (const name of AUTH_USES[authType].settings) input[name] = (form.get(name) ?? '') === '' ? null : form.get(name);
    for (const name of AUTH_USES[authType].secrets) if ((form.get(name) ?? '') !== '') input[name] = form.get(name);
  }
  for (const name of ['timeoutMs', 'maxRetries', 'initialDelayMs']) {
    const n = numberAt(form.get(name) ?? '', name);
    if (n !== null) input[name] = n;
  }
  return input as unknown as ConnectionInput;
}

/** The secrets a refused form carried: they are not sent back, and the form says so under each. */
export const typedSecrets = (form: URLSearchParams): SecretName[] => SECRET_NAMES.filter((name) => (form.get(name) ?? '') !== '');

/** A refused form's values as typed, without its secrets. */
export const typedValues = (form: URLSearchParams): Record<string, string> =>
  Object.fromEntries([...form].filter(([name]) => name !== '_csrf' && !(SECRET_NAMES as readonly string[]).includes(name)));
