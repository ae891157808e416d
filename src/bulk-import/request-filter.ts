/**
 * The filter of the console's request list, shared by the list and its bulk actions (pages.ts): the
 * query it is read from, its checks (times read as UTC, a submitter by name or label, the page link)
 * and how it is carried on in links, hidden fields and words.
 */
import { Type, type Static } from 'typebox';
import { AppError } from '../core/errors.js';
import { wholeNumber } from '../console/console.js';
import { html, type Html } from '../console/html.js';
import { REQUEST_STATUSES, type RequestStatus } from './model.js';
import type { RequestListQuery } from './page-queries.js';

/** Requests per page of the list. */
export const PAGE_SIZE = 50;
export const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const ListQuery = Type.Object({
  status: Type.Optional(Type.String()),
  integration: Type.Optional(Type.String()),
  submitter: Type.Optional(Type.String()),
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  after: Type.Optional(Type.String()),
});
export type ListParams = Static<typeof ListQuery>;
export const FILTER_FIELDS = ['status', 'integration', 'submitter', 'from', 'to'] as const;
export type FilterParams = Partial<Record<(typeof FILTER_FIELDS)[number], string>>;

/** A filter's problems, by field: shown under the field, and the list is not shown until they are fixed. */
type FilterErrors = Partial<Record<'from' | 'to', string>>;

/** `datetime-local` values (`2026-11-24T10:00`) are read as UTC, as every time in the console is. */
function utc(value: string | undefined, label: string): { readonly iso?: string; readonly error?: string } {
  if (value === undefined || value === '') return {};
  const ms = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
  if (Number.isNaN(ms)) return { error: `${label} must be a date and time, as 2026-11-24T10:00; got '${value}'.` };
  return { iso: new Date(ms).toISOString() };
}

/**
 * Who a submitter filter names: `user:admin` or `application:erp` exactly as recorded, or a plain
 * name, which stands for the user and the application of that name.
 */
export function submitterLabels(text: string | undefined): string[] | undefined {
  const name = text?.trim() ?? '';
  if (name === '') return undefined;
  if (/^(user|application):./.test(name)) return [name];
  return [`user:${name}`, `application:${name}`];
}

export function parseList(params: ListParams): { readonly query: Omit<RequestListQuery, 'submittedBy'>; readonly errors: FilterErrors } {
  const status = params.status === undefined || params.status === '' ? undefined : params.status;
  if (status !== undefined && !(REQUEST_STATUSES as readonly string[]).includes(status))
    throw new AppError(400, 'invalidRequest', `Status must be one of ${REQUEST_STATUSES.join(', ')}.`);
  const integration = params.integration === undefined || params.integration === '' ? undefined : wholeNumber(params.integration);
  if (integration === null) throw new AppError(400, 'invalidRequest', 'Integration must be a sorting order.');
  let after: RequestListQuery['after'];
  if (params.after !== undefined && params.after !== '') {
    const [submittedAt, requestId] = params.after.split('|');
    if (submittedAt === undefined || requestId === undefined || !GUID.test(requestId) || Number.isNaN(Date.parse(submittedAt)))
      throw new AppError(400, 'invalidRequest', 'The page link is not valid; start again from the first page.');
    after = { submittedAt, requestId };
  }
  const from = utc(params.from, 'From');
  const to = utc(params.to, 'To');
  const errors: FilterErrors = {
    ...(from.error === undefined ? {} : { from: from.error }),
    ...(to.error === undefined ? {} : { to: to.error }),
  };
  if (from.iso !== undefined && to.iso !== undefined && from.iso > to.iso)
    errors.to = `To must not be earlier than From (${params.from ?? ''}): no request can be submitted in that window.`;
  return {
    errors,
    query: {
      limit: PAGE_SIZE + 1,
      ...(status === undefined ? {} : { status: status as RequestStatus }),
      ...(integration === undefined ? {} : { integrationSortingOrder: integration }),
      ...(from.iso === undefined ? {} : { from: from.iso }),
      ...(to.iso === undefined ? {} : { to: to.iso }),
      ...(after === undefined ? {} : { after }),
    },
  };
}

export const filtersOf = (params: FilterParams): Record<string, string | undefined> =>
  Object.fromEntries(FILTER_FIELDS.map((name) => [name, params[name] === '' ? undefined : params[name]]));

export const hiddenFilters = (params: FilterParams): Html =>
  html`${FILTER_FIELDS.map((name) =>
    params[name] === undefined || params[name] === '' ? '' : html`<input type="hidden" name="${name}" value="${params[name]}" />`,
  )}`;

/** The filter in words: "with status Failed, of integration 10, …" or "(no filter: every request)". */
export function describeFilter(params: FilterParams): string {
  const parts = [
    params.status ? `with status ${params.status}` : undefined,
    params.integration ? `of integration ${params.integration}` : undefined,
    params.submitter ? `submitted by ${params.submitter}` : undefined,
    params.from ? `submitted from ${params.from} (UTC)` : undefined,
    params.to ? `before ${params.to} (UTC)` : undefined,
  ].filter((p) => p !== undefined);
  return parts.length === 0 ? '(no filter: every request)' : parts.join(', ');
}
