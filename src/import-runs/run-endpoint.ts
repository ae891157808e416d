/**
 * Runs one endpoint's import in this process and waits for its end (the `ifw run-endpoint` command):
 * queue a manual run, claim exactly that run, execute it. Should another worker (a running service on
 * the same database) claim it first, wait for that worker to end it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { claimNextRun } from './claim-run.js';
import { isFinalStatus, type ImportRun } from './model.js';
import { getRun } from './queries.js';
import { queueEndpointRun } from './queue-endpoint-run.js';
import { executeRun, type ImportRunContext } from './run-imports.js';

const POLL_MS = 200;

export async function runEndpointNow(ctx: ImportRunContext, endpointCode: string): Promise<ImportRun> {
  const { db, owner, leaseMs } = ctx;
  const queued = await queueEndpointRun(db, endpointCode, 'manual', ctx.clock());
  const claimed = await claimNextRun(db, { owner, now: ctx.clock(), leaseMs, runId: queued.runId });
  if (claimed !== undefined) await executeRun(ctx, claimed);
  for (;;) {
    const run = await getRun(db, queued.runId);
    if (run === undefined) throw new Error(`import run ${queued.runId} disappeared`);
    if (isFinalStatus(run.status)) return run;
    await sleep(POLL_MS);
  }
}
