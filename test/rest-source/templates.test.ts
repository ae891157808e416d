/**
 * Template variables (src/rest-source/templates.ts) and the cursor values behind `{{cursor}}`
 * (src/rest-source/cursor-values.ts): rendering with each format and escaping, the checks on save.
 */
import { describe, expect, it } from 'vitest';
import {
  compareCursorValues,
  cursorToSend,
  cursorValueOf,
  parseDuration,
  type IncrementalSettings,
} from '../../src/rest-source/cursor-values.js';
import type { RestEndpoint } from '../../src/rest-source/model.js';
import {
  jsonEscape,
  renderEndpoint,
  renderText,
  templateProblem,
  templateValuesOf,
  type TemplateValues,
} from '../../src/rest-source/templates.js';

const dateCursor: IncrementalSettings = {
  cursorField: 'updated_at',
  cursorFieldType: 'dateTime',
  cursorFieldInitialValue: null,
  cursorFieldLookback: null,
};
const numberCursor: IncrementalSettings = { ...dateCursor, cursorField: 'id', cursorFieldType: 'number' };

const VALUES: TemplateValues = {
  lastSuccessfulRunStartedAt: '2026-11-26T10:15:30.250Z',
  cursor: { value: '2026-11-25T23:59:59Z', type: 'dateTime' },
};
const NUMBER_VALUES: TemplateValues = { ...VALUES, cursor: { value: '12345678901234567890', type: 'number' } };

describe('rendering a text', () => {
  it.each([
    ['{{lastSuccessfulRun.startedAt}}', VALUES, (v: string) => v, '2026-11-26T10:15:30.250Z'],
    ['{{lastSuccessfulRun.startedAt|iso}}', VALUES, (v: string) => v, '2026-11-26T10:15:30.250Z'],
    ['{{ lastSuccessfulRun.startedAt | date }}', VALUES, (v: string) => v, '2026-11-26'],
    ['{{lastSuccessfulRun.startedAt|unix}}', VALUES, (v: string) => v, '1795688130'],
    ['since={{cursor}}&until=now', VALUES, (v: string) => v, 'since=2026-11-25T23:59:59Z&until=now'],
    ['{{cursor|unix}}', VALUES, (v: string) => v, '1795651199'],
    ['{{cursor|date}}', VALUES, (v: string) => v, '2026-11-25'],
    ['/items/{{cursor}}', VALUES, encodeURIComponent, '/items/2026-11-25T23%3A59%3A59Z'],
    ['{"a":"{{cursor}}"}', VALUES, jsonEscape, '{"a":"2026-11-25T23:59:59Z"}'],
    ['{{cursor}}', NUMBER_VALUES, (v: string) => v, '12345678901234567890'],
    ['no variables {here}', VALUES, (v: string) => v, 'no variables {here}'],
    ['{{lastSuccessfulRun.startedAt|unix}}', { lastSuccessfulRunStartedAt: '1970-01-01T00:00:00Z', cursor: null }, (v: string) => v, '0'],
  ])('%s', (text, values, escape, expected) => {
    expect(renderText(text, values, escape)).toBe(expected);
  });

  it.each([
    ['a "quoted" \\ value\n', 'a \\"quoted\\" \\\\ value\\n'],
    ['ünïcode', 'ünïcode'],
  ])('escapes %j inside a JSON string', (value, expected) => {
    expect(jsonEscape(value)).toBe(expected);
    expect(JSON.parse(`"${jsonEscape(value)}"`)).toBe(value);
  });
});

describe('an endpoint rendered for a run', () => {
  const endpoint = {
    code: 'e',
    connectionCode: 'c',
    path: '/v1/{{cursor|date}}/x y',
    method: 'POST',
    headers: { 'X-Since': '{{cursor|unix}}', Accept: 'application/json' },
    query: { since: '{{cursor}}', q: 'a&b={{cursor|date}}' },
    body: '{"filter":{"updatedAfter":"{{cursor}}","text":"{{lastSuccessfulRun.startedAt|date}}"}}',
    integrationSortingOrder: 1,
    pagination: { type: 'none', maxPages: 1, pageSize: null, responseDataPath: '' },
    scheduleSeconds: null,
    responseActions: [],
    sessionCookies: false,
    incremental: dateCursor,
  } as const satisfies RestEndpoint;

  it('renders the path percent-encoded, query and header values as they are (the URL encodes the query), the body JSON-escaped', () => {
    const rendered = renderEndpoint(endpoint, templateValuesOf(dateCursor, '2026-11-25T23:59:59Z', '2026-11-26T10:15:30Z'));
    expect(rendered.path).toBe('/v1/2026-11-25/x y');
    expect(rendered.query).toEqual({ since: '2026-11-25T23:59:59Z', q: 'a&b=2026-11-25' });
    expect(rendered.headers).toEqual({ 'X-Since': '1795651199', Accept: 'application/json' });
    expect(JSON.parse(rendered.body!)).toEqual({ filter: { updatedAfter: '2026-11-25T23:59:59Z', text: '2026-11-26' } });
  });

  it('sends the initial value, or the type default, before the first bookmark, and the epoch before the first successful run', () => {
    expect(templateValuesOf(dateCursor, null, null)).toEqual({
      lastSuccessfulRunStartedAt: '1970-01-01T00:00:00Z',
      cursor: { value: '1970-01-01T00:00:00Z', type: 'dateTime' },
    });
    expect(templateValuesOf({ ...numberCursor, cursorFieldInitialValue: '100' }, null, null).cursor).toEqual({
      value: '100',
      type: 'number',
    });
    expect(templateValuesOf(null, null, null).cursor).toBeNull();
  });
});

