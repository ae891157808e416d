/**
 * The REST API endpoint form: its fields, the **Pagination** section showing only the settings the
 * chosen Pagination Type uses (rendered from the type's declaration, src/pagination/, each marked with
 * the type that requires it), where each property the rules may name is shown, and the input it sends.
 * The form checks itself as it changes against `<action>/validate`, which runs what its submit runs.
 */
import { Type } from 'typebox';
import { FormBody, FormText, type ConsoleContext } from '../console/console.js';
import { NO_ERRORS, numberAt, type FormErrors, type FormPlaces } from '../console/form-errors.js';
import { html, type Html } from '../console/html.js';
import { field, formError, table } from '../console/widgets.js';
import {
  COMMON_SETTINGS,
  MAX_PAGES_SUGGESTIONS,
  OWN_SETTINGS,
  PAGINATION_TYPE_HELP,
  PAGINATION_TYPES,
  paginationOf,
  type PaginationType,
  type SettingDeclaration,
} from '../pagination/index.js';
import { HTTP_METHODS } from './model.js';
import { LIMITS, type EndpointInput } from './schemas.js';
import { parseResponseActions, responseActionsText } from './response-actions.js';
import { CURSOR_FIELD_TYPES, DEFAULT_INITIAL } from './cursor-values.js';

/** The response actions as the form shows them: an answer's list as text, a refused form's text as typed. */
const actionsText = (value: unknown): string =>
  Array.isArray(value) ? responseActionsText(value as Parameters<typeof responseActionsText>[0]) : typeof value === 'string' ? value : '';

/** What the form's selects offer. */
export interface EndpointChoices {
  readonly connections: readonly { readonly code: string; readonly baseUrl: string }[];
  readonly integrations: readonly { readonly sortingOrder: number; readonly name: string }[];
}

const Optional = (maxLength?: number) => Type.Optional(FormText(maxLength));
/** The fields of one pagination type are there, the others not: every field is optional. */
export const EndpointBody = FormBody({
  code: Optional(),
  connectionCode: Optional(),
  method: Optional(100),
  path: Optional(),
  body: Optional(256 * 1024),
  integrationSortingOrder: Optional(100),
  scheduleSeconds: Optional(100),
  paginationType: Optional(100),
  pageSize: Optional(100),
  maxPages: Optional(100),
  responseDataPath: Optional(),
  responseActions: Optional(2000),
  sessionCookies: Optional(10),
  cursorField: Optional(),
  cursorFieldType: Optional(100),
  cursorFieldInitialValue: Optional(),
  cursorFieldLookback: Optional(100),
  ...(Object.fromEntries(OWN_SETTINGS.map((o) => [o.setting.field, Optional()])) as Record<string, ReturnType<typeof Optional>>),
});

/** Where the endpoint form shows each property the rules may name. */
export const ENDPOINT_PLACES: FormPlaces = {
  inputs: {
    code: { name: 'code', label: 'Code' },
    connectionCode: { name: 'connectionCode', label: 'Connection' },
    method: { name: 'method', label: 'Method' },
    path: { name: 'path', label: 'Path' },
    body: { name: 'body', label: 'Body' },
    integrationSortingOrder: { name: 'integrationSortingOrder', label: 'Integration' },
    scheduleSeconds: { name: 'scheduleSeconds', label: 'Schedule (seconds)' },
    paginationType: { name: 'paginationType', label: 'Pagination Type' },
    pageSize: { name: 'pageSize', label: COMMON_SETTINGS.pageSize.label },
    maxPages: { name: 'maxPages', label: COMMON_SETTINGS.maxPages.label },
    responseDataPath: { name: 'responseDataPath', label: COMMON_SETTINGS.responseDataPath.label },
    responseActions: { name: 'responseActions', label: 'Response actions' },
    sessionCookies: { name: 'sessionCookies', label: 'Session cookies' },
    cursorField: { name: 'cursorField', label: 'Cursor field' },
    cursorFieldType: { name: 'cursorFieldType', label: 'Cursor field type' },
    cursorFieldInitialValue: { name: 'cursorFieldInitialValue', label: 'Initial value' },
    cursorFieldLookback: { name: 'cursorFieldLookback', label: 'Lookback' },
    ...Object.fromEntries(OWN_SETTINGS.map(({ setting }) => [setting.field, { name: setting.field, label: setting.label }])),
  },
};

