/**
 * The rules of an endpoint's incremental settings (cursor-values.ts) and of the template variables in
 * its path, query parameter values, header values and body (templates.ts): a 400 naming the field and
 * the variable when one is unknown.
 */
import { invalidAt, pathOf } from '../core/validation.js';
import { pathProblem } from '../json-path/lookup.js';
import { oneOf } from './common-rules.js';
import { CURSOR_FIELD_TYPES, cursorValueOf, parseDuration, type CursorFieldType, type IncrementalSettings } from './cursor-values.js';
import type { EndpointInput } from './schemas.js';
import { hasTemplate, templateProblem } from './templates.js';

const asText = (value: string | number | null | undefined): string | null =>
  value === undefined || value === null ? null : typeof value === 'number' ? String(value) : value.trim() === '' ? null : value.trim();

/** A value an administrator sets the bookmark to (or the initial value), normalised as the bookmark stores it. */
export function bookmarkValue(value: string, type: CursorFieldType, at: string): string {
  const read = cursorValueOf(value, type);
  if ('problem' in read) throw invalidAt(at, `${read.problem}; the cursor field's type is ${type}`);
  return read.value;
}

/** The incremental settings an input declares, or null when it has no cursor field (the other settings must then be empty). */
export function validateIncremental(input: EndpointInput, at: string): IncrementalSettings | null {
  const cursorField = asText(input.cursorField);
  const initial = asText(input.cursorFieldInitialValue);
  const lookback = asText(input.cursorFieldLookback);
  if (cursorField === null) {
    for (const [name, value] of [
      ['cursorFieldInitialValue', initial],
      ['cursorFieldLookback', lookback],
    ] as const) {
      if (value !== null) throw invalidAt(pathOf(at, name), 'is used only with a cursorField; set cursorField too, or send null');
    }
    return null;
  }
  const problem = pathProblem(cursorField);
  if (problem !== null) throw invalidAt(pathOf(at, 'cursorField'), problem);
  const cursorFieldType = oneOf(CURSOR_FIELD_TYPES, input.cursorFieldType, 'dateTime', pathOf(at, 'cursorFieldType'));
  if (initial !== null) bookmarkValue(initial, cursorFieldType, pathOf(at, 'cursorFieldInitialValue'));
  if (lookback !== null) {
    const where = pathOf(at, 'cursorFieldLookback');
    if (cursorFieldType === 'dateTime' && parseDuration(lookback) === null)
      throw invalidAt(where, `"${lookback}" is not a duration: write 30s, 15m, 2h, 1d or ISO 8601 (PT15M)`);
    if (cursorFieldType === 'number' && !/^\d+(?:\.\d+)?$/.test(lookback))
      throw invalidAt(where, `"${lookback}" is not a number from 0: a number cursor looks back by a number`);
  }
  return { cursorField, cursorFieldType, cursorFieldInitialValue: initial, cursorFieldLookback: lookback };
}

/** Every text that may hold template variables, with where it is in the input. */
export function refuseBadTemplates(
  parts: {
    readonly path: string;
    readonly query: Readonly<Record<string, string>>;
    readonly queryAt: string;
    readonly headers: Readonly<Record<string, string>>;
    readonly body: string | null;
  },
  incremental: IncrementalSettings | null,
  at: string,
): void {
  const texts: [string, string][] = [
    [pathOf(at, 'path'), parts.path],
    ...Object.entries(parts.query).map(([name, value]): [string, string] => [pathOf(parts.queryAt, name), value]),
    ...Object.entries(parts.headers).map(([name, value]): [string, string] => [pathOf(pathOf(at, 'headers'), name), value]),
    ...(parts.body === null ? [] : [[pathOf(at, 'body'), parts.body] as [string, string]]),
  ];
  for (const name of Object.keys(parts.query))
    if (hasTemplate(name))
      throw invalidAt(pathOf(parts.queryAt, name), 'template variables are rendered in query parameter values, not in their names');
  for (const [where, text] of texts) {
    const problem = templateProblem(text, incremental);
    if (problem !== null) throw invalidAt(where, problem);
  }
}