describe('the cursor value sent', () => {
  it.each([
    [dateCursor, null, '1970-01-01T00:00:00Z'],
    [{ ...dateCursor, cursorFieldInitialValue: '2026-01-01' }, null, '2026-01-01'],
    [{ ...dateCursor, cursorFieldLookback: '15m' }, '2026-11-26T10:00:00Z', '2026-11-26T09:45:00Z'],
    [{ ...dateCursor, cursorFieldLookback: 'P1DT2H' }, '2026-11-26T10:00:00Z', '2026-11-25T08:00:00Z'],
    [{ ...dateCursor, cursorFieldLookback: '1d' }, '2026-11-26T10:00:00.500Z', '2026-11-25T10:00:00.500Z'],
    [numberCursor, null, '0'],
    [{ ...numberCursor, cursorFieldLookback: '10' }, '12345678901234567890', '12345678901234567880'],
    [{ ...numberCursor, cursorFieldLookback: '0.5' }, '10.25', '9.75'],
  ] as const)('%j from %s sends %s', (settings, bookmark, expected) => {
    expect(cursorToSend(settings, bookmark)).toBe(expected);
  });

  it.each([
    ['2026-11-26T10:00:00Z', 'dateTime', '2026-11-26T10:00:00Z'],
    ['2026-11-26T11:00:00.123+01:00', 'dateTime', '2026-11-26T10:00:00.123Z'],
    ['2026-11-26 10:00', 'dateTime', '2026-11-26T10:00:00Z'],
    ['2026-11-26', 'dateTime', '2026-11-26T00:00:00Z'],
    ['2026-11-26T10:00:00+0100', 'dateTime', '2026-11-26T09:00:00Z'],
    [42, 'number', '42'],
    ['0042', 'number', '42'],
    ['-3.5', 'number', '-3.5'],
  ] as const)('reads %j as a %s: %s', (value, type, expected) => {
    expect(cursorValueOf(value, type)).toEqual({ value: expected });
  });

  it.each([
    ['yesterday', 'dateTime'],
    [1_700_000_000, 'dateTime'],
    ['2026-13-45', 'dateTime'],
    ['12a', 'number'],
    [true, 'number'],
  ] as const)('refuses %j as a %s', (value, type) => {
    expect(cursorValueOf(value, type)).toHaveProperty('problem');
  });

  it('compares date-times as instants and numbers as numbers, however long', () => {
    expect(compareCursorValues('2026-11-26T10:00:00Z', '2026-11-26T09:59:59.999Z', 'dateTime')).toBeGreaterThan(0);
    expect(compareCursorValues('9', '10', 'number')).toBeLessThan(0);
    expect(compareCursorValues('12345678901234567891', '12345678901234567890', 'number')).toBeGreaterThan(0);
    expect(compareCursorValues('2.5', '10', 'number')).toBeLessThan(0);
  });

  it.each([
    ['30s', 30_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['PT15M', 900_000],
    ['P1D', 86_400_000],
    ['P', null],
    ['PT', null],
    ['15 minutes', null],
    ['-5m', null],
  ])('reads the duration %s as %s ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
});

describe('the checks on save', () => {
  it.each([
    ['{{cursor}}', dateCursor, null],
    ['{{cursor|unix}} and {{lastSuccessfulRun.startedAt|date}}', dateCursor, null],
    ['{{lastSuccessfulRun.startedAt}}', null, null],
    ['{{lastRun}}', dateCursor, 'unknown template variable {{lastRun}}'],
    ['{{ cursor | epoch }}', dateCursor, 'unknown format "epoch" in {{ cursor | epoch }}'],
    ['{{cursor}}', null, '{{cursor}} needs a cursor field: set cursorField'],
    ['{{cursor|date}}', numberCursor, '{{cursor|date}}: a number cursor is sent as it is'],
    ['{{}}', dateCursor, 'unknown template variable {{}}'],
  ] as const)('%s', (text, incremental, problem) => {
    const found = templateProblem(text, incremental);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });
});
