/**
 * The console's webhooks: the webhooks of an integration or a REST endpoint (`/webhooks?integration=10`,
 * `/webhooks?endpoint=code`, linked from their pages), one webhook's page with its settings, Send test
 * event, Delete and its delivery log, and the delivery log of a request or run (`deliveryLog`, on their
 * pages) with Redeliver. The signing secret is offered once, when the webhook is added, and never shown again.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { FormBody, FormCheckbox, FormText, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { actionButton, field, fields, formError, statusBadge, table, time } from '../console/widgets.js';
import type { Db } from '../storage/db.js';
import type { SecretBox } from '../rest-source/secrets.js';
import { newWebhookSecret } from './model.js';
import {
  createWebhook,
  deleteWebhook,
  getDelivery,
  getWebhookRow,
  listDeliveries,
  listWebhooks,
  redeliver,
  sendTestEvent,
  toWebhook,
  updateWebhook,
  type Delivery,
  type Webhook,
} from './store.js';

export interface WebhookPagesDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly secrets: () => SecretBox;
}

/** Where a delivery's Redeliver returns to: the page of what it is about. */
const pageOf = (d: Delivery): string =>
  d.subjectKind === 'request'
    ? path(['requests', d.subjectId ?? ''])
    : d.subjectKind === 'run'
      ? path(['runs', d.subjectId ?? ''])
      : path(['webhooks', d.webhookId]);

/**
 * The delivery log: one row per event per webhook, with Redeliver for those who may configure. On a
 * request's or run's page (`whenAny`) it is left out while there is none: most have no webhook.
 */
export function deliveryLog(deliveries: readonly Delivery[], ctx: ConsoleContext, caption = 'Webhook deliveries', whenAny = false): Html {
  if (whenAny && deliveries.length === 0) return html``;
  return html`<section aria-label="${caption}">
    <h2>${caption}</h2>
    ${table({
      rows: deliveries,
      caption,
      empty: 'No webhook was told of this: none is configured for it, or none was enabled when it ended.',
      rowAttributes: (d) => html` data-delivery="${d.deliveryId}" data-status="${d.status}"`,
      columns: [
        { header: 'Event', cell: (d) => html`${d.eventType}<br /><code class="muted">${d.deliveryId}</code>` },
        { header: 'Webhook', cell: (d) => html`<a href="${path(['webhooks', d.webhookId])}">${d.webhookId.slice(0, 8)}…</a>` },
        { header: 'Status', cell: (d) => statusBadge(d.status) },
        { header: 'Attempts', numeric: true, cell: (d) => d.attempts },
        { header: 'Last attempt', cell: (d) => html`${time(d.lastAttemptAt)}${d.lastStatus === null ? '' : html` (${d.lastStatus})`}` },
        { header: 'Next attempt', cell: (d) => time(d.nextAttemptAt) },
        { header: 'Last error', cell: (d) => d.lastError },
        {
          header: 'Action',
          show: ctx.can('configure'),
          cell: (d) =>
            actionButton({
              action: path(['webhooks', 'deliveries', d.deliveryId, 'redeliver']),
              label: 'Redeliver',
              accessibleName: `Redeliver: ${d.eventType} ${d.deliveryId}`,
              csrfToken: ctx.csrfToken,
              secondary: true,
            }),
        },
      ],
    })}
  </section>`;
}

const OwnerQuery = Type.Object(
  { integration: Type.Optional(FormText(20)), endpoint: Type.Optional(FormText(100)) },
  { additionalProperties: false },
);
const NewBody = FormBody({
  integration: Type.Optional(FormText(20)),
  endpoint: Type.Optional(FormText(100)),
  url: FormText(2048),
  description: FormText(200),
  secret: FormText(200),
});
const ChangeBody = FormBody({ url: FormText(2048), description: FormText(200), enabled: FormCheckbox, secret: FormText(200) });
const IdParams = { params: PathKey('id') };

interface Owner {
  readonly integration?: number | undefined;
  readonly endpoint?: string | undefined;
}

function ownerOf(query: { integration?: string | undefined; endpoint?: string | undefined }): Owner {
  const integration = query.integration === undefined || query.integration === '' ? undefined : Number(query.integration);
  const endpoint = query.endpoint === undefined || query.endpoint === '' ? undefined : query.endpoint;
  return { integration: integration !== undefined && Number.isSafeInteger(integration) ? integration : undefined, endpoint };
}

