/** Migration 013: the processes that run job queue workers, with their heartbeats. Released migrations are never edited (see ../migrations.ts). */
import type { Kysely, Migration } from 'kysely';

export const m013_workers: Migration = {
  async up(db: Kysely<unknown>) {
    // One row per process that runs workers, written by its heartbeat and deleted when it stops; a
    // process killed without stopping leaves its row, shown dead and removed later by the others.
    await db.schema
      .createTable('ifw_worker')
      .addColumn('worker_id', 'text', (c) => c.primaryKey())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('heartbeat_at', 'text', (c) => c.notNull())
      .addColumn('roles', 'text', (c) => c.notNull())
      .addColumn('concurrency', 'integer', (c) => c.notNull())
      .addColumn('lanes', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('last_claim_at', 'text')
      .execute();
  },
};
