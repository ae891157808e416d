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
import { listRequestPage, submittersPresent, type RequestListQuery, type RequestListRow } from './page-queries.js';
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

const ListQuery = Type.Object({
  status: Type.Optional(Type.String()),
  integration: Type.Optional(Type.String()),
  submitter: Type.Optional(Type.String()),
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  after: Type.Optional(Type.String()),
});
type ListParams = Static<typeof ListQuery>;
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
      </div>
      <h2>Record errors (${d.errors.length})</h2>
      ${table({
        rows: d.errors,
        empty: 'No record errors.',
        columns: [
          { header: 'Record', numeric: true, cell: (e) => e.recordNo ?? '—' },
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
        return ctx.page('Bulk Import Requests', html`${filters}${list}`);
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
        return ctx.partial
          ? body
          : ctx.page(
              `Request ${id}`,
              html`<p><a href="/requests">← All requests</a></p>
                ${body} ${deliveryLog(await deliveriesOf(db, id), ctx, 'Webhook deliveries', true)}`,
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
  };
}