export const isType = (v: string): v is PaginationType => (PAGINATION_TYPES as readonly string[]).includes(v);
export type Values = Partial<Record<string, string | number | boolean | null>>;
export const text = (v: Values[string]): string => (v === null || v === undefined || v === false ? '' : String(v));
/** The own settings of a type, as its declaration lists them (label, kind of input, help). */
const ownSettings = (type: PaginationType): readonly SettingDeclaration[] => Object.values(paginationOf(type).settings);

/** A pagination setting's text input; the ids keep a `p-` prefix, apart from the endpoint's own fields. */
function textField(
  name: string,
  label: string,
  v: Values,
  help: string,
  errors: FormErrors,
  input: { kind?: 'number'; min?: number; required?: boolean; requiredFor?: string } = {},
): Html {
  return field({ ...input, name, id: `p-${name}`, label, value: text(v[name]), help, ...errors.on(name) });
}

function checkbox(name: string, label: string, v: Values, help: string, errors: FormErrors): Html {
  return field({ kind: 'checkbox', name, id: `p-${name}`, label, checked: v[name] === true || v[name] === 'on', help, ...errors.on(name) });
}

/** One own setting of a pagination type, as its declaration describes it. */
function ownField(setting: SettingDeclaration, title: string, v: Values, errors: FormErrors): Html {
  switch (setting.input) {
    case 'checkbox':
      return checkbox(setting.field, setting.label, v, setting.help, errors);
    case 'text':
      return textField(setting.field, setting.label, v, setting.help, errors, { required: true, requiredFor: title });
    case 'optionalText':
      return textField(setting.field, setting.label, v, setting.help, errors);
    case 'select':
      return field({
        kind: 'select',
        name: setting.field,
        id: `p-${setting.field}`,
        label: setting.label,
        options: setting.options.map((o) => [o, setting.optionLabels[o] ?? o] as const),
        value: text(v[setting.field]) || setting.byDefault,
        help: setting.help,
        ...errors.on(setting.field),
      });
    default: {
      const never: never = setting;
      throw new Error(`unknown kind of field ${JSON.stringify(never)}`);
    }
  }
}

/** The spec's suggested Max Pages, as a small table under the field. */
const maxPagesSuggestions = (): Html =>
  table({
    caption: 'Max Pages: suggested values',
    rows: MAX_PAGES_SUGGESTIONS,
    columns: [
      { header: 'Expected volume', cell: (r) => r.volume },
      { header: 'Page Size', numeric: true, cell: (r) => r.pageSize },
      { header: 'Max Pages', numeric: true, cell: (r) => r.maxPages },
    ],
  });

/** The settings of one pagination type, then those every type has; each marked with the type that requires it. */
export function paginationFields(type: PaginationType, v: Values, errors: FormErrors = NO_ERRORS): Html {
  const { title } = paginationOf(type);
  const own = ownSettings(type).map((setting) => ownField(setting, title, v, errors));
  const countsRecords = paginationOf(type).pageSize === 'counted';
  const { pageSize, maxPages, responseDataPath } = COMMON_SETTINGS;
  return html`${own}
  ${textField('pageSize', pageSize.label, v, pageSize.help, errors, {
    kind: 'number',
    min: 1,
    ...(countsRecords ? { required: true, requiredFor: title } : {}),
  })}
  ${textField('maxPages', maxPages.label, v, maxPages.help, errors, { kind: 'number', min: 1 })} ${maxPagesSuggestions()}
  ${textField('responseDataPath', responseDataPath.label, v, responseDataPath.help, errors)}`;
}

/** A refused form's values as typed: a checkbox left unticked is off, not the stored value. */
export function typedValues(form: URLSearchParams): Values {
  const values: Record<string, string | boolean> = Object.fromEntries([...form].filter(([name]) => name !== '_csrf'));
  const type = form.get('paginationType') ?? 'none';
  if (isType(type)) for (const { field, input } of ownSettings(type)) if (input === 'checkbox') values[field] = form.get(field) === 'on';
  values.sessionCookies = form.get('sessionCookies') === 'on';
  return values;
}

