/**
 * Changing REST API connections and endpoints. Each function validates with the pure rules
 * (connection-rules.ts, endpoint-rules.ts), checks what only the database knows (existence, use by
 * endpoints, runs in progress), writes in one transaction and keeps the endpoint's job queue entry in
 * step with its schedule. `declareConnection` / `declareEndpoint` are the declarative forms `ifw apply`
 * uses.
 *
 * Secrets are write-only: a PATCH or a declaration that does not send one keeps the stored value
 * (null clears it where the auth type allows), as long as it would still go where it was saved for
 * (secret-binding.ts).
 */
import type { Selectable } from 'kysely';
import type { Clock } from '../core/clock.js';
import { AppError, conflict, notFound } from '../core/errors.js';
import { syncEndpointSchedule } from './schedule.js';
import { getIntegration } from '../integrations/store.js';
import type { Db } from '../storage/db.js';
import type { RestConnectionRow } from '../storage/schema.js';
import { invalidAt, sameJson, type ChangeResult } from '../core/validation.js';
import { withTransaction } from '../storage/transaction.js';
import type { SecretBox } from './secrets.js';
import { keptSecrets, requireSecretsForNewDestination, sealSecrets } from './secret-binding.js';
import {
  authConfigOf,
  getConnection,
  getConnectionRow,
  getEndpoint,
  listEndpoints,
  toConnectionSettings,
  type ConnectionView,
} from './store.js';
import { withPatch } from './common-rules.js';
import { validateConnection } from './connection-rules.js';
import { validateEndpoint, type EndpointContext } from './endpoint-rules.js';
import type { ConnectionInput, ConnectionPatch, EndpointInput, EndpointPatch } from './schemas.js';
import {
  AUTH_SETTING_NAMES,
  AUTH_USES,
  connectionInputOf,
  endpointInputOf,
  endpointViewOf,
  type ConnectionSettings,
  type EndpointSettings,
  type ValidConnection,
} from './settings.js';
import type { PaginationFields } from '../pagination/index.js';
import { paginationFieldsOf } from './pagination-fields.js';
import { keptPaginationColumn, paginationColumn } from './stored-pagination.js';

// ---- rows ----------------------------------------------------------------------------------

const connectionColumns = (s: ConnectionSettings, secrets: string | null) => ({
  base_url: s.baseUrl,
  auth_type: s.authType,
  auth_config: authConfigOf(s),
  secrets,
  headers: JSON.stringify(s.headers),
  query: JSON.stringify(s.query),
  timeout_ms: s.timeoutMs,
  max_retries: s.maxRetries,
  initial_delay_ms: s.initialDelayMs,
});

const endpointColumns = (s: EndpointSettings) => ({
  connection_code: s.connectionCode,
  path: s.path,
  method: s.method,
  headers: JSON.stringify(s.headers),
  query: JSON.stringify(s.query),
  body: s.body,
  integration_sorting_order: s.integrationSortingOrder,
  pagination: paginationColumn(s.pagination),
  pagination_kept: keptPaginationColumn(s.keptPagination),
  schedule_seconds: s.scheduleSeconds,
  response_actions: JSON.stringify(s.responseActions),
  session_cookies: s.sessionCookies ? 1 : 0,
  incremental: s.incremental === null ? null : JSON.stringify(s.incremental),
});

/**
 * A bookmark follows one field read one way: when the cursor field or its type changes, the stored
 * bookmark no longer means anything and is cleared (the next run sends the initial value).
 */
const bookmarkAfter = (current: EndpointSettings, next: EndpointSettings, now: Date) =>
  current.incremental?.cursorField === next.incremental?.cursorField &&
  current.incremental?.cursorFieldType === next.incremental?.cursorFieldType
    ? {}
    : { cursor_value: null, cursor_updated_at: now.toISOString() };

/** Names of the settings that differ, for a person to read. */
const changedKeys = <T extends object>(current: T, next: T): string[] =>
  (Object.keys(next) as (keyof T & string)[]).filter((k) => !sameJson(current[k], next[k]));

function refuseKeyChange(given: string | undefined, key: string, name: string): void {
  if (given !== undefined && given !== key) throw invalidAt(name, `cannot change from "${key}" to "${given}"; create a new one instead`);
}

// ---- lookups -------------------------------------------------------------------------------

