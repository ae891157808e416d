/**
 * The console's Bulk Import Requests: the list (filters, keyset pages, live while anything is in
 * flight) and the bulk actions on every request its filter selects (a page that asks first, then the
 * outcome of each request taken). A request's own page is request-page.ts, plugged in here.
 */
import { Type } from 'typebox';
import { principalLabel } from '../auth/model.js';
import { AppError } from '../core/errors.js';
import { FormBody, FormText, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { field, liveRegion, pager, select, statusBadge, table, time } from '../console/widgets.js';
import { integrationLink, integrationNames } from '../integrations/integration-link.js';
import { listIntegrations } from '../integrations/store.js';
import { BULK_ACTIONS, bulkAct, MAX_BULK, type BulkAction, type BulkResult } from './bulk-actions.js';
import { REQUEST_STATUSES } from './model.js';
import { consoleSelection, listRequestPage, submittersPresent, type RequestListRow } from './page-queries.js';
import {
  describeFilter,
  FILTER_FIELDS,
  filtersOf,
  GUID,
  hiddenFilters,
  ListQuery,
  PAGE_SIZE,
  parseList,
  submitterLabels,
  type FilterParams,
  type ListParams,
} from './request-filter.js';
import { IN_FLIGHT, requestPage, type RequestPageDeps } from './request-page.js';

export type BulkImportPagesDeps = RequestPageDeps;

const BulkQuery = Type.Object({ ...ListQuery.properties, action: Type.Optional(Type.String()) });
const BulkForm = FormBody({
  action: FormText(20),
  status: Type.Optional(FormText(20)),
  integration: Type.Optional(FormText(20)),
  submitter: Type.Optional(FormText(300)),
  from: Type.Optional(FormText(40)),
  to: Type.Optional(FormText(40)),
  after: Type.Optional(FormText(40)),
});

/** What each bulk action does, in the words of the console. */
const BULK_WORDS: Record<BulkAction, { readonly verb: string; readonly rule: string }> = {
  cancel: { verb: 'Cancel', rule: 'Only Pending and Processing requests are cancelled' },
  reset: { verb: 'Reset to Pending', rule: 'Only requests stuck in Processing are reset' },
  resubmit: { verb: 'Resubmit', rule: 'Only Failed and Cancelled requests not yet resubmitted are resubmitted, each as a new request' },
  delete: { verb: 'Delete', rule: 'Only Completed, Failed and Cancelled requests are deleted, with their payload and errors' },
};

function bulkActionOf(text: string | undefined): BulkAction {
  if (text !== undefined && (BULK_ACTIONS as readonly string[]).includes(text)) return text as BulkAction;
  throw new AppError(400, 'invalidRequest', `Action must be one of ${BULK_ACTIONS.join(', ')}.`);
}

function listTable(rows: readonly RequestListRow[], names: ReadonlyMap<number, string>, params: ListParams, more: boolean): Html {
  const filters = { status: params.status, integration: params.integration, submitter: params.submitter, from: params.from, to: params.to };
  const self = path(['requests'], { ...filters, after: params.after });
  const last = rows[rows.length - 1];
  const firstPage = params.after === undefined || params.after === '';
  // The first page follows new requests; any page follows the requests on it while they are in flight.
  const live = firstPage || rows.some((r) => IN_FLIGHT.includes(r.status));
  return liveRegion(
    { id: 'request-list', url: self, live },
    html`${table({
      rows,
      caption: 'Bulk import requests, newest first',
      empty: 'No requests match.',
      rowAttributes: (r) => html` data-request="${r.request_id}"`,
      columns: [
        { header: 'Request', cell: (r) => html`<a href="${path(['requests', r.request_id])}"><code>${r.request_id}</code></a>` },
        { header: 'Status', cell: (r) => statusBadge(r.status) },
        { header: 'Integration', cell: (r) => integrationLink(r.integration_sorting_order, names.get(r.integration_sorting_order)) },
        { header: 'Submitted', cell: (r) => time(r.submitted_at) },
        { header: 'Submitted by', cell: (r) => r.submitted_by ?? '—' },
        { header: 'Processed', cell: (r) => time(r.processed_at) },
        { header: 'Records', numeric: true, cell: (r) => r.record_count },
        { header: 'Error', cell: (r) => r.error_message },
      ],
    })}
    ${pager({
      ...(firstPage ? {} : { previous: { href: path(['requests'], filters), label: 'First page' } }),
      ...(more && last !== undefined
        ? { next: { href: path(['requests'], { ...filters, after: `${last.submitted_at}|${last.request_id}` }), label: 'Next page' } }
        : {}),
    })}`,
  );
}

export function bulkImportPages(deps: BulkImportPagesDeps): ConsolePages {
  const { db, clock } = deps;
  /** The requests the console's filter selects, for a bulk action: as the list shows them. */
  const selectionOf = async (params: FilterParams) => {
    const { query, errors } = parseList({ ...filtersOf(params) });
    const problem = errors.from ?? errors.to;
    if (problem !== undefined) throw new AppError(400, 'invalidRequest', problem);
    const labels = submitterLabels(params.submitter);
    const submittedBy = labels === undefined ? undefined : await submittersPresent(db, labels);
    const { limit: _limit, after: _after, ...filter } = query;
    return consoleSelection({ ...filter, ...(submittedBy === undefined ? {} : { submittedBy }) });
  };
  return (router) => {
    router.section({ label: 'Bulk Import Requests', href: '/requests', permission: 'bulkImport', order: 20 });

    router.get(
      '/requests',
      'bulkImport',
      async (request, ctx) => {
        const params = request.query;
        const { query, errors } = parseList(params);
        const refused = errors.from !== undefined || errors.to !== undefined;
        const labels = submitterLabels(params.submitter);
        const submittedBy = labels === undefined ? undefined : await submittersPresent(db, labels);
        const [rows, names] = refused
          ? [[], new Map<number, string>()]
          : await Promise.all([
              listRequestPage(db, { ...query, ...(submittedBy === undefined ? {} : { submittedBy }) }),
              integrationNames(db),
            ]);
        const more = rows.length > PAGE_SIZE;
        const list = refused
          ? html`<p class="muted">Correct the filter to see the requests.</p>`
          : listTable(rows.slice(0, PAGE_SIZE), names, params, more);
        if (ctx.partial) return list;
        const integrations = await listIntegrations(db);
        const filters = html`<form class="filters" method="get" action="/requests" role="search" aria-label="Filter requests">
          ${select(
            'status',
            'Status',
            REQUEST_STATUSES.map((s) => [s, s]),
            params.status,
          )}
          ${select(
            'integration',
            'Integration',
            integrations.map((i) => [String(i.sortingOrder), `${i.name} (${i.sortingOrder})`]),
            params.integration,
          )}
          ${field({
            name: 'submitter',
            id: 'f-submitter',
            label: 'Submitted by',
            value: params.submitter,
            placeholder: 'admin',
            help: 'A user or application name: admin finds user:admin and application:admin. Write user:admin for the user only.',
            className: '',
          })}
          ${field({
            kind: 'datetime-local',
            name: 'from',
            id: 'f-from',
            label: 'From (UTC)',
            value: params.from,
            className: '',
            ...(errors.from === undefined ? {} : { error: errors.from, autofocus: true }),
          })}
          ${field({
            kind: 'datetime-local',
            name: 'to',
            id: 'f-to',
            label: 'To (UTC)',
            value: params.to,
            className: '',
            ...(errors.to === undefined ? {} : { error: errors.to, autofocus: errors.from === undefined }),
          })}
          <button type="submit">Filter</button> <a href="/requests">Clear</a>
        </form>`;
        const bulk = refused
          ? html``
          : html`<form class="filters" method="get" action="/requests/bulk" aria-label="Act on every matching request">
              ${FILTER_FIELDS.map((name) =>
                params[name] === undefined || params[name] === ''
                  ? ''
                  : html`<input type="hidden" name="${name}" value="${params[name]}" />`,
              )}
              ${field({
                kind: 'select',
                name: 'action',
                id: 'f-bulk-action',
                label: 'Every request matching the filter',
                options: BULK_ACTIONS.map((a) => [a, BULK_WORDS[a].verb] as const),
                value: undefined,
                blank: 'Choose an action',
                className: '',
              })}
              <button type="submit">Review…</button>
            </form>`;
        return ctx.page('Bulk Import Requests', html`${filters}${bulk}${list}`);
      },
      { query: ListQuery },
    );

    // A request's own page, its actions and its payload (request-page.ts).
    requestPage(deps)(router);

    router.get(
      '/requests/bulk',
      'bulkImport',
      async (request, ctx) => {
        const params = request.query;
        const action = bulkActionOf(params.action === '' ? undefined : params.action);
        const select = await selectionOf(params);
        const counted = await select(db.selectFrom('ifw_bulk_import_request'))
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirstOrThrow();
        const matched = Number(counted.n);
        const words = BULK_WORDS[action];
        const taken = Math.min(matched, MAX_BULK);
        const back = path(['requests'], filtersOf(params));
        return ctx.page(
          `${words.verb}: every matching request`,
          html`<p><a href="${back}">← Back to the list</a></p>
            <p data-matched="${String(matched)}">
              <strong>${matched.toLocaleString('en')}</strong> ${matched === 1 ? 'request matches' : 'requests match'}
              ${describeFilter(params)}.
            </p>
            ${
              matched === 0
                ? html`<p>Nothing to do.</p>`
                : html`<p>
                      ${words.verb}
                      ${matched > MAX_BULK ? `the first ${MAX_BULK.toLocaleString('en')} of them (in order of request id; you can go on with the next ones after)` : matched === 1 ? 'it' : `all ${matched.toLocaleString('en')}`}?
                      ${words.rule}: any other is listed with the reason and left as it is.
                    </p>
                    <form method="post" action="/requests/bulk">
                      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
                      <input type="hidden" name="action" value="${action}" />
                      ${hiddenFilters(params)}
                      <button type="submit" ${action === 'delete' || action === 'cancel' ? html` class="danger"` : ''}>
                        ${words.verb} ${taken.toLocaleString('en')} ${taken === 1 ? 'request' : 'requests'}
                      </button>
                      <a href="${back}">No, go back</a>
                    </form>`
            }`,
        );
      },
      { query: BulkQuery },
    );

    router.post(
      '/requests/bulk',
      'bulkImport',
      async (request, ctx) => {
        const form = request.body;
        const action = bulkActionOf(form.action);
        const after = form.after === undefined || form.after === '' ? undefined : form.after;
        if (after !== undefined && !GUID.test(after))
          throw new AppError(400, 'invalidRequest', 'The continuation is not valid; start again from the list.');
        const result = await bulkAct(db, action, {
          select: await selectionOf(form),
          ...(after === undefined ? {} : { after: after.toLowerCase() }),
          clock,
          actor: principalLabel(ctx.user),
          checkIntegration: deps.checkIntegration,
        });
        if (result.succeeded > 0 && (action === 'reset' || action === 'resubmit')) deps.wake?.();
        return ctx.page(`${BULK_WORDS[action].verb}: done`, bulkResultBody(result, form, ctx));
      },
      { body: BulkForm },
    );
  };
}

function bulkResultBody(result: BulkResult, form: FilterParams, ctx: ConsoleContext): Html {
  const words = BULK_WORDS[result.action];
  return html`<p><a href="${path(['requests'], filtersOf(form))}">← Back to the list</a></p>
    <p role="status" data-succeeded="${String(result.succeeded)}" data-refused="${String(result.refused)}">
      ${result.matched.toLocaleString('en')} matched; ${result.processed.toLocaleString('en')} taken:
      <strong>${result.succeeded.toLocaleString('en')} done</strong>, ${result.refused.toLocaleString('en')} refused.
    </p>
    ${
      result.more
        ? html`<form method="post" action="/requests/bulk">
            <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
            <input type="hidden" name="action" value="${result.action}" />
            <input type="hidden" name="after" value="${result.next ?? ''}" />
            ${hiddenFilters(form)}
            <p>More requests match after these. <button type="submit">${words.verb} the next ones</button></p>
          </form>`
        : html`<p>No more matching requests after these.</p>`
    }
    ${table({
      rows: result.results,
      caption: 'Each request taken',
      empty: 'No request was taken.',
      rowAttributes: (r) => html` data-request="${r.requestId}"`,
      columns: [
        {
          header: 'Request',
          cell: (r) =>
            r.outcome === 'Deleted'
              ? html`<code>${r.requestId}</code>`
              : html`<a href="${path(['requests', r.requestId])}"><code>${r.requestId}</code></a>`,
        },
        { header: 'Outcome', cell: (r) => r.outcome },
        { header: 'Status', cell: (r) => (r.status === null ? '—' : statusBadge(r.status)) },
        {
          header: 'New request',
          cell: (r) =>
            r.newRequestId === null ? '—' : html`<a href="${path(['requests', r.newRequestId])}"><code>${r.newRequestId}</code></a>`,
        },
        { header: 'Reason', cell: (r) => r.error?.message ?? '' },
      ],
    })}`;
}
