/**
 * Cursor: each page names an opaque token for the next one (Stripe, Slack, Notion, GraphQL's
 * `endCursor`), read from the response body by a path (as Next Link reads its link) or from a response
 * header, and sent on the next request as a query parameter, a request header, or in the JSON POST
 * body at a path (a GraphQL variable), as Send Parameters In says. The first request goes without a
 * token, or with Initial Cursor. Pagination stops when a page has no token (absent, null or empty),
 * at Max Pages, or on a stop condition; a token sent twice fails the run naming it.
 */
import { compileLookup, describeJsonType } from '../json-path/lookup.js';
import {
  choiceSetting,
  declarePagination,
  optionalJsonPathSetting,
  queryParameterSetting,
  textSetting,
  type CommonSettings,
} from './declaration.js';
import { propertiesHint } from './more-signals.js';
import { headerNameProblem, parametersIn, placedNameRule, requestPlacer, type ParametersIn } from './request-places.js';
import { STOP_CONDITION_SETTINGS } from './stop-conditions.js';
import { maxPagesStop, type NextStep, type PageResponse, type Start, type Strategy } from './steps.js';

interface CursorSettings extends CommonSettings {
  readonly cursorFrom?: 'body' | 'header';
  readonly cursorPath?: string | null;
  readonly cursorHeader?: string | null;
  readonly cursorParam: string;
  readonly parametersIn?: ParametersIn;
  readonly cursorInitial?: string | null;
}

type Read =
  { readonly token: string } | { readonly token: null; readonly where: string; readonly absent: boolean } | { readonly error: string };

/** How a page's token is read: from the body at Cursor JSON Path, or from Cursor Response Header. */
function tokenReader(settings: CursorSettings): (response: PageResponse) => Read {
  if (settings.cursorFrom === 'header') {
    const name = (settings.cursorHeader ?? '').toLowerCase();
    const where = `response header ${settings.cursorHeader ?? ''}`;
    return ({ headers }) => {
      const value = headers?.[name];
      const first = typeof value === 'string' ? value : value?.[0];
      const token = first?.trim() ?? '';
      return token === '' ? { token: null, where, absent: first === undefined } : { token };
    };
  }
  const path = settings.cursorPath ?? '';
  const lookup = compileLookup(path);
  const where = `"${path}"`;
  return ({ body }) => {
    const match = lookup(body);
    if (match.kind === 'none') return { token: null, where, absent: true };
    if (match.kind === 'many') return { error: `Cursor JSON Path "${path}" finds ${match.count} values; it must name exactly one cursor` };
    const { value } = match;
    if (value === null) return { token: null, where, absent: false };
    if (typeof value === 'number' && Number.isFinite(value)) return { token: String(value) };
    if (typeof value !== 'string')
      return { error: `Cursor JSON Path "${path}" points to ${describeJsonType(value)}, not to a cursor (a string or number)` };
    return value.trim() === '' ? { token: null, where, absent: false } : { token: value };
  };
}

function noCursor(pageNo: number, where: string, absent: boolean, body: unknown): NextStep {
  if (absent && pageNo === 1) {
    const hint = where.startsWith('"') ? propertiesHint(body) : '';
    return {
      kind: 'stop',
      reason: 'noCursor',
      detail: `page 1 has no cursor at ${where}${hint}: the only page if the API has no more; if it has, the cursor setting is wrong`,
    };
  }
  return { kind: 'stop', reason: 'noCursor', detail: `page ${pageNo} has no cursor at ${where}: the last page` };
}

function cursorStart(settings: CursorSettings, firstUrl: string, body: string | null): Start {
  const place = requestPlacer(settings.parametersIn ?? 'query', firstUrl, body);
  const withCursor = (pageNo: number, token: string) => ({ pageNo, ...place({ [settings.cursorParam]: token }), cursor: token });
  const read = tokenReader(settings);
  const initial = settings.cursorInitial ?? '';
  const strategy: Strategy = (previous, response) => {
    const found = read(response);
    if ('error' in found) return { kind: 'fail', error: found.error };
    if (found.token === null) return noCursor(previous.pageNo, found.where, found.absent, response.body);
    if (previous.pageNo >= settings.maxPages) return maxPagesStop(settings.maxPages, `page ${previous.pageNo} still has a cursor`);
    return { kind: 'next', request: withCursor(previous.pageNo + 1, found.token) };
  };
  return { first: initial === '' ? { pageNo: 1, url: firstUrl } : withCursor(1, initial), strategy };
}