async function requireConnectionRow(tx: Db, code: string): Promise<Selectable<RestConnectionRow>> {
  const row = await getConnectionRow(tx, code);
  if (row === undefined) throw notFound(`No REST API connection with code '${code}'.`);
  return row;
}

async function requireEndpoint(tx: Db, code: string): Promise<EndpointSettings> {
  const endpoint = await getEndpoint(tx, code);
  if (endpoint === undefined) throw notFound(`No REST API endpoint with code '${code}'.`);
  return endpoint;
}

/** Every type's pagination settings as the endpoint has them saved: what another type's setting may repeat. */
const storedPaginationOf = (endpoint: EndpointSettings | undefined): PaginationFields | undefined =>
  endpoint === undefined ? undefined : paginationFieldsOf(endpoint.pagination, endpoint.keptPagination);

/** What validating an endpoint needs to know of the database: its connection, its integration, what it stores. */
export async function endpointContext(
  tx: Db,
  connectionCode: string,
  integrationSortingOrder: number | undefined,
  stored?: EndpointSettings,
): Promise<EndpointContext> {
  const row = await getConnectionRow(tx, connectionCode);
  const integrationExists = integrationSortingOrder === undefined || (await getIntegration(tx, integrationSortingOrder)) !== undefined;
  const storedPagination = storedPaginationOf(stored);
  return {
    connection: row === undefined ? undefined : toConnectionSettings(row),
    integrationExists,
    ...(storedPagination === undefined ? {} : { storedPagination }),
  };
}

/** Endpoints of a connection must stay valid when it changes (origin, auth headers, query names). */
async function refuseBrokenEndpoints(tx: Db, settings: ConnectionSettings): Promise<void> {
  for (const endpoint of await listEndpoints(tx, { connectionCode: settings.code })) {
    try {
      validateEndpoint(endpointInputOf(endpoint), {
        connection: settings,
        integrationExists: true,
        storedPagination: paginationFieldsOf(endpoint.pagination, endpoint.keptPagination),
      });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      throw conflict(
        'conflict',
        `REST API endpoint '${endpoint.code}' would no longer be valid with this connection: ${err.message}. Change the endpoint first.`,
      );
    }
  }
}

// ---- connections ---------------------------------------------------------------------------

export async function createConnection(db: Db, input: ConnectionInput, clock: Clock, box: SecretBox): Promise<ConnectionView> {
  return withTransaction(db, async (tx) => {
    const { settings, secrets } = validateConnection(input);
    if ((await getConnectionRow(tx, settings.code)) !== undefined) {
      throw conflict('conflict', `code: a REST API connection with code '${settings.code}' already exists.`);
    }
    const now = clock().toISOString();
    await tx
      .insertInto('ifw_rest_connection')
      .values({ code: settings.code, ...connectionColumns(settings, sealSecrets(secrets, box)), created_at: now, updated_at: now })
      .execute();
    return (await getConnection(tx, settings.code))!;
  });
}

export async function updateConnection(
  db: Db,
  code: string,
  patch: ConnectionPatch,
  clock: Clock,
  box: SecretBox,
): Promise<ConnectionView> {
  return withTransaction(db, async (tx) => {
    const row = await requireConnectionRow(tx, code);
    refuseKeyChange(patch.code, code, 'code');
    const current = toConnectionSettings(row);
    let base = connectionInputOf(current);
    // A new auth type starts from none of the old type's settings.
    if (patch.authType !== undefined && patch.authType !== current.authType)
      base = { ...base, ...Object.fromEntries(AUTH_SETTING_NAMES.map((n) => [n, null])) };
    const merged: ConnectionInput = { ...withPatch(base, patch), code };
    const stored = keptSecrets(row, merged, box);
    const next = validateConnection(merged, stored ?? {});
    requireSecretsForNewDestination(current, next.settings, patch);
    await refuseBrokenEndpoints(tx, next.settings);
    const secretsSent = AUTH_USES[next.settings.authType].secrets.some((n) => patch[n] !== undefined);
    const sealed = secretsSent || next.settings.authType !== current.authType ? sealSecrets(next.secrets, box) : row.secrets;
    await tx
      .updateTable('ifw_rest_connection')
      .set({ ...connectionColumns(next.settings, sealed), updated_at: clock().toISOString() })
      .where('code', '=', code)
      .execute();
    return (await getConnection(tx, code))!;
  });
}

