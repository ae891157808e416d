/**
 * The alarms, each raised by its cause and gone with it, read through the API (`alarms`) and, for the
 * spec's "job queue processor not running", through `/health/queue` (503 while it holds, while
 * `/health/ready`, about this process, stays 200). The service runs no workers; a worker process is
 * its heartbeat in the workers list. The service's clock is moved, nothing waits.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/logger.js';
import { startPresence, type Presence } from '../../src/job-queue/presence.js';
import { movableClock } from '../helpers/clock.js';
import { seedRequest, seedRun } from '../helpers/console-pages.js';
import { API, startTestService, type TestService } from '../helpers/service.js';

const clock = movableClock();
let t: TestService;

beforeAll(async () => {
  t = await startTestService({ clock, config: { pendingAlarmSeconds: 60, workerDeadSeconds: 30 } });
});
afterAll(async () => t.cleanup());
afterEach(async () => {
  const db = t.service.db.kysely;
  await db.deleteFrom('ifw_bulk_import_request').execute();
  await db.deleteFrom('ifw_import_run').execute();
  await db.deleteFrom('ifw_worker').execute();
  const now = clock().toISOString();
  await db.updateTable('ifw_job_queue_entry').set({ status: 'Ready', next_run_at: now, last_ended_at: now, last_error: '' }).execute();
});

interface AlarmJson {
  alarmId: string;
  kind: string;
  severity: string;
  symptom: string;
  cause: string;
  remedy: string;
  since: string | null;
}
const alarms = async (): Promise<AlarmJson[]> => {
  const res = await t.inject({ method: 'GET', url: `${API}/alarms` });
  expect(res.statusCode).toBe(200);
  return res.json<{ value: AlarmJson[] }>().value;
};
const kinds = async (): Promise<string[]> => (await alarms()).map((a) => a.alarmId);
const queueCheck = async () => {
  const res = await t.service.app.inject({ method: 'GET', url: '/health/queue' });
  return { status: res.statusCode, body: res.json<{ status: string; checks: { processor: string } }>() };
};

function worker(roles: readonly string[]): Promise<Presence> {
  return startPresence({
    db: t.service.db,
    clock,
    logger: createLogger(t.config),
    config: { workerHeartbeatSeconds: 3600, workerForgetHours: 24, workerConcurrency: 1 },
    roles,
    version: 'test',
    activity: () => [],
  });
}

describe('the "job queue processor not running" alarm', () => {
  it('holds while a Pending request is older than the threshold and no live worker runs bulk imports; /health/queue answers 503 meanwhile', async () => {
    await seedRequest(t, { submittedAt: clock().toISOString() });
    // Pending, but not for long yet.
    expect(await kinds()).not.toContain('processorNotRunning');
    expect((await queueCheck()).status).toBe(200);

    clock.advance(61_000);
    const [alarm] = (await alarms()).filter((a) => a.kind === 'processorNotRunning');
    expect(alarm).toMatchObject({
      alarmId: 'processorNotRunning',
      severity: 'critical',
      symptom: 'Request stays Pending a long time: 1 request Pending for more than 60 seconds',
      cause: 'Job queue processor not running: no live worker runs bulk imports',
    });
    expect(alarm!.remedy).toMatch(/Start the workers/);
    const check = await queueCheck();
    expect(check).toEqual({ status: 503, body: { status: 'unavailable', checks: { processor: alarm!.symptom } } });
    // Readiness is about this process (it answers, its database answers), not the deployment's workers.
    expect((await t.service.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    const one = await t.inject({ method: 'GET', url: `${API}/alarms('processorNotRunning')` });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ alarmId: 'processorNotRunning', kind: 'processorNotRunning' });

    // A worker that runs only REST imports does not process requests.
    const imports = await worker(['imports']);
    expect(await kinds()).toContain('processorNotRunning');
    await imports.close();

    // A live worker of bulk imports: the cause is gone, so is the alarm.
    const bulk = await worker(['bulk', 'imports']);
    expect(await kinds()).not.toContain('processorNotRunning');
    expect(await queueCheck()).toEqual({ status: 200, body: { status: 'ok', checks: { processor: 'ok' } } });
    const gone = await t.inject({ method: 'GET', url: `${API}/alarms('processorNotRunning')` });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error.code).toBeTypeOf('string');

    // Its heartbeat stops (killed): dead after the dead time, and the alarm is back.
    clock.advance(31_000);
    expect(await kinds()).toContain('processorNotRunning');
    expect((await queueCheck()).status).toBe(503);
    await bulk.close();

    // No Pending request: nothing to alarm about, workers or not.
    await t.service.db.kysely.updateTable('ifw_bulk_import_request').set({ status: 'Completed' }).execute();
    expect(await kinds()).not.toContain('processorNotRunning');
    expect((await queueCheck()).status).toBe(200);
  });
});

describe('the other alarms', () => {
  it('an entry overdue by more than two intervals, until it runs', async () => {
    const entry = await t.service.db.kysely
      .selectFrom('ifw_job_queue_entry')
      .select(['recurrence_seconds'])
      .where('id', '=', 'retention-cleanup')
      .executeTakeFirstOrThrow();
    const interval = entry.recurrence_seconds * 1000;
    const due = new Date(clock().getTime() - 2 * interval + 10_000).toISOString();
    await t.service.db.kysely.updateTable('ifw_job_queue_entry').set({ next_run_at: due }).where('id', '=', 'retention-cleanup').execute();
    expect(await kinds()).not.toContain('entryOverdue:retention-cleanup');
    clock.advance(20_000);
    const overdue = (await alarms()).find((a) => a.alarmId === 'entryOverdue:retention-cleanup');
    expect(overdue).toMatchObject({ kind: 'entryOverdue', severity: 'warning', since: due });
    expect(overdue!.symptom).toMatch(
      /^job queue entry VENDOR IF Bulk Import Retention Cleanup is overdue by [\d,]+ seconds \(more than two intervals\)$/,
    );
    await t.service.db.kysely
      .updateTable('ifw_job_queue_entry')
      .set({ next_run_at: new Date(clock().getTime() + interval).toISOString() })
      .where('id', '=', 'retention-cleanup')
      .execute();
    expect(await kinds()).not.toContain('entryOverdue:retention-cleanup');
  });

  it('an entry On Hold or in Error, as the dashboard showed them before', async () => {
    await t.inject({ method: 'POST', url: `${API}/jobQueueEntries('bulk-import-processor')/Microsoft.NAV.setOnHold` });
    expect(await kinds()).toContain('entryOnHold:bulk-import-processor');
    await t.inject({ method: 'POST', url: `${API}/jobQueueEntries('bulk-import-processor')/Microsoft.NAV.setReady` });
    expect(await kinds()).not.toContain('entryOnHold:bulk-import-processor');

    await t.service.db.kysely
      .updateTable('ifw_job_queue_entry')
      .set({ status: 'Error', last_error: 'disk full' })
      .where('id', '=', 'retention-cleanup')
      .execute();
    const error = (await alarms()).find((a) => a.alarmId === 'entryInError:retention-cleanup');
    expect(error).toMatchObject({
      symptom: 'job queue entry VENDOR IF Bulk Import Retention Cleanup is in Error',
      cause: 'its last run failed: disk full',
    });
  });

  it('an endpoint whose last three runs Failed, until one completes', async () => {
    const base = clock().getTime() - 60_000;
    const at = (s: number) => new Date(base + s * 1000).toISOString();
    await seedRun(t, { endpointCode: 'contacts', status: 'Completed', endedAt: at(0) });
    await seedRun(t, { endpointCode: 'contacts', status: 'Failed', endedAt: at(1) });
    await seedRun(t, { endpointCode: 'contacts', status: 'Failed', endedAt: at(2) });
    await seedRun(t, { endpointCode: 'other', status: 'Failed', endedAt: at(2) });
    expect((await kinds()).filter((k) => k.startsWith('importRunsFailing'))).toEqual([]);
    await seedRun(t, { endpointCode: 'contacts', status: 'Failed', endedAt: at(3) });
    expect((await alarms()).filter((a) => a.kind === 'importRunsFailing')).toMatchObject([
      { alarmId: 'importRunsFailing:contacts', symptom: 'the last 3 import runs of endpoint contacts Failed', since: at(3) },
    ]);
    await seedRun(t, { endpointCode: 'contacts', status: 'Completed', endedAt: at(4) });
    expect((await kinds()).filter((k) => k.startsWith('importRunsFailing'))).toEqual([]);
  });

  it('retention not run for two days, until it runs', async () => {
    await t.service.db.kysely
      .updateTable('ifw_job_queue_entry')
      .set({ last_ended_at: new Date(clock().getTime() - 47 * 3_600_000).toISOString() })
      .where('id', '=', 'retention-cleanup')
      .execute();
    expect(await kinds()).not.toContain('retentionNotRun');
    clock.advance(2 * 3_600_000);
    expect((await alarms()).find((a) => a.kind === 'retentionNotRun')?.symptom).toMatch(
      /^retention cleanup has not run for two days \(last ended /,
    );
    await t.service.db.kysely
      .updateTable('ifw_job_queue_entry')
      .set({ last_ended_at: clock().toISOString() })
      .where('id', '=', 'retention-cleanup')
      .execute();
    expect(await kinds()).not.toContain('retentionNotRun');
  });
});
