import { it } from 'vitest';
import { systemClock } from '../src/clock.js';
import { createQueueRunner } from '../src/queue/runner.js';
import { openDatabase } from '../src/storage/database.js';
import { openTestDatabase } from './helpers/db.js';
import { customersPayload, getRequest, insertRequest, setupCustomers, silentLogger } from './queue-fixtures.js';

it('latency', async () => {
  const t = await openTestDatabase();
  await setupCustomers(t.db, systemClock);
  const wdb = openDatabase({ kind: 'sqlite', file: t.file }, { busyTimeoutMs: 10_000 });
  const runner = createQueueRunner({ db: wdb, config: { leaseSeconds: 300, maxAttempts: 3, retentionDays: 30, schedulerTickMs: 1000 }, clock: systemClock, logger: silentLogger });
  await runner.tick();
  const times: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    const id = await insertRequest(t.db, { submittedAt: new Date().toISOString(), payload: customersPayload(...Array.from({ length: 10 }, (_, k) => `N${i}-${k}`)) });
    await runner.wake();
    times.push(performance.now() - t0);
    if ((await getRequest(t.db, id)).status !== 'Completed') throw new Error('not completed');
  }
  times.sort((a, b) => a - b);
  console.log('p50', times[15]!.toFixed(1), 'p90', times[27]!.toFixed(1));
  await runner.stop();
  await wdb.close();
  await t.cleanup();
});
