/**
 * The job queue's worker thread on PostgreSQL shutting down in the middle of an import of several
 * seconds (a payload of 300 000 records, megabytes): the import is given up at closeTimeoutMs.
 */
import { describe, expect, it } from 'vitest';
import { startJobQueue } from '../../src/main/job-queue.js';
import { BACKENDS } from '../helpers/databases.js';
import { until } from '../helpers/until.js';
import { getRequest, insertRequest, postgresQueue, silentLogger } from '../helpers/queue-fixtures.js';

const postgres = BACKENDS.find((b) => b.name === 'postgres')!;

describe.skipIf(postgres.skip)('startJobQueue on PostgreSQL', () => {
  const pg = postgresQueue(postgres);

  it('on close, an import that outlives closeTimeoutMs on the thread goes back to Pending, uncounted, and none of its rows stay', async () => {
    // Several seconds of work: 300 000 records.
    const payload = JSON.stringify(Array.from({ length: 300_000 }, (_, i) => ({ no: `C${i}`, name: `Customer ${i}` })));
    const id = await insertRequest(pg.db, { submittedAt: new Date().toISOString(), payload });
    pg.host = await startJobQueue(pg.config, { logger: silentLogger, closeTimeoutMs: 300 });
    pg.host.wake();
    await until(() => getRequest(pg.db, id), { holds: (r) => r.status === 'Processing', what: 'the import started' });

    const started = Date.now();
    await pg.host.close();
    const took = Date.now() - started;

    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(5_000);
    expect(await getRequest(pg.db, id)).toMatchObject({ status: 'Pending', attempts: 0, lease_owner: null });
    const rows = await pg.db.kysely
      .selectFrom('customer' as never)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(0);
  });
});
