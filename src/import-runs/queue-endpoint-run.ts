/** Queueing a run of an endpoint by its code: the one way in for the API, the schedule and the CLI. */
import type { Db } from '../storage/db.js';
import { loadEndpoint } from '../rest-source/store.js';
import type { ImportRun, RunTrigger } from './model.js';
import { queueRun } from './queue-run.js';

/** Throws 404 for an unknown endpoint and 409 when the endpoint has a run Queued or Running. */
export async function queueEndpointRun(db: Db, endpointCode: string, trigger: RunTrigger, now: Date): Promise<ImportRun> {
  const endpoint = await loadEndpoint(db, endpointCode);
  return queueRun(db, { endpointCode: endpoint.code, integrationSortingOrder: endpoint.integrationSortingOrder, trigger, now });
}
