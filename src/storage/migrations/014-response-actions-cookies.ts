/** Migration 014: a REST API endpoint's response actions and its per-run cookie jar switch. Released migrations are never edited (see ../migrations.ts). */
import type { Kysely, Migration } from 'kysely';

/**
 * `response_actions`: JSON of the statuses that stop fetching or skip a page instead of failing the
 * run, '[]' for none (every endpoint so far: their runs behave as before). `session_cookies`: 1 when a
 * run keeps the cookies its connection's origin sets, 0 (every endpoint so far) otherwise.
 */
export const m014_response_actions_and_cookies: Migration = {
  async up(db: Kysely<unknown>) {
    // One column per statement, each with a default: SQLite adds a NOT NULL column only with one.
    await db.schema
      .alterTable('ifw_rest_endpoint')
      .addColumn('response_actions', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
    await db.schema
      .alterTable('ifw_rest_endpoint')
      .addColumn('session_cookies', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