/** The endpoint input a form sent: only the current pagination type's own settings (the others are kept). */
export function inputFrom(form: URLSearchParams, code: string): EndpointInput {
  const int = (name: string): number | null | undefined => {
    const n = numberAt(form.get(name) ?? '', name);
    return n === null && name === 'maxPages' ? undefined : n;
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
    responseActions: parseResponseActions(form.get('responseActions') ?? '', 'responseActions'),
    sessionCookies: form.get('sessionCookies') === 'on',
  };
  for (const name of ['cursorField', 'cursorFieldType', 'cursorFieldInitialValue', 'cursorFieldLookback']) {
    const value = (form.get(name) ?? '').trim();
    input[name] = value === '' ? null : value;
  }
  const maxPages = int('maxPages');
  if (maxPages !== undefined && maxPages !== null) input.maxPages = maxPages;
  if ((form.get('method') ?? 'GET') === 'POST') input.body = (form.get('body') ?? '') === '' ? null : form.get('body');
  if (isType(type)) {
    for (const { field, input: kind } of ownSettings(type))
      input[field] = kind === 'checkbox' ? form.get(field) === 'on' : (form.get(field) ?? '');
  }
  return input as unknown as EndpointInput;
}

const TEMPLATE_HELP =
  'The path, query parameter values, header values and body may hold {{lastSuccessfulRun.startedAt}} (when the last successful run started; 1970-01-01T00:00:00Z before the first) and {{cursor}} (the bookmark below), with a format: |iso (default), |date or |unix.';

/** The Incremental imports section: the cursor field bookmark's settings. */
function incrementalFields(v: Values, disabled: boolean, errors: FormErrors): Html {
  const at = (name: string) => errors.on(name);
  return html`<fieldset>
    <legend>Incremental imports</legend>
    ${field({
      name: 'cursorField',
      label: 'Cursor field',
      value: text(v.cursorField),
      disabled,
      help: 'The record field the bookmark follows (e.g. updated_at, or an increasing id; a dot path or JSONPath). After each successful run the highest value imported is kept and {{cursor}} sends it on the next run; a failed or cancelled run leaves it. Blank: no bookmark.',
      ...at('cursorField'),
    })}
    ${field({
      kind: 'select',
      name: 'cursorFieldType',
      label: 'Cursor field type',
      disabled,
      options: CURSOR_FIELD_TYPES.map((t) => [t, t === 'dateTime' ? 'Date-time (ISO 8601)' : 'Number'] as const),
      value: text(v.cursorFieldType) || 'dateTime',
      help: 'How the values are read and compared.',
      ...at('cursorFieldType'),
    })}
    ${field({
      name: 'cursorFieldInitialValue',
      label: 'Initial value',
      value: text(v.cursorFieldInitialValue),
      disabled,
      help: `What {{cursor}} sends on the first run and after a reset. Blank: ${DEFAULT_INITIAL.dateTime} (date-time) or ${DEFAULT_INITIAL.number} (number).`,
      ...at('cursorFieldInitialValue'),
    })}
    ${field({
      name: 'cursorFieldLookback',
      label: 'Lookback',
      value: text(v.cursorFieldLookback),
      disabled,
      help: 'Subtracted from the bookmark before it is sent, to catch records written late: a duration for a date-time (30s, 15m, 2h, 1d or PT15M), a number for a number. With upsert the records fetched again only update the same rows. Blank: none.',
      ...at('cursorFieldLookback'),
    })}
  </fieldset>`;
}

