/**
 * The console's Bulk Import Requests: the list (filters, keyset pages, live while anything is in
 * flight) and a request's page (every field, counts, attempts, per-record errors, Cancel and Reset
 * where the status allows them).
 */
import { Type, type Static } from 'typebox';
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import { FormBody, wholeNumber, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton, field, fields, liveRegion, pager, select, statusBadge, table, time } from '../console/widgets.js';
import { integrationLink, integrationNames } from '../integrations/integration-link.js';
import { getIntegration, listIntegrations } from '../integrations/store.js';
import type { Db } from '../storage/db.js';
import { deliveryLog } from '../webhooks/pages.js';
import { deliveriesOf } from '../webhooks/store.js';
import { cancelRequest } from './cancel-request.js';
import { REQUEST_STATUSES, type RequestStatus } from './model.js';
import { consoleSelection, listRequestPage, submittersPresent, type RequestListQuery, type RequestListRow } from './page-queries.js';
import { BULK_ACTIONS, bulkAct, MAX_BULK, type BulkAction, type BulkResult } from './bulk-actions.js';
import { deleteRequest, ENDED_STATUSES } from './delete-request.js';
import { prettyPayload } from './payload-view.js';
import { openPayload, payloadHead } from './read-payload.js';
import { Readable } from 'node:stream';
import { FormText } from '../console/console.js';
import { findRequestDetails } from './queries.js';
import { resetRequest } from './reset-request.js';
import { RESUBMITTABLE, resubmitRequest } from './resubmit-request.js';
import type { Integration } from '../integrations/model.js';
import { principalLabel } from '../auth/model.js';

export interface BulkImportPagesDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly wake?: () => void;
  /** The submit checks of an integration (Submitter.integration), for Resubmit. */
  readonly checkIntegration: (sortingOrder: number) => Promise<Integration>;
}

const PAGE_SIZE = 50;
const IN_FLIGHT: readonly string[] = ['Pending', 'Processing'];
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** How much of a payload the request page shows. */
export const PAYLOAD_VIEW_BYTES = 64 * 1024;

const ListQuery = Type.Object({
  status: Type.Optional(Type.String()),
  integration: Type.Optional(Type.String()),
  submitter: Type.Optional(Type.String()),
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  after: Type.Optional(Type.String()),
});
type ListParams = Static<typeof ListQuery>;
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
const FILTER_FIELDS = ['status', 'integration', 'submitter', 'from', 'to'] as const;

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
const IdParams = { params: PathKey('id') };
/** Cancel and Reset: the request in the path, no field but the CSRF token. */
const RequestAction = { ...IdParams, body: FormBody({}) };

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

