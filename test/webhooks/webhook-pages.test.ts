/**
 * The console's webhooks, as the service answers them: a webhook added from an integration's page
 * (its secret offered once, never shown after), the webhook's page with Send test event and its
 * delivery log, the delivery log on a request's page with Redeliver, a refused URL shown on the form,
 * and a user who may only read sees the log without buttons.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeRequest } from '../../src/bulk-import/complete-request.js';
import { connectionOf } from '../../src/storage/connection.js';
import { startConsolePages, type ConsolePages } from '../helpers/console-pages.js';
import { formValues } from '../helpers/form-html.js';
import { insertRequest } from '../helpers/queue-fixtures.js';

let c: ConsolePages;

beforeAll(async () => {
  c = await startConsolePages();
});
afterAll(async () => {
  await c?.cleanup();
});

describe('webhook pages', () => {
  let webhookId = '';
  let secret = '';

  it('adds a webhook to an integration, offering a fresh secret once', async () => {
    const client = await c.as('SUPER');
    const integration = await client.get('/integrations/10');
    expect(integration.text).toContain('href="/webhooks?integration=10"');
    const page = await client.get('/webhooks?integration=10');
    expect(page.status).toBe(200);
    expect(page.text).toContain('No webhook yet');
    const form = formValues(page.text, '/webhooks');
    secret = form.secret!;
    expect(secret).toMatch(/^whsec_/);

    const refused = await client.post('/webhooks', { ...form, url: 'ftp://nowhere', description: 'ops' });
    expect(refused.status).toBe(200);
    expect(refused.text).toContain('url must be an absolute http:// or https:// URL');
    expect(await c.t.service.db.selectFrom('ifw_webhook').selectAll().execute()).toEqual([]);

    const added = await client.post('/webhooks', { ...form, url: 'https://receiver.example/hooks', description: 'ops' });
    expect(added.status).toBe(303);
    const location = added.headers.get('location') ?? '';
    webhookId = /\/webhooks\/([0-9a-f-]+)$/.exec(location)?.[1] ?? '';
    expect(webhookId).not.toBe('');
    const card = await client.get(location);
    expect(card.text).toContain('https://receiver.example/hooks');
    expect(card.text).toContain('Set (write-only)');
    expect(card.text).not.toContain(secret);
    expect((await client.get('/webhooks?integration=10')).text).not.toContain(secret);
  });

  it('sends a test event and shows it in the webhook’s delivery log', async () => {
    const client = await c.as('SUPER');
    const sent = await client.post(`/webhooks/${webhookId}/test`, { _csrf: client.csrf });
    expect(sent.status).toBe(303);
    const card = await client.get(`/webhooks/${webhookId}`);
    expect(card.text).toMatch(/<tr\s+data-delivery="[0-9a-f-]+" data-status="Pending"/);
    expect(card.text).toContain('webhook.test');
  });

  it('shows a request’s deliveries on its page, with Redeliver', async () => {
    const db = c.t.service.db;
    const now = new Date();
    const id = await insertRequest(db, {
      integrationSortingOrder: 10,
      status: 'Processing',
      submittedAt: now.toISOString(),
      leaseOwner: 'w',
      leaseExpiresAt: new Date(now.getTime() + 60_000).toISOString(),
    });
    expect(
      await completeRequest(connectionOf(db as never), {
        requestId: id,
        owner: 'w',
        now,
        recordCount: 0,
        inserted: 0,
        updated: 0,
        skipped: 0,
      }),
    ).toBe(true);
    const client = await c.as('SUPER');
    const page = await client.get(`/requests/${id}`);
    const deliveryId = `${id}.${webhookId}`;
    expect(page.text).toContain(`data-delivery="${deliveryId}"`);
    expect(page.text).toContain('bulkImportRequest.completed');
    expect(page.text).toContain(`aria-label="Redeliver: bulkImportRequest.completed ${deliveryId}"`);
    await db
      .updateTable('ifw_webhook_delivery')
      .set({ status: 'Failed', attempts: 8, next_attempt_at: null })
      .where('delivery_id', '=', deliveryId)
      .execute();
    const again = await client.post(`/webhooks/deliveries/${deliveryId}/redeliver`, { _csrf: client.csrf });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(`/requests/${id}`);
    const row = await db.selectFrom('ifw_webhook_delivery').selectAll().where('delivery_id', '=', deliveryId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'Pending', attempts: 0 });

    const reader = await c.as('VENDOR IF STANDARD');
    // VENDOR IF STANDARD reads webhooks and their log, and changes nothing.
    const read = await reader.get(`/webhooks/${webhookId}`);
    expect(read.status).toBe(200);
    expect(read.text).toContain(`data-delivery="${deliveryId}"`);
    expect(read.text).not.toContain('Redeliver');
    expect((await reader.get(`/webhooks/${webhookId}`)).text).not.toContain('Send test event');
  });
});
