/**
 * Unsaved REST configurations, as Test connection and Preview first page send them: validated exactly
 * like saved ones (the same rules, the same database context), but never stored.
 */
import type { Db } from '../storage/db.js';
import { validateConnection } from './connection-rules.js';
import { validateEndpoint } from './endpoint-rules.js';
import type { RestConnection, RestEndpoint } from './model.js';
import { restConnectionOf, restEndpointOf } from './runtime-forms.js';
import type { ConnectionProbeInput, EndpointProbeInput } from './schemas.js';
import type { SecretBox } from './secrets.js';
import { endpointContext } from './service.js';
import { getBookmark, getConnectionRow, getEndpoint, readSecrets } from './store.js';
import { renderEndpoint, templateValuesOf } from './templates.js';

const UNSAVED = 'unsaved';

/** A connection body that is not saved, validated like one that is; its secrets are only those it carries. */
export function resolveUnsavedConnection(input: ConnectionProbeInput): RestConnection {
  const { settings, secrets } = validateConnection({ ...input, code: input.code ?? UNSAVED });
  return restConnectionOf(settings, secrets);
}

/**
 * An endpoint body that is not saved, validated like one that is, on its saved connection. When its
 * code names a saved endpoint, the kept settings of that endpoint's other pagination types may be
 * repeated, as in a PATCH (a page that shows an endpoint previews its edited form).
 */
export async function resolveUnsavedEndpoint(
  db: Db,
  input: EndpointProbeInput,
  box: SecretBox,
): Promise<{ connection: RestConnection; endpoint: RestEndpoint }> {
  const saved = input.code === undefined ? undefined : await getEndpoint(db, input.code);
  const context = await endpointContext(db, input.connectionCode, input.integrationSortingOrder, saved);
  const settings = validateEndpoint(
    { ...input, code: input.code ?? UNSAVED, integrationSortingOrder: input.integrationSortingOrder ?? 0 },
    context,
  );
  const row = (await getConnectionRow(db, settings.connectionCode))!;
  // Template variables as a run of the saved endpoint would send them (its bookmark), else as on a first run.
  const bookmark = input.code === undefined ? undefined : await getBookmark(db, input.code);
  const same =
    saved?.incremental?.cursorField === settings.incremental?.cursorField &&
    saved?.incremental?.cursorFieldType === settings.incremental?.cursorFieldType;
  const cursorValue = same ? (bookmark?.cursorValue ?? null) : null;
  const values = templateValuesOf(settings.incremental, cursorValue, bookmark?.lastSuccessfulRunStartedAt ?? null);
  return {
    connection: restConnectionOf(context.connection!, readSecrets(row, box)),
    endpoint: renderEndpoint(restEndpointOf(settings), values),
  };
}