const ownerText = (o: Owner): string => (o.integration !== undefined ? `integration ${o.integration}` : `endpoint ${o.endpoint ?? ''}`);
const ownerHref = (o: Owner): string =>
  o.integration !== undefined ? path(['integrations', o.integration]) : path(['rest', 'endpoints', o.endpoint ?? '']);

function webhookList(webhooks: readonly Webhook[]): Html {
  return table({
    rows: webhooks,
    caption: 'Webhooks',
    empty: 'No webhook yet: nobody is told when its requests or runs end.',
    rowAttributes: (w) => html` data-webhook="${w.webhookId}"`,
    columns: [
      { header: 'URL', cell: (w) => html`<a href="${path(['webhooks', w.webhookId])}">${w.url}</a>` },
      { header: 'Description', cell: (w) => w.description },
      { header: 'Enabled', cell: (w) => (w.enabled ? 'Yes' : 'No') },
      { header: 'Added', cell: (w) => time(w.createdAt) },
    ],
  });
}

function newForm(owner: Owner, ctx: ConsoleContext, sent?: { url: string; description: string; secret: string }, error?: string): Html {
  if (!ctx.can('configure')) return html``;
  return html`<h2>Add a webhook</h2>
    <form method="post" action="/webhooks">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${owner.integration === undefined ? '' : html`<input type="hidden" name="integration" value="${owner.integration}" />`}
      ${owner.endpoint === undefined ? '' : html`<input type="hidden" name="endpoint" value="${owner.endpoint}" />`}
      ${field({ name: 'url', label: 'URL', value: sent?.url ?? '', help: 'Where events are POSTed: an absolute http:// or https:// URL.', kind: 'url' })}
      ${field({ name: 'description', label: 'Description', value: sent?.description ?? '' })}
      ${field({
        name: 'secret',
        label: 'Signing secret',
        value: sent?.secret ?? newWebhookSecret(),
        help: 'The receiver verifies every event with it (Standard Webhooks). Copy it now: once saved it is never shown again.',
      })}
      ${error === undefined ? '' : formError(error)}
      <button type="submit">Add webhook</button>
    </form>`;
}

