/** Migration 018: incremental REST imports, the cursor field bookmark and the last successful run of an endpoint. Released migrations are never edited (see ../migrations.ts). */
import { sql, type Kysely, type Migration } from 'kysely';

/**
 * `incremental`: JSON of the endpoint's cursor field settings, null (every endpoint so far) when it has
 * none. `cursor_value`, `cursor_updated_at`: the bookmark, moved by the transaction that completes a
 * run. `last_success_started_at`: when the last Completed run started ({{lastSuccessfulRun.startedAt}}),
 * filled in from the runs kept so far.
 */
export const m018_incremental_imports: Migration = {
  async up(db: Kysely<unknown>) {
    // One column per statement: SQLite adds one column per ALTER TABLE.
    for (const column of ['incremental', 'cursor_value', 'cursor_updated_at', 'last_success_started_at']) {
      await db.schema.alterTable('ifw_rest_endpoint').addColumn(column, 'text').execute();
    }
    await sql`
      update ifw_rest_endpoint
         set last_success_started_at = (
           select max(r.started_at) from ifw_import_run r
            where r.endpoint_code = ifw_rest_endpoint.code and r.status = 'Completed')`.execute(db);
  },
};
