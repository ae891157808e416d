/** The workers list in the API: entity set `workers`, read-only, for administrators. */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { notFound } from '../core/errors.js';
import { entitySet } from '../http/entity-set.js';
import type { RoutePlugin } from '../http/server.js';
import { ErrorSchema, Integer, KeyParams, literalUnion } from '../http/schemas.js';
import type { Db } from '../storage/db.js';
import { WORKER_STATUSES } from './model.js';
import { listWorkers } from './workers.js';

export interface WorkerRouteDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Pick<Config, 'workerDeadSeconds'>;
}

const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const workers = entitySet({
  name: 'workers',
  key: 'workerId',
  keyType: 'guid',
  noun: 'worker',
  item: Type.Object({
    workerId: Type.String({ format: 'uuid', description: 'Chosen by the process when its workers start' }),
    status: literalUnion(WORKER_STATUSES, {
      description:
        'Alive while its heartbeat is recent; Dead once it is older than IFW_WORKER_DEAD_SECONDS (removed after IFW_WORKER_FORGET_HOURS)',
    }),
    host: Type.String(),
    pid: Integer(),
    version: Type.String({ description: 'Version of the service the process runs' }),
    startedAt: Type.String({ format: 'date-time' }),
    heartbeatAt: Type.String({ format: 'date-time', description: 'Its last heartbeat' }),
    roles: Type.Array(Type.String(), {
      description: 'The lanes it runs: bulk (bulk import requests, retention), imports (REST import runs, schedules)',
    }),
    concurrency: Integer({ description: 'Concurrent bulk import claim loops (IFW_WORKER_CONCURRENCY)' }),
    lastClaimAt: Timestamp,
    lanes: Type.Array(
      Type.Object({
        lane: Type.String({ description: 'A lane, or a claim loop of one (`bulk #2`)' }),
        running: Type.Union([Type.String(), Type.Null()], { description: 'What it runs now; null when idle' }),
        since: Timestamp,
        lastClaimAt: Timestamp,
      }),
      { description: 'What each lane runs now, as of the last heartbeat' },
    ),
  }),
});

export function workerRoutes(deps: WorkerRouteDeps): RoutePlugin {
  const { db, clock } = deps;
  const liveness = () => ({ now: clock(), deadMs: deps.config.workerDeadSeconds * 1000 });
  const tags = ['Workers'];
  const read = workers.config('administer');
  return (app) => {
    app.get(
      workers.path,
      { config: read, schema: { summary: 'List the processes that run workers, Alive or Dead', tags, response: { 200: workers.List } } },
      async () => workers.list(await listWorkers(db, liveness())),
    );
    app.get(
      workers.itemPath,
      {
        config: read,
        schema: { summary: 'Read a worker process', tags, params: KeyParams, response: { 200: workers.Entity, 404: ErrorSchema } },
      },
      async (request) => {
        const id = workers.key(request.params.key);
        const found = (await listWorkers(db, liveness())).find((w) => w.workerId === id);
        if (found === undefined) throw notFound(`No worker '${id}'.`);
        return workers.entity(found);
      },
    );
  };
}