export function webhookPages(deps: WebhookPagesDeps): ConsolePages {
  const { db, clock, secrets } = deps;

  async function ownerPage(
    owner: Owner,
    ctx: ConsoleContext,
    sent?: { url: string; description: string; secret: string },
    error?: string,
  ): Promise<Html> {
    const filter =
      owner.integration !== undefined
        ? [{ property: 'integrationSortingOrder', op: 'eq' as const, value: owner.integration }]
        : [{ property: 'endpointCode', op: 'eq' as const, value: owner.endpoint ?? '' }];
    const hooks = await listWebhooks(db, { filter, skip: 0, limit: 100 });
    return ctx.page(
      `Webhooks of ${ownerText(owner)}`,
      html`<p><a href="${ownerHref(owner)}">← ${ownerText(owner)}</a></p>
        <p class="hint">
          Each webhook is told, by a signed POST, when a
          ${owner.integration !== undefined ? 'bulk import request or import run' : 'import run'} of ${ownerText(owner)} ends (Completed,
          Failed, Cancelled), retried for hours until it answers 2xx.
        </p>
        ${webhookList(hooks)} ${newForm(owner, ctx, sent, error)}`,
    );
  }

  async function webhookPage(id: string, ctx: ConsoleContext, error?: string): Promise<Html> {
    const hook = toWebhook(await getWebhookRow(db, id));
    const owner: Owner = { integration: hook.integrationSortingOrder ?? undefined, endpoint: hook.endpointCode ?? undefined };
    const log = await listDeliveries(db, { filter: [{ property: 'webhookId', op: 'eq', value: id }], skip: 0, limit: 50 });
    const can = ctx.can('configure');
    return ctx.page(
      `Webhook of ${ownerText(owner)}${hook.description === '' ? '' : `: ${hook.description}`}`,
      html`<p>
          <a
            href="${path(['webhooks'], owner.integration !== undefined ? { integration: owner.integration } : { endpoint: owner.endpoint })}"
            >← Webhooks of ${ownerText(owner)}</a
          >
        </p>
        ${fields([
          ['For', html`<a href="${ownerHref(owner)}">${ownerText(owner)}</a>`],
          ['URL', hook.url],
          ['Description', hook.description],
          ['Enabled', hook.enabled ? 'Yes' : 'No'],
          ['Signing secret', hook.secretIsSet ? 'Set (write-only)' : 'Not set'],
          ['Added', time(hook.createdAt)],
        ])}
        ${
          can
            ? html`<p>
                  ${actionButton({ action: path(['webhooks', id, 'test']), label: 'Send test event', csrfToken: ctx.csrfToken })}
                  ${actionButton({
                    action: path(['webhooks', id, 'delete']),
                    label: 'Delete webhook',
                    csrfToken: ctx.csrfToken,
                    danger: true,
                    confirm: 'Delete this webhook and its delivery log?',
                  })}
                </p>
                <h2>Change</h2>
                <form method="post" action="${path(['webhooks', id])}">
                  <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
                  ${field({ name: 'url', label: 'URL', value: hook.url, kind: 'url' })}
                  ${field({ name: 'description', label: 'Description', value: hook.description })}
                  ${field({ kind: 'checkbox', name: 'enabled', label: 'Enabled', checked: hook.enabled, className: 'check' })}
                  ${field({ name: 'secret', label: 'New signing secret', value: '', help: 'Leave empty to keep the current one.' })}
                  ${error === undefined ? '' : formError(error)}
                  <button type="submit">Save</button>
                </form>`
            : ''
        }
        ${deliveryLog(log, ctx, 'Recent deliveries')}`,
    );
  }

  return (router) => {
    router.get(
      '/webhooks',
      'read',
      async (request, ctx) => {
        const owner = ownerOf(request.query);
        if (owner.integration === undefined && owner.endpoint === undefined) return redirect('/integrations');
        return ownerPage(owner, ctx);
      },
      { query: OwnerQuery },
    );
    router.action(
      '/webhooks',
      'configure',
      {
        async change(request) {
          const owner = ownerOf(request.body);
          const hook = await createWebhook(db, secrets(), clock, {
            integrationSortingOrder: owner.integration,
            endpointCode: owner.endpoint,
            url: request.body.url,
            description: request.body.description,
            secret: request.body.secret,
          });
          return redirect(path(['webhooks', hook.webhookId]), { kind: 'info', text: `Webhook ${hook.url} was added.` });
        },
        refused: (request, ctx, message) =>
          ownerPage(
            ownerOf(request.body),
            ctx,
            { url: request.body.url, description: request.body.description, secret: request.body.secret },
            message,
          ),
      },
      { body: NewBody },
    );
    router.get('/webhooks/:id', 'read', async (request, ctx) => webhookPage(request.params.id, ctx), IdParams);
    router.action(
      '/webhooks/:id',
      'configure',
      {
        async change(request) {
          const { url: sent, description, enabled, secret } = request.body;
          // The form shows the URL with secret query values redacted: sent back unchanged, the stored one stays.
          const shown = toWebhook(await getWebhookRow(db, request.params.id)).url;
          const url = sent === shown ? undefined : sent;
          await updateWebhook(db, secrets(), clock, request.params.id, {
            url,
            description,
            enabled: enabled === 'on',
            ...(secret === '' ? {} : { secret }),
          });
          return redirect(path(['webhooks', request.params.id]), { kind: 'info', text: 'The webhook was saved.' });
        },
        refused: (request, ctx, message) => webhookPage(request.params.id, ctx, message),
      },
      { ...IdParams, body: ChangeBody },
    );
    router.post(
      '/webhooks/:id/test',
      'configure',
      async (request) => {
        const sent = await sendTestEvent(db, clock, request.params.id);
        return redirect(path(['webhooks', request.params.id]), { kind: 'info', text: `A test event (${sent.deliveryId}) is on its way.` });
      },
      { ...IdParams, body: FormBody({}) },
    );
    router.post(
      '/webhooks/:id/delete',
      'configure',
      async (request) => {
        const hook = toWebhook(await getWebhookRow(db, request.params.id));
        await deleteWebhook(db, request.params.id);
        const back =
          hook.integrationSortingOrder !== null ? { integration: hook.integrationSortingOrder } : { endpoint: hook.endpointCode ?? '' };
        return redirect(path(['webhooks'], back), { kind: 'info', text: `Webhook ${hook.url} was deleted.` });
      },
      { ...IdParams, body: FormBody({}) },
    );
    router.post(
      '/webhooks/deliveries/:id/redeliver',
      'configure',
      async (request) => {
        const delivery = await redeliver(db, clock, (await getDelivery(db, request.params.id)).deliveryId);
        return redirect(pageOf(delivery), { kind: 'info', text: `${delivery.eventType} is sent again (same id).` });
      },
      { ...IdParams, body: FormBody({}) },
    );
  };
}
