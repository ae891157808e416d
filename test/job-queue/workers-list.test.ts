/**
 * The workers list on both databases: a process registers with its first heartbeat, says what each
 * lane runs and when it last claimed, is shown Dead once its heartbeat is older than the dead time
 * (the clock is moved, nothing waits), is removed by another process's heartbeat after the forget
 * time, and leaves the list at once when it stops normally.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { manualClock } from '../../src/core/clock.js';
import { createLogger } from '../../src/core/logger.js';
import { createActivity } from '../../src/job-queue/activity.js';
import { startPresence, type Presence } from '../../src/job-queue/presence.js';
import { countLiveWorkers, listWorkers } from '../../src/job-queue/workers.js';
import { migrate, openDatabase, type Database } from '../../src/storage/database.js';
import { BACKENDS, type FreshDatabase } from '../helpers/databases.js';

const logger = createLogger(loadConfig({}, { logLevel: 'silent' }));
const config = { workerHeartbeatSeconds: 3600, workerForgetHours: 1, workerConcurrency: 2 };
const DEAD_MS = 60_000;

describe.each(BACKENDS)('the workers list on $name', (backend) => {
  let fresh: FreshDatabase | undefined;
  let db: Database | undefined;
  const presences: Presence[] = [];

  afterEach(async () => {
    for (const p of presences.splice(0)) await p.close();
    await db?.close();
    await fresh?.cleanup();
  });

  async function open(): Promise<Database> {
    fresh = await backend.fresh();
    db = openDatabase(loadConfig({}, { databaseUrl: fresh.url, dataDir: '/tmp' }).database);
    await migrate(db);
    return db;
  }

  it.skipIf(backend.skip)(
    'shows a process Alive with what its lanes run, Dead after the dead time, gone after the forget time',
    async () => {
      const database = await open();
      const clock = manualClock('2026-03-01T10:00:00Z');
      const activity = createActivity(clock, ['bulk', 'imports']);
      const a = await startPresence({
        db: database,
        clock,
        logger,
        config,
        roles: ['bulk', 'imports'],
        version: '9.9.9',
        activity: () => activity.snapshot(),
      });
      presences.push(a);
      const liveness = () => ({ now: clock(), deadMs: DEAD_MS });

      let [w] = await listWorkers(database, liveness());
      expect(w).toMatchObject({
        workerId: a.info.workerId,
        pid: process.pid,
        version: '9.9.9',
        roles: ['bulk', 'imports'],
        concurrency: 2,
        status: 'Alive',
        startedAt: '2026-03-01T10:00:00.000Z',
        heartbeatAt: '2026-03-01T10:00:00.000Z',
        lastClaimAt: null,
      });
      expect(w!.lanes.map((l) => [l.lane, l.running])).toEqual([
        ['bulk', null],
        ['imports', null],
      ]);

      clock.advance(5_000);
      activity.claimed('bulk', 'bulk-import-processor: request 0190-abc');
      await a.beat();
      [w] = await listWorkers(database, liveness());
      expect(w!.lastClaimAt).toBe('2026-03-01T10:00:05.000Z');
      expect(w!.lanes[0]).toEqual({
        lane: 'bulk',
        running: 'bulk-import-processor: request 0190-abc',
        since: '2026-03-01T10:00:05.000Z',
        lastClaimAt: '2026-03-01T10:00:05.000Z',
      });
      activity.idle('bulk');
      await a.beat();
      [w] = await listWorkers(database, liveness());
      expect(w!.lanes[0]).toMatchObject({ running: null, lastClaimAt: '2026-03-01T10:00:05.000Z' });
      expect(await countLiveWorkers(database, liveness(), 'bulk')).toBe(1);
      expect(await countLiveWorkers(database, liveness(), 'webhooks')).toBe(0);

      // Silent for longer than the dead time: Dead, and no live worker runs bulk imports.
      clock.advance(DEAD_MS + 1);
      [w] = await listWorkers(database, liveness());
      expect(w!.status).toBe('Dead');
      expect(await countLiveWorkers(database, liveness(), 'bulk')).toBe(0);

      // Another process's heartbeat removes it once the forget time has passed, not before.
      const b = await startPresence({ db: database, clock, logger, config, roles: ['bulk'], version: '9.9.9', activity: () => [] });
      presences.push(b);
      expect((await listWorkers(database, liveness())).map((x) => [x.workerId, x.status])).toEqual([
        [b.info.workerId, 'Alive'],
        [a.info.workerId, 'Dead'],
      ]);
      clock.advance(3_600_000);
      await b.beat();
      expect((await listWorkers(database, liveness())).map((x) => x.workerId)).toEqual([b.info.workerId]);

      // A normal stop leaves the list at once.
      await b.close();
      presences.splice(presences.indexOf(b), 1);
      expect(await listWorkers(database, liveness())).toEqual([]);

      // A process removed while it was away (paused longer than the forget time) is back at its next heartbeat.
      await a.beat();
      expect((await listWorkers(database, liveness())).map((x) => [x.workerId, x.status])).toEqual([[a.info.workerId, 'Alive']]);
    },
  );
});
