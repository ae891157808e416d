/**
 * Who may call the service: service users (Basic authentication) and registered OAuth client
 * applications, each holding permission sets. A Principal is the caller of one request.
 */
import type { PermissionSetName } from './permission-sets.js';

export interface User {
  readonly userName: string;
  readonly enabled: boolean;
  readonly permissionSets: PermissionSetName[];
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly passwordChangedAt: string;
}

/** A user as authentication needs it: with the password hash, which never leaves the service. */
export interface UserCredentials extends User {
  readonly passwordHash: string;
  /** Never reused, whatever the name (a user deleted and created again is someone else). */
  readonly userId: string;
  /** Changes with every change of password, permission sets or enabled state; console sessions hold it. */
  readonly securityStamp: string;
}

export interface Application {
  /** The OAuth client id, as the token names it in `azp`, `appid` or `client_id`. */
  readonly clientId: string;
  /**
   * The issuer (`iss`) whose tokens may name this client: the same client id at another issuer is
   * someone else. Null for a registration made before issuers were bound: accepted only while the
   * service trusts a single issuer.
   */
  readonly issuer: string | null;
  readonly displayName: string;
  readonly enabled: boolean;
  readonly permissionSets: PermissionSetName[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface Principal {
  readonly kind: 'user' | 'application';
  /** User name or client id. */
  readonly name: string;
  readonly permissionSets: readonly PermissionSetName[];
}

/** A principal as messages name it: `user 'admin'`, `application 'erp-connector'`. */
export const describePrincipal = (p: Principal): string => `${p.kind} '${p.name}'`;

/** How a principal is recorded on what it did (`submittedBy`): `user:<name>` or `application:<client id>`. */
export const principalLabel = (p: Principal): string => `${p.kind}:${p.name}`;

/** Letters, digits and `. _ @ -`, starting with a letter or digit; never `:` (Basic separates with it). */
export const USER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
/** Entra application ids are GUIDs; Keycloak and other issuers use names like `erp-connector`. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/;
export const DISPLAY_NAME_MAX_LENGTH = 200;