export const cursor = declarePagination({
  type: 'cursor',
  title: 'Cursor',
  help: 'Cursor: each page names a token sent on the next request.',
  pageSize: 'informational',
  settings: {
    cursorFrom: choiceSetting({
      field: 'cursorFrom',
      label: 'Cursor From',
      description: 'Cursor: where a page names the next cursor: body (default, at cursorJsonPath) or header (cursorResponseHeader)',
      help: 'Where each page names the next cursor: in the response body (Cursor JSON Path) or in a response header (Cursor Response Header).',
      optionLabels: { body: 'Response body', header: 'Response header' },
      byDefault: 'body',
    }),
    cursorPath: optionalJsonPathSetting({
      field: 'cursorJsonPath',
      label: 'Cursor JSON Path',
      description:
        'Cursor, from body: where the next cursor is (a property name, a dot path such as response_metadata.next_cursor, or a JSONPath such as $.data[-1].id)',
      help: "Where the next cursor is in the body: next_cursor, response_metadata.next_cursor, data.items.pageInfo.endCursor, or $.data[-1].id (the last record's id). No cursor (absent, null or empty): the last page.",
    }),
    cursorHeader: textSetting({
      field: 'cursorResponseHeader',
      label: 'Cursor Response Header',
      description: 'Cursor, from header: the response header that carries the next cursor',
      help: 'The response header that carries the next cursor (e.g. X-Next-Cursor). Absent or empty: the last page.',
    }),
    cursorParam: queryParameterSetting({
      field: 'cursorParameterName',
      label: 'Cursor Parameter Name',
      description:
        'Cursor: the name the cursor is sent under on the next request: a query parameter, a request header, or a dot path into the JSON body (variables.after), as parametersIn says',
      help: 'The name the cursor is sent under: a query parameter (cursor, starting_after), a request header, or a dot path into the JSON body (variables.after for a GraphQL variable), as Send Parameters In says.',
      needs: 'the name the cursor is sent under on the next request (e.g. "cursor", "starting_after" or "variables.after")',
    }),
    parametersIn,
    cursorInitial: textSetting({
      field: 'cursorInitialValue',
      label: 'Initial Cursor',
      description: 'Cursor: a cursor sent on the first request too; null: the first request goes without one',
      help: 'Optional: a cursor to send on the first request. Blank: the first request goes without one.',
    }),
    ...STOP_CONDITION_SETTINGS,
  },
  rules: [
    {
      setting: 'cursorPath',
      broken: (s) => (s.cursorFrom ?? 'body') === 'body' && (s.cursorPath ?? '').trim() === '',
      problem: 'Cursor JSON Path is required when the cursor comes from the body',
      fieldProblem: () =>
        'Cursor pagination needs a Cursor JSON Path when the cursor comes from the body: where the next cursor is (e.g. "next_cursor")',
    },
    {
      setting: 'cursorHeader',
      broken: (s) =>
        s.cursorFrom === 'header' && ((s.cursorHeader ?? '').trim() === '' || headerNameProblem(s.cursorHeader ?? '') !== null),
      problem: 'Cursor Response Header must be a header name when the cursor comes from a header',
      fieldProblem: (s) =>
        (s.cursorHeader ?? '').trim() === ''
          ? 'Cursor pagination needs a Cursor Response Header when the cursor comes from a header (e.g. "X-Next-Cursor")'
          : (headerNameProblem(s.cursorHeader ?? '') ?? ''),
    },
    placedNameRule('cursorParam', 'Cursor Parameter Name'),
  ],
  start: (settings, firstUrl, _origin, body) => cursorStart(settings, firstUrl, body),
});
