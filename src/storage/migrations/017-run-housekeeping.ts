/** Migration 017: the per-record errors of import runs, and the index run retention reads. Released migrations are never edited (see ../migrations.ts). */
import type { Kysely, Migration } from 'kysely';

export const m017_run_errors_and_retention: Migration = {
  async up(db: Kysely<unknown>) {
    // As ifw_bulk_import_error, and where each record came from: its page and its place on that page.
    await db.schema
      .createTable('ifw_import_run_error')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('record_no', 'integer')
      .addColumn('page_no', 'integer')
      .addColumn('record_on_page', 'integer')
      .addColumn('field', 'text')
      .addColumn('value', 'text')
      .addColumn('rule', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('ifw_import_run_error_pk', ['run_id', 'seq'])
      .execute();
    await db.schema.createIndex('ifw_import_run_ended_idx').on('ifw_import_run').columns(['status', 'ended_at']).execute();
  },
};