/** Refused while endpoints use the connection. */
export async function deleteConnection(db: Db, code: string): Promise<void> {
  await withTransaction(db, async (tx) => {
    await requireConnectionRow(tx, code);
    const users = await listEndpoints(tx, { connectionCode: code });
    if (users.length > 0) {
      const names = users.map((e) => `'${e.code}'`).join(', ');
      throw conflict(
        'conflict',
        `REST API connection '${code}' is used by endpoint(s) ${names}; delete them or move them to another connection first.`,
      );
    }
    await tx.deleteFrom('ifw_rest_connection').where('code', '=', code).execute();
  });
}

// ---- endpoints -----------------------------------------------------------------------------

export async function createEndpoint(db: Db, input: EndpointInput, clock: Clock): Promise<EndpointSettings> {
  return withTransaction(db, async (tx) => {
    const endpoint = await checkNewEndpoint(tx, input);
    const now = clock();
    await tx
      .insertInto('ifw_rest_endpoint')
      .values({ code: endpoint.code, ...endpointColumns(endpoint), created_at: now.toISOString(), updated_at: now.toISOString() })
      .execute();
    await syncEndpointSchedule(tx, endpoint.code, endpoint.scheduleSeconds, now);
    return endpoint;
  });
}

/** Everything `createEndpoint` checks, without writing: the settings it would store, or its refusal. */
export async function checkNewEndpoint(db: Db, input: EndpointInput): Promise<EndpointSettings> {
  const endpoint = validateEndpoint(input, await endpointContext(db, input.connectionCode, input.integrationSortingOrder));
  if ((await getEndpoint(db, endpoint.code)) !== undefined) {
    throw conflict('conflict', `code: a REST API endpoint with code '${endpoint.code}' already exists.`);
  }
  return endpoint;
}

/**
 * The stored settings with a patch on top. The base carries every pagination type's settings (the
 * kept ones too), so a change of type takes the new type's kept settings and keeps the old type's.
 */
function mergeEndpoint(current: EndpointSettings, patch: EndpointPatch, code: string): EndpointInput {
  let base = endpointInputOf(current);
  if (patch.method !== undefined && patch.method !== current.method && patch.body === undefined) base = { ...base, body: null };
  return { ...withPatch(base, patch), code };
}

/** Everything `updateEndpoint` checks, without writing: the settings before and after, or its refusal. */
export async function checkEndpointChange(
  db: Db,
  code: string,
  patch: EndpointPatch,
): Promise<{ readonly current: EndpointSettings; readonly next: EndpointSettings }> {
  const current = await requireEndpoint(db, code);
  refuseKeyChange(patch.code, code, 'code');
  const merged = mergeEndpoint(current, patch, code);
  const next = validateEndpoint(merged, await endpointContext(db, merged.connectionCode, merged.integrationSortingOrder, current));
  return { current, next };
}

export async function updateEndpoint(db: Db, code: string, patch: EndpointPatch, clock: Clock): Promise<EndpointSettings> {
  return withTransaction(db, async (tx) => {
    const { current, next } = await checkEndpointChange(tx, code, patch);
    const now = clock();
    await tx
      .updateTable('ifw_rest_endpoint')
      .set({ ...endpointColumns(next), ...bookmarkAfter(current, next, now), updated_at: now.toISOString() })
      .where('code', '=', code)
      .execute();
    // Only a changed schedule touches the job queue entry: other edits must not move its next run.
    if (next.scheduleSeconds !== current.scheduleSeconds) await syncEndpointSchedule(tx, code, next.scheduleSeconds, now);
    return next;
  });
}

/**
 * The endpoint's import run that is Queued or Running, if any. Runs are import-runs' business, a layer
 * above this one: the composition root hands its lookup in.
 */
export type ActiveRunLookup = (db: Db, endpointCode: string) => Promise<{ readonly runId: string; readonly status: string } | undefined>;

