/** The job queue on its worker thread, with its own connection to a real SQLite file (real concurrency: we poll). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { loadConfig, type Config } from '../../src/core/config.js';
import type { QueueHost } from '../../src/job-queue/host.js';
import { startJobQueue } from '../../src/main/job-queue.js';
import type { ImportFnPg } from '../../src/bulk-import/processor.js';
import { openDatabase, type Database } from '../../src/storage/database.js';
import { BACKENDS, copySqliteTemplate } from '../helpers/databases.js';
import { until } from '../helpers/until.js';
import {
  customerNos,
  customersPayload,
  entryRow,
  getRequest,
  insertRequest,
  queueHadItsTurn,
  setupCustomers,
  postgresQueue,
  silentLogger,
} from '../helpers/queue-fixtures.js';

let dir: string;
let config: Config;
let db: Database;
let host: QueueHost | undefined;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-host-'));
  // A long tick: whatever is processed here is processed because of a wake.
  config = loadConfig({}, { dataDir: dir, logLevel: 'silent', schedulerTickMs: 60_000 });
  copySqliteTemplate(path.join(dir, 'ifw.db'));
  db = openDatabase(config.database);
  await setupCustomers(db, systemClock);
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function waitForStatus(requestId: string, status: string): Promise<void> {
  await until(() => getRequest(db, requestId), { holds: (request) => request.status === status, what: `request ${requestId} ${status}` });
}

describe('startJobQueue', () => {
  it('processes a request on the worker thread when woken, and closes cleanly', async () => {
    host = await startJobQueue(config, { logger: silentLogger });
    expect(host.healthy).toBe(true);
    const id = await insertRequest(db, { submittedAt: new Date().toISOString(), payload: customersPayload('C1', 'C2') });

    host.wake();
    await waitForStatus(id, 'Completed');

    expect(await getRequest(db, id)).toMatchObject({ record_count: 2, error_message: '' });
    expect(customerNos(db)).toEqual(['C1', 'C2']);
    await host.close();
    expect(host.healthy).toBe(false);
  });

  it('processes requests left Pending from before it started without being woken', async () => {
    const id = await insertRequest(db, { submittedAt: new Date().toISOString(), payload: customersPayload('C1') });

    host = await startJobQueue(config, { logger: silentLogger });

    await waitForStatus(id, 'Completed');
  });

  it('does not process anything while the processor entry is On Hold, though other entries run', async () => {
    await db.kysely.updateTable('ifw_job_queue_entry').set({ status: 'On Hold' }).where('id', '=', 'bulk-import-processor').execute();
    const id = await insertRequest(db, { submittedAt: new Date().toISOString(), payload: customersPayload('C1') });
    host = await startJobQueue(config, { logger: silentLogger });

    // The worker's first tick ran the (due) retention entry: it is alive and ticking.
    await until(async () => (await entryRow(db, 'retention-cleanup')).last_ended_at, { what: 'the first run of the retention entry' });
    // Woken, it runs the retention entry again, and would have run the processor before it.
    await queueHadItsTurn(db, () => host?.wake());

    expect((await getRequest(db, id)).status).toBe('Pending');
  });

  it('rejects when the worker thread cannot open the database', async () => {
    const blocker = path.join(dir, 'not-a-directory');
    fs.writeFileSync(blocker, '');
    const broken = loadConfig({}, { dataDir: dir, logLevel: 'silent', databaseUrl: path.join(blocker, 'ifw.db') });

    await expect(startJobQueue(broken, { logger: silentLogger })).rejects.toThrow(/before it was ready/);
  });
});

const postgres = BACKENDS.find((b) => b.name === 'postgres')!;

describe.skipIf(postgres.skip)('startJobQueue on PostgreSQL: shutting down with an import that does not end', () => {
  const pg = postgresQueue(postgres);

  it('after closeTimeoutMs, close() returns the request to Pending, the attempt not counted, and resolves', async () => {
    let unblock!: () => void;
    const blocked = new Promise<void>((resolve) => (unblock = resolve));
    let importing = false;
    // An import that hangs until the test lets it go (as one stuck on a lock would).
    const importPayloadPg: ImportFnPg = async () => {
      importing = true;
      await blocked;
      throw new Error('let go after the shutdown');
    };
    try {
      const id = await insertRequest(pg.db, { submittedAt: new Date().toISOString(), payload: customersPayload('C1') });
      pg.host = await startJobQueue(pg.config, { logger: silentLogger, closeTimeoutMs: 300, importPayloadPg });
      pg.host.wake();
      await until(() => importing, { what: 'the import started' });
      expect(await getRequest(pg.db, id)).toMatchObject({ status: 'Processing', attempts: 1 });

      const started = Date.now();
      await pg.host.close();
      const took = Date.now() - started;

      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(5_000);
      expect(await getRequest(pg.db, id)).toMatchObject({ status: 'Pending', attempts: 0, lease_owner: null, lease_expires_at: null });
    } finally {
      unblock();
    }
  });
});

describe.skipIf(postgres.skip)('startJobQueue on PostgreSQL', () => {
  const pg = postgresQueue(postgres);

  it('imports on a worker thread: a request completes while this thread is blocked; LISTEN is up; close stops it', async () => {
    pg.host = await startJobQueue(pg.config, { logger: silentLogger });
    expect(pg.host.healthy).toBe(true);
    await until(() => pg.host!.listening, { what: 'the LISTEN connection up' });
    const id = await insertRequest(pg.db, { submittedAt: new Date().toISOString(), payload: customersPayload('C1', 'C2') });

    pg.host.wake();
    // Nothing runs on this thread's event loop meanwhile (blocked for 3 s, asleep rather than spinning, so
    // the other thread has a core): only another thread can import the request.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);
    expect(await getRequest(pg.db, id)).toMatchObject({ status: 'Completed', record_count: 2 });

    await pg.host.close();
    expect(pg.host.healthy).toBe(false);
  });
});
