/**
 * Alarms: what an administrator must act on now, each in the words of the spec's troubleshooting
 * table where it has one (symptom, cause, remedy), decided from the database when asked, so that an
 * alarm disappears as soon as its cause is gone and every process shows the same:
 *
 * - a Pending request older than IFW_PENDING_ALARM_SECONDS while no live worker runs bulk imports:
 *   "job queue processor not running" (also `/health/queue`'s 503);
 * - a job queue entry overdue by more than two intervals;
 * - a job queue entry On Hold or in Error;
 * - an endpoint whose last FAILING_RUNS import runs all Failed;
 * - the retention cleanup not run for two days.
 */
import type { Config } from '../core/config.js';
import { BULK_IMPORT_PROCESSOR_ENTRY, RETENTION_CLEANUP_ENTRY } from '../bulk-import/jobs.js';
import { countPendingBefore } from '../bulk-import/page-queries.js';
import { endpointsFailingRepeatedly } from '../import-runs/page-queries.js';
import { listEntries, type JobQueueEntry } from '../job-queue/entries.js';
import { countLiveWorkers } from '../job-queue/workers.js';
import type { Db } from '../storage/db.js';

export const ALARM_KINDS = [
  'processorNotRunning',
  'entryOverdue',
  'entryOnHold',
  'entryInError',
  'importRunsFailing',
  'retentionNotRun',
] as const;
export type AlarmKind = (typeof ALARM_KINDS)[number];

export const ALARM_SEVERITIES = ['critical', 'warning'] as const;
export type AlarmSeverity = (typeof ALARM_SEVERITIES)[number];

export interface Alarm {
  /** Stable while the cause lasts: `<kind>` or `<kind>:<what>` (an entry's id, an endpoint's code). */
  readonly alarmId: string;
  readonly kind: AlarmKind;
  readonly severity: AlarmSeverity;
  readonly symptom: string;
  readonly cause: string;
  /** What to do. */
  readonly remedy: string;
  /** Since when the cause is known to hold (the oldest Pending request's submission, the last failure, …); null when unknown. */
  readonly since: string | null;
}

export type AlarmSettings = Pick<Config, 'pendingAlarmSeconds' | 'workerDeadSeconds'>;

/** An import run ending Failed this many times in a row for one endpoint raises an alarm. */
export const FAILING_RUNS = 3;
/** The retention cleanup not run for this long raises an alarm. */
const RETENTION_ALARM_MS = 2 * 24 * 3_600_000;

const plural = (n: number, noun: string): string => `${n.toLocaleString('en')} ${noun}${n === 1 ? '' : 's'}`;

/** The spec's "Request stays Pending a long time / Job queue processor not running", when it holds. */
export async function processorAlarm(db: Db, now: Date, settings: AlarmSettings): Promise<Alarm | undefined> {
  const before = new Date(now.getTime() - settings.pendingAlarmSeconds * 1000).toISOString();
  const waiting = await countPendingBefore(db, before);
  if (waiting === 0) return undefined;
  if ((await countLiveWorkers(db, { now, deadMs: settings.workerDeadSeconds * 1000 }, 'bulk')) > 0) return undefined;
  const oldest = await db
    .selectFrom('ifw_bulk_import_request')
    .select('submitted_at')
    .where('status', '=', 'Pending')
    .orderBy('submitted_at')
    .limit(1)
    .executeTakeFirst();
  return {
    alarmId: 'processorNotRunning',
    kind: 'processorNotRunning',
    severity: 'critical',
    symptom: `Request stays Pending a long time: ${plural(waiting, 'request')} Pending for more than ${plural(settings.pendingAlarmSeconds, 'second')}`,
    cause: 'Job queue processor not running: no live worker runs bulk imports',
    remedy:
      'Start the workers (`ifw worker`, or `ifw serve` without --no-workers) and check the Workers page; then check the job queue entries',
    since: oldest?.submitted_at ?? null,
  };
}