/** Refused while an import run of the endpoint is Queued or Running; removes its scheduled job queue entry. */
export async function deleteEndpoint(db: Db, code: string, clock: Clock, activeRunOf: ActiveRunLookup): Promise<void> {
  await withTransaction(db, async (tx) => {
    await requireEndpoint(tx, code);
    const active = await activeRunOf(tx, code);
    if (active !== undefined) {
      throw conflict('conflict', `REST API endpoint '${code}' has an import run ${active.status} (${active.runId}); let it end first.`);
    }
    await syncEndpointSchedule(tx, code, null, clock());
    await tx.deleteFrom('ifw_rest_endpoint').where('code', '=', code).execute();
  });
}

// ---- declarative form ----------------------------------------------------------------------

export interface Declared<T> {
  readonly value: T;
  readonly result: ChangeResult;
  /** What changed, for a person to read (secrets by name only); empty when created or unchanged. */
  readonly changes: readonly string[];
}

/** Creates or updates the connection so that it is as declared; secrets the declaration leaves out are kept. */
export async function declareConnection(
  db: Db,
  input: ConnectionInput,
  clock: Clock,
  box: SecretBox,
  at = '',
): Promise<Declared<ConnectionView>> {
  return withTransaction(db, async (tx) => {
    const row = await getConnectionRow(tx, input.code);
    const stored = keptSecrets(row, input, box);
    const next: ValidConnection = validateConnection(input, stored ?? {}, at);
    const code = next.settings.code;
    const now = clock().toISOString();
    if (row === undefined) {
      await tx
        .insertInto('ifw_rest_connection')
        .values({ code, ...connectionColumns(next.settings, sealSecrets(next.secrets, box)), created_at: now, updated_at: now })
        .execute();
      return { value: (await getConnection(tx, code))!, result: 'created', changes: [] };
    }
    const current = toConnectionSettings(row);
    requireSecretsForNewDestination(current, next.settings, input, at);
    const changes: string[] = [];
    const settingsChanged = changedKeys(current, next.settings);
    if (settingsChanged.length > 0) changes.push(`settings changed: ${settingsChanged.join(', ')}`);
    const secretsChanged = stored === undefined ? Object.keys(next.secrets) : changedKeys({ ...stored }, { ...next.secrets });
    if (secretsChanged.length > 0) changes.push(`secrets changed: ${secretsChanged.join(', ')}`);
    if (changes.length === 0) return { value: (await getConnection(tx, code))!, result: 'unchanged', changes };
    await refuseBrokenEndpoints(tx, next.settings);
    const sealed = secretsChanged.length > 0 ? sealSecrets(next.secrets, box) : row.secrets;
    await tx
      .updateTable('ifw_rest_connection')
      .set({ ...connectionColumns(next.settings, sealed), updated_at: now })
      .where('code', '=', code)
      .execute();
    return { value: (await getConnection(tx, code))!, result: 'updated', changes };
  });
}

/**
 * Creates or updates the endpoint so that it is exactly as declared. Settings of the pagination types
 * not in use that the declaration leaves out stay kept, as in a PATCH; the type in use needs all its
 * own settings declared (a file must mean the same on a fresh database).
 */
export async function declareEndpoint(db: Db, input: EndpointInput, clock: Clock, at = ''): Promise<Declared<EndpointSettings>> {
  return withTransaction(db, async (tx) => {
    const current = await getEndpoint(tx, input.code);
    const next = validateEndpoint(input, await endpointContext(tx, input.connectionCode, input.integrationSortingOrder, current), at);
    const now = clock();
    if (current === undefined) {
      await tx
        .insertInto('ifw_rest_endpoint')
        .values({ code: next.code, ...endpointColumns(next), created_at: now.toISOString(), updated_at: now.toISOString() })
        .execute();
      await syncEndpointSchedule(tx, next.code, next.scheduleSeconds, now);
      return { value: next, result: 'created', changes: [] };
    }
    const changed = changedKeys(endpointViewOf(current), endpointViewOf(next));
    if (changed.length === 0) return { value: next, result: 'unchanged', changes: [] };
    await tx
      .updateTable('ifw_rest_endpoint')
      .set({ ...endpointColumns(next), ...bookmarkAfter(current, next, now), updated_at: now.toISOString() })
      .where('code', '=', next.code)
      .execute();
    if (next.scheduleSeconds !== current.scheduleSeconds) await syncEndpointSchedule(tx, next.code, next.scheduleSeconds, now);
    return { value: next, result: 'updated', changes: [`settings changed: ${changed.join(', ')}`] };
  });
}
