/** `ifw run-endpoint`: one endpoint's import, run in this process on the world's database. */
import { hostname } from 'node:os';
import type { ImportRun } from '../import-runs/model.js';
import { runEndpointNow } from '../import-runs/run-endpoint.js';
import { defaultImportSources } from '../import-runs/sources.js';
import type { World } from './world.js';

export function runEndpointOnce(world: World, endpointCode: string): Promise<ImportRun> {
  const { db, clock, logger, config } = world;
  const context = {
    db,
    clock,
    logger,
    owner: `cli:${hostname()}:${process.pid}`,
    leaseMs: config.leaseSeconds * 1000,
    maxAttempts: config.maxAttempts,
    // The key is read when the run loads its connection: a missing key fails the run, with its message.
    sources: defaultImportSources(() => world.secrets, config.outbound),
  };
  return runEndpointNow(context, endpointCode);
}
