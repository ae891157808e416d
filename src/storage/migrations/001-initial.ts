/** Migration 001: the first schema (target tables, integrations, bulk import requests, the job queue and its standing entries). Released migrations are never edited (see ../migrations.ts). */
import { sql, type Kysely, type Migration } from 'kysely';

export const m001_initial: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('ifw_target_table')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('ifw_integration')
      .addColumn('sorting_order', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('target_table', 'text', (c) => c.notNull().references('ifw_target_table.name'))
      .addColumn('records_path', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('accept_bulk_import', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('max_payload_size_kb', 'integer')
      .addColumn('write_mode', 'text', (c) => c.notNull().defaultTo('insert'))
      .addColumn('on_record_error', 'text', (c) => c.notNull().defaultTo('fail'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('ifw_integration_field')
      .addColumn('integration_sorting_order', 'integer', (c) => c.notNull().references('ifw_integration.sorting_order').onDelete('cascade'))
      .addColumn('field_no', 'integer', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('source_path', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('column_type', 'text', (c) => c.notNull().defaultTo('standard'))
      .addColumn('constant_value', 'text')
      .addPrimaryKeyConstraint('ifw_integration_field_pk', ['integration_sorting_order', 'field_no'])
      .execute();

    await db.schema
      .createTable('ifw_integration_mapping')
      .addColumn('integration_sorting_order', 'integer', (c) => c.notNull())
      .addColumn('field_no', 'integer', (c) => c.notNull())
      .addColumn('target_field', 'text', (c) => c.notNull())
      .addColumn('required', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('ifw_integration_mapping_pk', ['integration_sorting_order', 'field_no'])
      .addForeignKeyConstraint(
        'ifw_integration_mapping_field_fk',
        ['integration_sorting_order', 'field_no'],
        'ifw_integration_field',
        ['integration_sorting_order', 'field_no'],
        (fk) => fk.onDelete('cascade'),
      )
      .addUniqueConstraint('ifw_integration_mapping_target_uq', ['integration_sorting_order', 'target_field'])
      .execute();

    await db.schema
      .createTable('ifw_bulk_import_request')
      .addColumn('request_id', 'text', (c) => c.primaryKey())
      .addColumn('integration_sorting_order', 'integer', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('submitted_at', 'text', (c) => c.notNull())
      .addColumn('processed_at', 'text')
      .addColumn('record_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('error_message', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('inserted_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('updated_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('skipped_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('started_at', 'text')
      .addColumn('ended_at', 'text')
      .addColumn('submitted_by', 'text')
      .execute();
    // The queue's hot indexes are partial: they hold only Pending (claims) and Processing (the reaper)
    // requests, so they stay small however much history the table keeps.
    await db.schema
      .createIndex('ifw_bulk_import_request_pending_idx')
      .on('ifw_bulk_import_request')
      .columns(['submitted_at', 'request_id'])
      .where(sql.ref('status'), '=', 'Pending')
      .execute();
    await db.schema
      .createIndex('ifw_bulk_import_request_processing_idx')
      .on('ifw_bulk_import_request')
      .column('lease_expires_at')
      .where(sql.ref('status'), '=', 'Processing')
      .execute();
    await db.schema
      .createIndex('ifw_bulk_import_request_submitted_idx')
      .on('ifw_bulk_import_request')
      .columns(['submitted_at', 'request_id'])
      .execute();
    await db.schema
      .createIndex('ifw_bulk_import_request_ended_idx')
      .on('ifw_bulk_import_request')
      .column('ended_at')
      .where(sql.ref('ended_at'), 'is not', null)
      .execute();

    await db.schema
      .createTable('ifw_bulk_import_error')
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('record_no', 'integer')
      .addColumn('field', 'text')
      .addColumn('value', 'text')
      .addColumn('rule', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('ifw_bulk_import_error_pk', ['request_id', 'seq'])
      .execute();

    await db.schema
      .createTable('ifw_job_queue_entry')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('recurrence_seconds', 'integer', (c) => c.notNull())
      .addColumn('next_run_at', 'text')
      .addColumn('last_run_at', 'text')
      .addColumn('last_ended_at', 'text')
      .addColumn('last_error', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'text')
      .addColumn('parameters', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();

    const now = new Date().toISOString();
    await sql`insert into ifw_job_queue_entry (id, kind, description, status, recurrence_seconds, next_run_at, created_at, updated_at)
      values ('bulk-import-processor', 'bulkImportProcessor', 'VENDOR IF Bulk Import Processor', 'Ready', 60, ${now}, ${now}, ${now}),
             ('retention-cleanup', 'retentionCleanup', 'VENDOR IF Bulk Import Retention Cleanup', 'Ready', 3600, ${now}, ${now}, ${now})`.execute(
      db,
    );
  },
};