function entryAlarms(entries: readonly JobQueueEntry[], now: Date, postgres: boolean): Alarm[] {
  const alarms: Alarm[] = [];
  for (const e of entries) {
    if (e.status === 'On Hold') {
      alarms.push({
        alarmId: `entryOnHold:${e.id}`,
        kind: 'entryOnHold',
        severity: 'warning',
        symptom: `job queue entry ${e.description} is On Hold`,
        cause: 'an administrator put it On Hold: what it runs waits',
        remedy: 'set the entry Ready on the Job Queue page when its work should run again',
        since: null,
      });
    } else if (e.status === 'Error') {
      alarms.push({
        alarmId: `entryInError:${e.id}`,
        kind: 'entryInError',
        severity: 'warning',
        symptom: `job queue entry ${e.description} is in Error`,
        cause: e.lastError === '' ? 'its last run failed' : `its last run failed: ${e.lastError}`,
        remedy: 'read the error, fix its cause; the entry runs again at its next run time (or Run now)',
        since: e.lastEndedAt,
      });
    }
    // On PostgreSQL the Bulk Import Processor entry is a switch the drain loops obey, never claimed: its next run time stays put.
    const isSwitch = postgres && e.id === BULK_IMPORT_PROCESSOR_ENTRY;
    const late = e.nextRunAt === null ? 0 : now.getTime() - Date.parse(e.nextRunAt);
    if (!isSwitch && (e.status === 'Ready' || e.status === 'Error') && late > 2 * e.recurrenceSeconds * 1000) {
      alarms.push({
        alarmId: `entryOverdue:${e.id}`,
        kind: 'entryOverdue',
        severity: 'warning',
        symptom: `job queue entry ${e.description} is overdue by ${plural(Math.round(late / 1000), 'second')} (more than two intervals)`,
        cause: 'no worker ran it: the workers are stopped, or busy with something that does not end',
        remedy: 'check the Workers page (a worker Alive, what it runs now) and start workers if none is running',
        since: e.nextRunAt,
      });
    }
  }
  return alarms;
}

function retentionAlarm(entries: readonly JobQueueEntry[], now: Date, createdAt: string | undefined): Alarm | undefined {
  const retention = entries.find((e) => e.id === RETENTION_CLEANUP_ENTRY);
  if (retention === undefined || retention.status === 'On Hold') return undefined;
  const last = retention.lastEndedAt ?? createdAt;
  if (last === undefined || now.getTime() - Date.parse(last) <= RETENTION_ALARM_MS) return undefined;
  return {
    alarmId: 'retentionNotRun',
    kind: 'retentionNotRun',
    severity: 'warning',
    symptom: `retention cleanup has not run for two days (${retention.lastEndedAt === null ? 'never ran' : `last ended ${retention.lastEndedAt}`})`,
    cause: 'no worker ran the retention cleanup entry: ended requests older than the retention period are kept',
    remedy: 'check the Workers page and the entry VENDOR IF Bulk Import Retention Cleanup on the Job Queue page',
    since: last,
  };
}

/** Every alarm that holds now, critical first. */
export async function currentAlarms(db: Db, now: Date, settings: AlarmSettings): Promise<Alarm[]> {
  const [processor, entries, failing, retentionCreated] = await Promise.all([
    processorAlarm(db, now, settings),
    listEntries(db),
    endpointsFailingRepeatedly(db, FAILING_RUNS),
    db.selectFrom('ifw_job_queue_entry').select('created_at').where('id', '=', RETENTION_CLEANUP_ENTRY).executeTakeFirst(),
  ]);
  const retention = retentionAlarm(entries, now, retentionCreated?.created_at);
  return [
    ...(processor === undefined ? [] : [processor]),
    ...entryAlarms(entries, now, db.dialect === 'postgres'),
    ...failing.map((f): Alarm => ({
      alarmId: `importRunsFailing:${f.endpointCode}`,
      kind: 'importRunsFailing',
      severity: 'warning',
      symptom: `the last ${FAILING_RUNS} import runs of endpoint ${f.endpointCode} Failed`,
      cause: f.lastError === '' ? 'the runs keep failing' : `the last one: ${f.lastError}`,
      remedy: 'open the endpoint, test its connection and preview its first page; fix what the error names, then run it again',
      since: f.lastEndedAt,
    })),
    ...(retention === undefined ? [] : [retention]),
  ];
}
