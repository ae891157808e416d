/**
 * An administrator's changes to an endpoint's cursor field bookmark (cursor-values.ts): set it to a
 * value, or reset it so that the next run sends the initial value again. A run that is in progress
 * meanwhile does not overwrite the change: it moves the bookmark only from the value it started with
 * (src/import-runs/complete-run.ts).
 */
import type { Clock } from '../core/clock.js';
import { invalidRequest, notFound } from '../core/errors.js';
import type { Db } from '../storage/db.js';
import { withTransaction } from '../storage/transaction.js';
import { bookmarkValue } from './incremental-rules.js';
import type { EndpointSettings } from './settings.js';
import { getEndpoint } from './store.js';

async function incrementalEndpoint(
  tx: Db,
  code: string,
): Promise<EndpointSettings & { incremental: NonNullable<EndpointSettings['incremental']> }> {
  const endpoint = await getEndpoint(tx, code);
  if (endpoint === undefined) throw notFound(`No REST API endpoint with code '${code}'.`);
  const { incremental } = endpoint;
  if (incremental === null)
    throw invalidRequest(`REST API endpoint '${code}' has no cursorField, so it keeps no bookmark; set cursorField first.`);
  return { ...endpoint, incremental };
}

async function writeCursor(tx: Db, code: string, value: string | null, clock: Clock): Promise<void> {
  await tx
    .updateTable('ifw_rest_endpoint')
    .set({ cursor_value: value, cursor_updated_at: clock().toISOString() })
    .where('code', '=', code)
    .execute();
}

/** Sets the bookmark (`value` read as the cursor field's type, normalised); 400 when it is not one. */
export async function setCursor(db: Db, code: string, value: string, clock: Clock): Promise<EndpointSettings> {
  return withTransaction(db, async (tx) => {
    const endpoint = await incrementalEndpoint(tx, code);
    await writeCursor(tx, code, bookmarkValue(value, endpoint.incremental.cursorFieldType, 'value'), clock);
    return endpoint;
  });
}

/** Clears the bookmark: the next run sends cursorFieldInitialValue (or the type's default) and starts over. */
export async function resetCursor(db: Db, code: string, clock: Clock): Promise<EndpointSettings> {
  return withTransaction(db, async (tx) => {
    const endpoint = await incrementalEndpoint(tx, code);
    await writeCursor(tx, code, null, clock);
    return endpoint;
  });
}
