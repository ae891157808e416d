/**
 * The console's page of one Bulk Import Request: every field, counts, attempts, per-record errors
 * (live while it is in flight), Cancel, Reset, Resubmit and Delete where the status allows them, and
 * the first part of its payload pretty-printed with the records the errors name marked, or the whole
 * payload as a download.
 */
import { Readable } from 'node:stream';
import { principalLabel } from '../auth/model.js';
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import { FormBody, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton, fields, liveRegion, statusBadge, table, time } from '../console/widgets.js';
import { integrationLink } from '../integrations/integration-link.js';
import type { Integration } from '../integrations/model.js';
import { getIntegration } from '../integrations/store.js';
import type { Db } from '../storage/db.js';
import { deliveryLog } from '../webhooks/pages.js';
import { deliveriesOf } from '../webhooks/store.js';
import { cancelRequest } from './cancel-request.js';
import { deleteRequest, ENDED_STATUSES } from './delete-request.js';
import { prettyPayload } from './payload-view.js';
import { findRequestDetails } from './queries.js';
import { openPayload, payloadHead } from './read-payload.js';
import { GUID } from './request-filter.js';
import { resetRequest } from './reset-request.js';
import { RESUBMITTABLE, resubmitRequest } from './resubmit-request.js';

export interface RequestPageDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly wake?: () => void;
  /** The submit checks of an integration (Submitter.integration), for Resubmit. */
  readonly checkIntegration: (sortingOrder: number) => Promise<Integration>;
}

export const IN_FLIGHT: readonly string[] = ['Pending', 'Processing'];

/** How much of a payload the request page shows. */
export const PAYLOAD_VIEW_BYTES = 64 * 1024;

const IdParams = { params: PathKey('id') };
/** Cancel and Reset: the request in the path, no field but the CSRF token. */
const RequestAction = { ...IdParams, body: FormBody({}) };

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
export function requestPage(deps: RequestPageDeps): ConsolePages {
  const { db, clock } = deps;
  return (router) => {
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
