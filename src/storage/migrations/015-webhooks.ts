/** Migration 015: webhooks (completion notifications) and their durable outbox of deliveries. Released migrations are never edited (see ../migrations.ts). */
import { sql, type Kysely, type Migration } from 'kysely';

export const m015_webhooks: Migration = {
  async up(db: Kysely<unknown>) {
    // A URL told when a request or run ends: of an integration (its requests and the runs into it) or of
    // a REST endpoint (its runs), and deleted with it. The signing secret is sealed like a connection's secrets.
    await db.schema
      .createTable('ifw_webhook')
      .addColumn('webhook_id', 'text', (c) => c.primaryKey())
      .addColumn('integration_sorting_order', 'integer', (c) => c.references('ifw_integration.sorting_order').onDelete('cascade'))
      .addColumn('endpoint_code', 'text', (c) => c.references('ifw_rest_endpoint.code').onDelete('cascade'))
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('ifw_webhook_integration_idx').on('ifw_webhook').column('integration_sorting_order').execute();
    await db.schema.createIndex('ifw_webhook_endpoint_idx').on('ifw_webhook').column('endpoint_code').execute();

    // The outbox: one row per event per webhook, written in the transaction that ends the request or
    // run; its id is the event's `webhook-id`, the same on every attempt and redelivery.
    await db.schema
      .createTable('ifw_webhook_delivery')
      .addColumn('delivery_id', 'text', (c) => c.primaryKey())
      .addColumn('webhook_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('subject_kind', 'text', (c) => c.notNull())
      .addColumn('subject_id', 'text')
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text')
      .addColumn('last_attempt_at', 'text')
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('delivered_at', 'text')
      .execute();
    await db.schema.createIndex('ifw_webhook_delivery_due_idx').on('ifw_webhook_delivery').columns(['status', 'next_attempt_at']).execute();
    await db.schema.createIndex('ifw_webhook_delivery_subject_idx').on('ifw_webhook_delivery').column('subject_id').execute();
    await db.schema.createIndex('ifw_webhook_delivery_webhook_idx').on('ifw_webhook_delivery').column('webhook_id').execute();

    // The job queue entry that sends them, in a lane of its own.
    const now = new Date().toISOString();
    await sql`insert into ifw_job_queue_entry (id, kind, description, status, recurrence_seconds, next_run_at, created_at, updated_at)
      values ('webhook-delivery', 'webhookDelivery', 'VENDOR IF Webhook Delivery', 'Ready', 5, ${now}, ${now}, ${now})`.execute(db);
  },
};