/** The endpoint's form; its live check runs what its submit runs (Create, or Save of the endpoint `action` names). */
export function endpointForm(
  ctx: ConsoleContext,
  choices: EndpointChoices,
  action: string,
  v: Values,
  isNew: boolean,
  errors: FormErrors = NO_ERRORS,
): Html {
  const { connections, integrations } = choices;
  const type: PaginationType = isType(text(v.paginationType)) ? (text(v.paginationType) as PaginationType) : 'none';
  const disabled = !ctx.can('configureRest');
  const at = (name: string) => errors.on(name);
  const banner = errors.summary === undefined ? undefined : `${isNew ? 'Not created' : 'Not saved'}: ${errors.summary}`;
  return html`${formError(banner)}
    <form
      method="post"
      action="${action}"
      ${ctx.can('configureRest') ? html` hx-post="${action}/validate" hx-trigger="change delay:300ms" hx-target="#validation" hx-swap="innerHTML"` : ''}
    >
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${
        isNew
          ? field({
              name: 'code',
              label: 'Code',
              required: true,
              value: text(v.code),
              help: '1 to 50 letters, digits, "_", "." or "-".',
              ...at('code'),
            })
          : html`<input type="hidden" name="code" value="${text(v.code)}" />`
      }
      ${field({
        kind: 'select',
        name: 'connectionCode',
        label: 'Connection',
        required: true,
        disabled,
        options: connections.map((c) => [c.code, `${c.code} (${c.baseUrl})`] as const),
        value: text(v.connectionCode),
        ...at('connectionCode'),
      })}
      ${field({ kind: 'select', name: 'method', label: 'Method', disabled, options: HTTP_METHODS, value: text(v.method) || 'GET', ...at('method') })}
      ${field({
        name: 'path',
        label: 'Path',
        required: true,
        size: 60,
        value: text(v.path),
        disabled,
        help: `Relative to the connection's base URL, or absolute on its origin; may carry a query. ${TEMPLATE_HELP}`,
        ...at('path'),
      })}
      ${field({
        kind: 'textarea',
        name: 'body',
        label: 'Body (POST only)',
        rows: 3,
        value: text(v.body),
        disabled,
        help: 'A JSON text sent with a POST request; other methods send none.',
        ...at('body'),
      })}
      ${field({
        kind: 'select',
        name: 'integrationSortingOrder',
        label: 'Integration',
        required: true,
        disabled,
        options: integrations.map((i) => [String(i.sortingOrder), `${i.sortingOrder} ${i.name}`] as const),
        value: text(v.integrationSortingOrder),
        ...at('integrationSortingOrder'),
      })}
      ${field({
        kind: 'number',
        name: 'scheduleSeconds',
        label: 'Schedule (seconds)',
        min: 1,
        value: text(v.scheduleSeconds),
        disabled,
        help: `Import every N seconds (${LIMITS.scheduleSeconds.min} to ${LIMITS.scheduleSeconds.max}); blank: on demand only.`,
        ...at('scheduleSeconds'),
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
          ...at('paginationType'),
        })}
        <div id="pagination-fields" aria-live="polite">${paginationFields(type, v, errors)}</div>
      </fieldset>
      <fieldset>
        <legend>Responses</legend>
        ${field({
          name: 'responseActions',
          label: 'Response actions',
          size: 40,
          value: actionsText(v.responseActions),
          disabled,
          help: `Statuses that do not fail the run, each with what it means, e.g. "404 stop, 410 skip". stop: no more records (the pages before it are imported); skip: this page has no records and fetching goes on (Page Number and Offset/Limit only). A 2xx other than 200, or a 4xx other than 401, 403, 407, 408 and 429. Blank: every status fails the run as always.`,
          ...at('responseActions'),
        })}
        ${field({
          kind: 'checkbox',
          name: 'sessionCookies',
          label: 'Session cookies',
          checked: v.sessionCookies === true || v.sessionCookies === 'on',
          disabled,
          help: "Keep the cookies the connection's origin sets during a run and send them back to it, for APIs that keep their paging state in a session cookie. A new jar per run; cookies never go to another origin and are never shown.",
          ...at('sessionCookies'),
        })}
      </fieldset>
      ${incrementalFields(v, disabled, errors)}
      <div id="validation" aria-live="polite"></div>
      ${ctx.can('configureRest') ? html`<button type="submit">${isNew ? 'Create endpoint' : 'Save endpoint'}</button>` : ''}
      ${isNew && ctx.can('configureRest') ? html`<button type="submit" class="secondary" formaction="/rest/endpoints/new/detect-pagination" formnovalidate>Detect pagination</button>` : ''}
      ${isNew && ctx.can('configure') ? html`<button type="submit" class="secondary" formaction="/integrations/from-sample/endpoint" formnovalidate>Preview first page and create its table</button>` : ''}
    </form>`;
}
