/**
 * Where a connection's stored secrets may go, and which of them a change keeps. Secrets are
 * write-only: a change that does not send one keeps the stored value, as long as it would still go
 * where it was saved for (`destinationChange`). The stored secrets are opened only when some are kept,
 * so a connection whose secrets were sealed under a lost key is repaired by sending them all again.
 */
import type { Selectable } from 'kysely';
import { invalidAt, pathOf } from '../core/validation.js';
import type { RestConnectionRow } from '../storage/schema.js';
import { SecretDecryptionError, type SecretBox } from './secrets.js';
import type { ConnectionInput } from './schemas.js';
import { AUTH_USES, type ConnectionSecrets, type ConnectionSettings, type SecretName } from './settings.js';
import { readSecrets, toConnectionSettings } from './store.js';

export const sealSecrets = (secrets: ConnectionSecrets, box: SecretBox): string | null =>
  Object.keys(secrets).length === 0 ? null : box.seal(JSON.stringify(secrets));

/**
 * The secrets kept from storage for `input`: none when the auth type changes or every secret the type
 * uses is sent again; otherwise the stored ones, opened. `undefined` when they could not be opened but
 * are all sent again (the caller then treats them as changed).
 */
export function keptSecrets(
  row: Selectable<RestConnectionRow> | undefined,
  input: ConnectionInput,
  box: SecretBox,
): ConnectionSecrets | undefined {
  if (row === undefined || (input.authType ?? 'none') !== row.auth_type) return {};
  const uses = AUTH_USES[toConnectionSettings(row).authType].secrets;
  const allSent = uses.every((name) => input[name] !== undefined);
  try {
    return readSecrets(row, box);
  } catch (err) {
    if (err instanceof SecretDecryptionError && allSent) return undefined;
    throw err;
  }
}

/**
 * Stored secrets are bound to where they are sent: the base URL's origin (credentials and OAuth2
 * tokens go there), the token URL (the client secret goes there) and the API key's placement. A change
 * of any of these keeps no stored secret: each one the authentication type uses must be sent again, or
 * anyone allowed to edit the connection could point it at a host of theirs and receive the secrets.
 * Undefined when the destination is unchanged.
 */
function destinationChange(current: ConnectionSettings, next: ConnectionSettings): string | undefined {
  const before = new URL(current.baseUrl).origin;
  const after = new URL(next.baseUrl).origin;
  if (before !== after) return `the base URL's origin changed from ${before} to ${after}`;
  if (current.tokenUrl !== next.tokenUrl)
    return `the token URL changed from ${current.tokenUrl ?? '(none)'} to ${next.tokenUrl ?? '(none)'}`;
  if (current.apiKeyIn !== next.apiKeyIn || current.apiKeyName !== next.apiKeyName)
    return `the API key's placement changed from ${current.apiKeyIn ?? '(none)'} "${current.apiKeyName ?? ''}" to ${next.apiKeyIn ?? '(none)'} "${next.apiKeyName ?? ''}"`;
  return undefined;
}

/** Refuses a change of where secrets go unless every secret the authentication type uses is sent with it. */
export function requireSecretsForNewDestination(
  current: ConnectionSettings,
  next: ConnectionSettings,
  sent: Readonly<Partial<Record<SecretName, string | null>>>,
  at = '',
): void {
  if (current.authType !== next.authType) return; // a new type starts with none of the old type's secrets anyway
  const change = destinationChange(current, next);
  if (change === undefined) return;
  const missing = AUTH_USES[next.authType].secrets.filter((name) => sent[name] === undefined || sent[name] === null);
  if (missing.length === 0) return;
  throw invalidAt(
    pathOf(at, missing[0]!),
    `must be sent again: stored secrets are only sent where they were saved for, and ${change}; send ${missing.join(', ')} with this change`,
  );
}