function parseList(params: ListParams): { readonly query: Omit<RequestListQuery, 'submittedBy'>; readonly errors: FilterErrors } {
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

/** The first part of the payload, pretty-printed, with the records the errors name marked. */
function payloadView(
  d: NonNullable<Awaited<ReturnType<typeof findRequestDetails>>>,
  head: { text: string; truncated: boolean },
  recordsPath: string,
): Html {
  const named = new Map<number, string>();
  for (const e of d.errors) if (e.recordNo !== null && !named.has(e.recordNo)) named.set(e.recordNo, e.message);
  const pieces = prettyPayload(head.text, recordsPath);
  const body = pieces.map((p) => {
    const message = p.record === null ? undefined : named.get(p.record);
    return message === undefined
      ? html`${p.text}`
      : html`<mark id="record-${String(p.record)}" data-record="${String(p.record)}" title="Record ${String(p.record)}: ${message}"
          >${p.text}</mark
        >`;
  });
  return html`<h2>Payload</h2>
    <p>
      ${
        head.truncated
          ? `The first ${(PAYLOAD_VIEW_BYTES / 1024).toFixed(0)} KB of ${d.payloadLength.toLocaleString('en')} characters, pretty-printed.`
          : 'Pretty-printed.'
      }
      ${named.size === 0 ? '' : 'Records named by an error are marked.'}
      <a href="${path(['requests', d.requestId, 'payload'])}" download>Download the whole payload</a>
    </p>
    <pre class="payload" aria-label="Payload"><code>${body}</code></pre>`;
}

function detailsBody(
  d: NonNullable<Awaited<ReturnType<typeof findRequestDetails>>>,
  integrationName: string | undefined,
  ctx: ConsoleContext,
): Html {
  const inFlight = IN_FLIGHT.includes(d.status);
  const action = (verb: string) => path(['requests', d.requestId, verb]);
  return liveRegion(
    { id: 'request', url: path(['requests', d.requestId]), live: inFlight },
    html`${fields([
        ['Request ID', html`<code>${d.requestId}</code>`],
        ['Status', statusBadge(d.status)],
        ['Integration', integrationLink(d.integrationSortingOrder, integrationName)],
        ['Submitted at', time(d.submittedAt)],
        ['Submitted by', d.submittedBy],
        ['Started at', time(d.startedAt)],
        ['Processed at', time(d.processedAt)],
        ['Attempts', String(d.attempts)],
        ['Payload size', `${d.payloadLength.toLocaleString('en')} characters`],
        ['Records', String(d.recordCount)],
        ['Inserted', String(d.insertedCount)],
        ['Updated', String(d.updatedCount)],
        ['Skipped', String(d.skippedCount)],
        ['Error message', d.errorMessage],
        ...(d.resubmittedFrom === null
          ? []
          : [
              ['Resubmitted from', html`<a href="${path(['requests', d.resubmittedFrom])}"><code>${d.resubmittedFrom}</code></a>`] as const,
            ]),
        ...(d.resubmittedAs === null
          ? []
          : [['Resubmitted as', html`<a href="${path(['requests', d.resubmittedAs])}"><code>${d.resubmittedAs}</code></a>`] as const]),
      ])}
      <div class="actions">
        ${actionButton({
          action: action('cancel'),
          label: 'Cancel request',
          csrfToken: ctx.csrfToken,
          confirm: `Cancel request ${d.requestId}? It will not be imported.`,
          enabled: inFlight,
          disabledReason: 'Only a Pending or Processing request can be cancelled.',
          danger: true,
        })}
        ${actionButton({
          action: action('reset'),
          label: 'Reset to Pending',
          csrfToken: ctx.csrfToken,
          confirm: `Put request ${d.requestId} back to Pending? Use this for a request stuck in Processing.`,
          enabled: d.status === 'Processing',
          disabledReason: 'Only a request stuck in Processing can be reset.',
        })}
        ${actionButton({
          action: action('resubmit'),
          label: 'Resubmit as a new request',
          csrfToken: ctx.csrfToken,
          confirm: `Submit the payload of request ${d.requestId} again, as a new request?`,
          enabled: (RESUBMITTABLE as readonly string[]).includes(d.status) && d.resubmittedAs === null,
          disabledReason:
            d.resubmittedAs === null
              ? 'Only a Failed or Cancelled request can be resubmitted.'
              : 'This request was already resubmitted; open the new request.',
        })}
        ${actionButton({
          action: action('delete'),
          label: 'Delete request',
          csrfToken: ctx.csrfToken,
          confirm: `Delete request ${d.requestId} with its payload and errors? This cannot be undone.`,
          enabled: (ENDED_STATUSES as readonly string[]).includes(d.status),
          disabledReason: 'Only a Completed, Failed or Cancelled request can be deleted; cancel it first.',
          danger: true,
        })}
      </div>
      <h2>Record errors (${d.errors.length})</h2>
      ${table({
        rows: d.errors,
        empty: 'No record errors.',
        columns: [
          {
            header: 'Record',
            numeric: true,
            cell: (e) => (e.recordNo === null ? '—' : html`<a href="#record-${String(e.recordNo)}">${String(e.recordNo)}</a>`),
          },
          { header: 'Field', cell: (e) => e.field ?? '—' },
          { header: 'Value', cell: (e) => html`<code>${e.value ?? ''}</code>` },
          { header: 'Rule', cell: (e) => e.rule },
          { header: 'Message', cell: (e) => e.message },
        ],
      })}`,
  );
}

const requestIdOf = (id: string): string => {
  if (!GUID.test(id)) throw new AppError(404, 'notFound', `No bulk import request ${id}.`);
  return id.toLowerCase();
};

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

    router.get(
      '/requests/:id',
      'bulkImport',
      async (request, ctx) => {
        const id = requestIdOf(request.params.id);
        const details = await findRequestDetails(db, id);
        if (details === undefined) throw new AppError(404, 'notFound', `No bulk import request ${id}.`);
        const integration = await getIntegration(db, details.integrationSortingOrder);
        const body = detailsBody(details, integration?.name, ctx);
        if (ctx.partial) return body;
        // Outside the live region: read once per page, not at every refresh of a request in flight.
        const head = await payloadHead(db, id, PAYLOAD_VIEW_BYTES);
        return ctx.page(
          `Request ${id}`,
          html`<p><a href="/requests">← All requests</a></p>
            ${body} ${deliveryLog(await deliveriesOf(db, id), ctx, 'Webhook deliveries', true)}
            ${payloadView(details, head, integration?.recordsPath ?? '$')}`,
        );
      },
      IdParams,
    );

    router.post(
      '/requests/:id/cancel',
      'bulkImport',
      async (request) => {
        const id = requestIdOf(request.params.id);
        await cancelRequest(db, id, clock);
        return redirect(path(['requests', id]), { kind: 'info', text: `Request ${id} was cancelled.` });
      },
      RequestAction,
    );

    router.post(
      '/requests/:id/resubmit',
      'bulkImport',
      async (request, ctx) => {
        const id = requestIdOf(request.params.id);
        const accepted = await resubmitRequest(db, id, {
          clock,
          submittedBy: principalLabel(ctx.user),
          checkIntegration: deps.checkIntegration,
        });
        deps.wake?.();
        return redirect(path(['requests', accepted.requestId]), {
          kind: 'info',
          text: `Request ${id} was resubmitted as ${accepted.requestId}.`,
        });
      },
      RequestAction,
    );

    router.post(
      '/requests/:id/reset',
      'bulkImport',
      async (request) => {
        const id = requestIdOf(request.params.id);
        await resetRequest(db, id);
        deps.wake?.();
        return redirect(path(['requests', id]), { kind: 'info', text: `Request ${id} is Pending again.` });
      },
      RequestAction,
    );
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

    router.post(
      '/requests/:id/delete',
      'bulkImport',
      async (request) => {
        const id = requestIdOf(request.params.id);
        await deleteRequest(db, id);
        return redirect('/requests', { kind: 'info', text: `Request ${id} was deleted.` });
      },
      RequestAction,
    );

    router.get(
      '/requests/:id/payload',
      'bulkImport',
      async (request) => {
        const id = requestIdOf(request.params.id);
        const payload = await openPayload(db, id);
        return { download: Readable.from(payload.bytes()), fileName: `${id}.json`, contentType: 'application/json; charset=utf-8' };
      },
      IdParams,
    );
  };
}

type FilterParams = Partial<Record<(typeof FILTER_FIELDS)[number], string>>;

const filtersOf = (params: FilterParams): Record<string, string | undefined> =>
  Object.fromEntries(FILTER_FIELDS.map((name) => [name, params[name] === '' ? undefined : params[name]]));

const hiddenFilters = (params: FilterParams): Html =>
  html`${FILTER_FIELDS.map((name) =>
    params[name] === undefined || params[name] === '' ? '' : html`<input type="hidden" name="${name}" value="${params[name]}" />`,
  )}`;

/** The filter in words: "with status Failed, of integration 10, …" or "(no filter: every request)". */
function describeFilter(params: FilterParams): string {
  const parts = [
    params.status ? `with status ${params.status}` : undefined,
    params.integration ? `of integration ${params.integration}` : undefined,
    params.submitter ? `submitted by ${params.submitter}` : undefined,
    params.from ? `submitted from ${params.from} (UTC)` : undefined,
    params.to ? `before ${params.to} (UTC)` : undefined,
  ].filter((p) => p !== undefined);
  return parts.length === 0 ? '(no filter: every request)' : parts.join(', ');
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
