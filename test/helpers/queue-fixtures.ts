/** Shared setup of the queue tests: a real target table and integration, requests inserted as rows. */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Selectable } from 'kysely';
import { afterEach, beforeEach } from 'vitest';
import { systemClock, type Clock } from '../../src/core/clock.js';
import { loadConfig, type Config } from '../../src/core/config.js';
import type { QueueHost } from '../../src/job-queue/host.js';
import { declareIntegration } from '../../src/integrations/service.js';
import { RETENTION_CLEANUP_ENTRY } from '../../src/bulk-import/jobs.js';
import { createLogger } from '../../src/core/logger.js';
import { openDatabase, type Database } from '../../src/storage/database.js';
import type { BulkImportRequestRow } from '../../src/storage/schema.js';
import { createTargetTable } from '../../src/tables/service.js';
import type { Backend, FreshDatabase } from './databases.js';
import { until } from './until.js';

export const silentLogger = createLogger({ logLevel: 'silent' });

export const CUSTOMERS = 10;

/** Table `customer` (no: code key, name: text ≤ 20, required) fed by integration 10 from `{no, name}` records. */
export async function setupCustomers(db: Database, clock: Clock): Promise<void> {
  await createTargetTable(
    db,
    {
      name: 'customer',
      primaryKey: ['no'],
      fields: [
        { name: 'no', type: 'code', maxLength: 20 },
        { name: 'name', type: 'text', maxLength: 20, required: true },
      ],
    },
    clock,
  );
  await declareIntegration(
    db,
    {
      sortingOrder: CUSTOMERS,
      name: 'Customers',
      type: 'file',
      targetTable: 'customer',
      acceptBulkImportRequests: true,
      writeMode: 'insert',
      fields: [
        { fieldNo: 1, title: 'No', sourcePath: 'no' },
        { fieldNo: 2, title: 'Name', sourcePath: 'name' },
      ],
      mappings: [
        { fieldNo: 1, targetField: 'no' },
        { fieldNo: 2, targetField: 'name' },
      ],
    },
    clock,
  );
}

export const customersPayload = (...nos: string[]): string => JSON.stringify(nos.map((no) => ({ no, name: `Customer ${no}` })));

export interface RequestSeed {
  readonly requestId?: string;
  readonly integrationSortingOrder?: number;
  readonly payload?: string;
  readonly status?: string;
  readonly submittedAt: string;
  readonly endedAt?: string | null;
  readonly leaseOwner?: string | null;
  readonly leaseExpiresAt?: string | null;
  readonly attempts?: number;
}

export async function insertRequest(db: Database, seed: RequestSeed): Promise<string> {
  const requestId = seed.requestId ?? randomUUID();
  await db.kysely
    .insertInto('ifw_bulk_import_request')
    .values({
      request_id: requestId,
      integration_sorting_order: seed.integrationSortingOrder ?? CUSTOMERS,
      payload: seed.payload ?? '[]',
      status: seed.status ?? 'Pending',
      submitted_at: seed.submittedAt,
      processed_at: null,
      ended_at: seed.endedAt ?? null,
      lease_owner: seed.leaseOwner ?? null,
      lease_expires_at: seed.leaseExpiresAt ?? null,
      started_at: null,
      submitted_by: null,
      attempts: seed.attempts ?? 0,
    })
    .execute();
  return requestId;
}

export async function getRequest(db: Database, requestId: string): Promise<Selectable<BulkImportRequestRow>> {
  return db.kysely.selectFrom('ifw_bulk_import_request').selectAll().where('request_id', '=', requestId).executeTakeFirstOrThrow();
}

export function customerNos(db: Database): string[] {
  if (db.dialect !== 'sqlite') throw new Error('customerNos reads the SQLite file directly');
  return db.sqlite.prepare('select no from customer order by no').pluck().all() as string[];
}

export async function entryRow(db: Database, id: string) {
  return db.kysely.selectFrom('ifw_job_queue_entry').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/**
 * For "nothing happened" checks: resolves once the job queue has demonstrably had its turn since this
 * call, instead of after a sleep. The retention cleanup entry, which runs beside the Bulk Import
 * Processor, is made due, the queue woken, and the entry's run awaited; twice, the second time due
 * only after the first run ended. On SQLite both entries run on one thread, one after the other,
 * oldest due first: by the end of the second run, an entry that the wakes before this call made due
 * (a processor that On Hold failed to stop) has been claimed and run to its end. On PostgreSQL the
 * request loops are woken with the retention runner: a drain starts with a statement or two, while the
 * two retention runs take a dozen, one after the other.
 */
export async function queueHadItsTurn(db: Database, wake: () => void): Promise<void> {
  for (let run = 1; run <= 2; run++) {
    await db.kysely
      .updateTable('ifw_job_queue_entry')
      .set({ next_run_at: new Date().toISOString(), last_ended_at: null })
      .where('id', '=', RETENTION_CLEANUP_ENTRY)
      .execute();
    wake();
    await until(async () => (await entryRow(db, RETENTION_CLEANUP_ENTRY)).last_ended_at, {
      what: `run ${run} of the retention cleanup entry`,
    });
  }
}

export interface PostgresQueue {
  config: Config;
  db: Database;
  /** The host a test started, closed after it. */
  host: QueueHost | undefined;
}

/**
 * For the tests of the job queue's thread on PostgreSQL: before each, a migrated database with the
 * customers integration, a config with a long tick (whatever is processed is processed because of a
 * wake) and a connection; after each, the host a test started is closed and all of it goes.
 */
export function postgresQueue(postgres: Backend): PostgresQueue {
  const queue = { host: undefined } as PostgresQueue;
  let dir: string;
  let fresh: FreshDatabase;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-host-'));
    fresh = await postgres.fresh();
    queue.config = loadConfig({ IFW_DATABASE_URL: fresh.url }, { dataDir: dir, logLevel: 'silent', schedulerTickMs: 60_000 });
    queue.db = openDatabase(queue.config.database);
    await setupCustomers(queue.db, systemClock);
  });
  afterEach(async () => {
    await queue.host?.close();
    queue.host = undefined;
    await queue.db.close();
    await fresh?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return queue;
}
