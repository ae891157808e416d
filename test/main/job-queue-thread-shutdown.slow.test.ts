/**
 * The job queue's worker thread on PostgreSQL shutting down in the middle of an import of several
 * seconds (a payload of 300 000 records, megabytes): the import is given up at closeTimeoutMs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { loadConfig, type Config } from '../../src/core/config.js';
import type { QueueHost } from '../../src/job-queue/host.js';
import { startJobQueue } from '../../src/main/job-queue.js';
import { openDatabase, type Database } from '../../src/storage/database.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { until } from '../helpers/until.js';
import { getRequest, insertRequest, setupCustomers, silentLogger } from '../helpers/queue-fixtures.js';

const postgres = BACKENDS.find((b) => b.name === 'postgres')!;

describe.skipIf(postgres.skip)('startJobQueue on PostgreSQL', () => {
  let dir: string;
  let fresh: FreshDatabase;
  let pgConfig: Config;
  let pgDb: Database;
  let pgHost: QueueHost | undefined;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-host-'));
    fresh = await postgres.fresh();
    pgConfig = loadConfig({ IFW_DATABASE_URL: fresh.url }, { dataDir: dir, logLevel: 'silent', schedulerTickMs: 60_000 });
    pgDb = openDatabase(pgConfig.database);
    await setupCustomers(pgDb, systemClock);
  });
  afterEach(async () => {
    await pgHost?.close();
    pgHost = undefined;
    await pgDb.close();
    await fresh?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('on close, an import that outlives closeTimeoutMs on the thread goes back to Pending, uncounted, and none of its rows stay', async () => {
    // Several seconds of work: 300 000 records.
    const payload = JSON.stringify(Array.from({ length: 300_000 }, (_, i) => ({ no: `C${i}`, name: `Customer ${i}` })));
    const id = await insertRequest(pgDb, { submittedAt: new Date().toISOString(), payload });
    pgHost = await startJobQueue(pgConfig, { logger: silentLogger, closeTimeoutMs: 300 });
    pgHost.wake();
    await until(() => getRequest(pgDb, id), { holds: (r) => r.status === 'Processing', what: 'the import started' });

    const started = Date.now();
    await pgHost.close();
    const took = Date.now() - started;

    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(5_000);
    expect(await getRequest(pgDb, id)).toMatchObject({ status: 'Pending', attempts: 0, lease_owner: null });
    const rows = await pgDb.kysely
      .selectFrom('customer' as never)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(0);
  });
});
