/**
 * The processes that run job queue workers, as their heartbeats say (table ifw_worker): registered
 * when the workers start, written at each heartbeat, deleted when they stop. A process that stopped
 * without saying so (kill -9, a lost machine) is shown Dead once its heartbeat is older than the dead
 * time, and removed by the others' heartbeats later. Alive or Dead is decided when read, against the
 * reader's clock, so no process has to notice another's death.
 */
import type { Db } from '../storage/db.js';
import type { LaneActivity } from './activity.js';
import type { WorkerStatus } from './model.js';

export interface WorkerInfo {
  readonly workerId: string;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  readonly startedAt: string;
  readonly roles: readonly string[];
  readonly concurrency: number;
}

export interface Worker extends Omit<WorkerInfo, 'roles'> {
  readonly roles: string[];
  readonly status: WorkerStatus;
  readonly heartbeatAt: string;
  readonly lastClaimAt: string | null;
  readonly lanes: LaneActivity[];
}

const latest = (lanes: readonly LaneActivity[]): string | null =>
  lanes.reduce<string | null>((max, l) => (l.lastClaimAt !== null && (max === null || l.lastClaimAt > max) ? l.lastClaimAt : max), null);

/** Writes the process's heartbeat (inserting its row when missing: the first beat, or after it was removed as dead). */
export async function beatWorker(
  db: Db,
  { info, now, lanes }: { readonly info: WorkerInfo; readonly now: Date; readonly lanes: readonly LaneActivity[] },
): Promise<void> {
  const beat = { heartbeat_at: now.toISOString(), lanes: JSON.stringify(lanes), last_claim_at: latest(lanes) };
  await db
    .insertInto('ifw_worker')
    .values({
      worker_id: info.workerId,
      host: info.host,
      pid: info.pid,
      version: info.version,
      started_at: info.startedAt,
      roles: JSON.stringify(info.roles),
      concurrency: info.concurrency,
      ...beat,
    })
    .onConflict((oc) => oc.column('worker_id').doUpdateSet(beat))
    .execute();
}

export async function removeWorker(db: Db, workerId: string): Promise<void> {
  await db.deleteFrom('ifw_worker').where('worker_id', '=', workerId).execute();
}

/** Removes the workers whose last heartbeat is older than `before`; returns how many. */
export async function forgetWorkers(db: Db, before: Date): Promise<number> {
  const result = await db.deleteFrom('ifw_worker').where('heartbeat_at', '<', before.toISOString()).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export interface Liveness {
  readonly now: Date;
  /** A heartbeat older than this is Dead. */
  readonly deadMs: number;
}

const aliveSince = ({ now, deadMs }: Liveness): string => new Date(now.getTime() - deadMs).toISOString();

const parseLanes = (text: string): LaneActivity[] => {
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? (value as LaneActivity[]) : [];
};

/** Every registered worker, Alive first, then by host and pid. */
export async function listWorkers(db: Db, liveness: Liveness): Promise<Worker[]> {
  const rows = await db.selectFrom('ifw_worker').selectAll().orderBy('host').orderBy('pid').orderBy('worker_id').execute();
  const since = aliveSince(liveness);
  const workers = rows.map((row): Worker => ({
    workerId: row.worker_id,
    host: row.host,
    pid: Number(row.pid),
    version: row.version,
    startedAt: row.started_at,
    roles: JSON.parse(row.roles) as string[],
    concurrency: Number(row.concurrency),
    status: row.heartbeat_at >= since ? 'Alive' : 'Dead',
    heartbeatAt: row.heartbeat_at,
    lastClaimAt: row.last_claim_at,
    lanes: parseLanes(row.lanes),
  }));
  return [...workers.filter((w) => w.status === 'Alive'), ...workers.filter((w) => w.status === 'Dead')];
}

/** How many workers are Alive, of those that run `role` when given (a lane: `bulk`, `imports`). */
export async function countLiveWorkers(db: Db, liveness: Liveness, role?: string): Promise<number> {
  const rows = await db.selectFrom('ifw_worker').select('roles').where('heartbeat_at', '>=', aliveSince(liveness)).execute();
  return role === undefined ? rows.length : rows.filter((r) => (JSON.parse(r.roles) as string[]).includes(role)).length;
}
