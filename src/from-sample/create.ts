/**
 * "Create" of a proposal: the target table, the integration with its fields and mappings, and, when
 * the sample came from a REST endpoint, that endpoint (created, or pointed at the new integration),
 * all in one transaction through the features' own services, so one refusal leaves nothing behind.
 * The services nest in the caller's transaction (storage/transaction.ts). Messages start with the
 * part refused: `table.fields[2].name: …`, `integration.sortingOrder: …`, `endpoint.code: …`.
 */
import type { Clock } from '../core/clock.js';
import { AppError, conflict } from '../core/errors.js';
import { pathOf } from '../core/validation.js';
import { declareIntegration } from '../integrations/service.js';
import { getIntegration } from '../integrations/store.js';
import type { EndpointInput } from '../rest-source/schemas.js';
import { createEndpoint, updateEndpoint } from '../rest-source/service.js';
import type { Db } from '../storage/db.js';
import { withTransaction } from '../storage/transaction.js';
import { declareTargetTable } from '../tables/service.js';
import { getTargetTable } from '../tables/store.js';
import type { SampleDeclarations } from './declarations.js';

/** The endpoint the sample came from: a new one to create with the integration, or a saved one to point at it. */
export type SampleEndpoint =
  | { readonly kind: 'new'; readonly input: Omit<EndpointInput, 'integrationSortingOrder'> }
  | { readonly kind: 'saved'; readonly code: string };

/** Runs `step`; a refusal's message is prefixed with where in the whole creation it happened. */
async function at<T>(where: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500 || err.message.startsWith(`${where}.`)) throw err;
    throw new AppError(err.status, err.code, pathOf(where, err.message), err.headers);
  }
}

export async function createFromSample(db: Db, declarations: SampleDeclarations, clock: Clock, endpoint?: SampleEndpoint): Promise<void> {
  const { table, integration } = declarations;
  await withTransaction(db, async (tx) => {
    if ((await getTargetTable(tx, table.name)) !== undefined)
      throw conflict('conflict', `table.name: a target table "${table.name}" already exists; choose another name`);
    await declareTargetTable(tx, table, clock, 'table');
    if ((await getIntegration(tx, integration.sortingOrder)) !== undefined)
      throw conflict('conflict', `integration.sortingOrder: an integration with sortingOrder ${integration.sortingOrder} already exists`);
    await declareIntegration(tx, integration, clock, 'integration');
    if (endpoint === undefined) return;
    const sortingOrder = integration.sortingOrder;
    if (endpoint.kind === 'new')
      await at('endpoint', () => createEndpoint(tx, { ...endpoint.input, integrationSortingOrder: sortingOrder }, clock));
    else await at('endpoint', () => updateEndpoint(tx, endpoint.code, { integrationSortingOrder: sortingOrder }, clock));
  });
}
