/**
 * Template variables in an endpoint's path, query parameter values, header values and body (pure):
 * `{{lastSuccessfulRun.startedAt}}` and `{{cursor}}`, each with an optional format after a bar:
 * `|iso` (ISO 8601 in UTC, the default), `|date` (YYYY-MM-DD) or `|unix` (whole seconds since the
 * epoch); a number cursor takes no format. Checked when an endpoint is saved (`templateProblem`) and
 * rendered when a run or a preview loads it (`renderEndpoint`): percent-encoded in the path (query
 * parameter values are encoded as the URL's query), JSON-escaped in the body (a variable stands inside
 * a JSON string there), as they are in headers.
 */
import { cursorToSend, isoOf, parseDateTime, type IncrementalSettings } from './cursor-values.js';
import type { RestEndpoint } from './model.js';

export const TEMPLATE_VARIABLES = ['lastSuccessfulRun.startedAt', 'cursor'] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
export const TEMPLATE_FORMATS = ['iso', 'date', 'unix'] as const;
export type TemplateFormat = (typeof TEMPLATE_FORMATS)[number];

/** What `{{lastSuccessfulRun.startedAt}}` is before the first successful run: the epoch, so that run imports everything. */
export const NO_RUN_YET = '1970-01-01T00:00:00Z';

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;

/** Whether a text holds any `{{…}}`. */
export const hasTemplate = (text: string): boolean => /\{\{[^{}]*\}\}/.test(text);

interface Placeholder {
  readonly name: string;
  readonly format: string | undefined;
}

const parse = (inner: string): Placeholder => {
  const [name = '', format] = inner.split('|').map((part) => part.trim());
  return { name, format };
};

const KNOWN = `use {{lastSuccessfulRun.startedAt}} or {{cursor}}, optionally with a format: |iso (default), |date or |unix`;

/**
 * The problem with the template variables of one text, or null: an unknown variable or format, or
 * `{{cursor}}` on an endpoint without a cursor field (`incremental` null), or a format on a number cursor.
 */
export function templateProblem(text: string, incremental: IncrementalSettings | null): string | null {
  for (const match of text.matchAll(PLACEHOLDER)) {
    const { name, format } = parse(match[1]!);
    if (!(TEMPLATE_VARIABLES as readonly string[]).includes(name)) return `unknown template variable ${match[0]}; ${KNOWN}`;
    if (format !== undefined && !(TEMPLATE_FORMATS as readonly string[]).includes(format))
      return `unknown format "${format}" in ${match[0]}; use |iso (default), |date or |unix`;
    if (name === 'cursor') {
      if (incremental === null) return `${match[0]} needs a cursor field: set cursorField (the record field the bookmark follows)`;
      if (incremental.cursorFieldType === 'number' && format !== undefined)
        return `${match[0]}: a number cursor is sent as it is; formats (|iso, |date, |unix) are for date-time cursors`;
    }
  }
  return null;
}

/** The values the variables take for one run. */
export interface TemplateValues {
  /** ISO 8601; NO_RUN_YET before the first successful run. */
  readonly lastSuccessfulRunStartedAt: string;
  /** What `{{cursor}}` sends (cursorToSend), with its type; null when the endpoint has no cursor field. */
  readonly cursor: { readonly value: string; readonly type: IncrementalSettings['cursorFieldType'] } | null;
}

/** An instant in one format. */
export function formatInstant(ms: number, format: TemplateFormat): string {
  if (format === 'date') return new Date(ms).toISOString().slice(0, 10);
  if (format === 'unix') return String(Math.floor(ms / 1000));
  return isoOf(ms);
}

/** The text of one variable (unescaped). Throws for a variable `templateProblem` refuses. */
export function variableText(name: string, format: string | undefined, values: TemplateValues): string {
  const f = (format ?? 'iso') as TemplateFormat;
  if (name === 'lastSuccessfulRun.startedAt') return formatInstant(parseDateTime(values.lastSuccessfulRunStartedAt)!, f);
  if (name === 'cursor' && values.cursor !== null) {
    if (values.cursor.type === 'number') return values.cursor.value;
    return formatInstant(parseDateTime(values.cursor.value)!, f);
  }
  throw new Error(`template variable {{${name}}} has no value`);
}

/** A text with its variables replaced, each value passed through `escape`. */
export function renderText(text: string, values: TemplateValues, escape: (value: string) => string = (v) => v): string {
  if (!text.includes('{{')) return text;
  return text.replace(PLACEHOLDER, (_whole, inner: string) => {
    const { name, format } = parse(inner);
    return escape(variableText(name, format, values));
  });
}

/** Inside a JSON string: the value's JSON string literal without its quotes. */
export const jsonEscape = (value: string): string => JSON.stringify(value).slice(1, -1);

const mapValues = (map: Readonly<Record<string, string>>, render: (v: string) => string): Record<string, string> =>
  Object.fromEntries(Object.entries(map).map(([name, value]) => [name, render(value)]));

/** The values for an endpoint from its stored bookmark and last successful run. */
export function templateValuesOf(
  incremental: IncrementalSettings | null | undefined,
  cursorValue: string | null,
  lastSuccessfulRunStartedAt: string | null,
): TemplateValues {
  return {
    lastSuccessfulRunStartedAt: lastSuccessfulRunStartedAt ?? NO_RUN_YET,
    cursor:
      incremental === null || incremental === undefined
        ? null
        : { value: cursorToSend(incremental, cursorValue), type: incremental.cursorFieldType },
  };
}

/** The endpoint as it is sent this time: path, query values, header values and body rendered. */
export function renderEndpoint(endpoint: RestEndpoint, values: TemplateValues): RestEndpoint {
  return {
    ...endpoint,
    path: renderText(endpoint.path, values, encodeURIComponent),
    query: mapValues(endpoint.query, (v) => renderText(v, values)),
    headers: mapValues(endpoint.headers, (v) => renderText(v, values)),
    body: endpoint.body === null ? null : renderText(endpoint.body, values, jsonEscape),
  };
}
