/**
 * On PostgreSQL the queue figures of `/metrics` are the database's: two service processes on one
 * database (each its own pool, as two API nodes) report the same queue depth and oldest Pending age,
 * and both change when a third party changes the queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/core/clock.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';
import { seedRequest } from '../helpers/console-pages.js';
import { startTestService, type TestService } from '../helpers/service.js';

const postgres = BACKENDS.find((b) => b.name === 'postgres')!;

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe.skipIf(postgres.skip)('/metrics on PostgreSQL', () => {
  let database: FreshDatabase;
  let a: TestService;
  let b: TestService;
  const clock = manualClock('2026-04-01T12:00:00Z');

  beforeAll(async () => {
    database = await postgres.fresh();
    a = await startTestService({ databaseUrl: database.url, clock });
    b = await startTestService({ databaseUrl: database.url, clock, applyExample: false });
  });
  afterAll(async () => {
    await a?.cleanup();
    await b?.cleanup();
    await database?.cleanup();
  });

  const figures = async (t: TestService) => {
    const res = await t.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    return {
      pending: sample(res.body, 'ifw_queue_requests{status="Pending"}'),
      processing: sample(res.body, 'ifw_queue_requests{status="Processing"}'),
      oldest: sample(res.body, 'ifw_queue_oldest_pending_age_seconds'),
    };
  };

  it('two processes report the same queue depth, read from the database', async () => {
    await seedRequest(a, { submittedAt: '2026-04-01T11:58:00.000Z' });
    await seedRequest(a, { submittedAt: '2026-04-01T11:59:00.000Z' });
    await seedRequest(b, { status: 'Processing', submittedAt: '2026-04-01T11:59:30.000Z' });
    const expected = { pending: 2, processing: 1, oldest: 120 };
    expect(await figures(a)).toEqual(expected);
    expect(await figures(b)).toEqual(expected);

    await b.service.db.kysely.updateTable('ifw_bulk_import_request').set({ status: 'Completed' }).where('status', '=', 'Pending').execute();
    const drained = { pending: 0, processing: 1, oldest: 0 };
    expect(await figures(a)).toEqual(drained);
    expect(await figures(b)).toEqual(drained);
  });
});
