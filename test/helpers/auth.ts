/**
 * Credentials for tests: the development token issuer (a real ES256 key in a temp directory) and a
 * registered application per permission set, so that every test calls the API the way an OAuth
 * client does, through the real authentication and permission check.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAccounts, type Accounts } from '../../src/accounts/accounts.js';
import { createAuthenticator, type Authenticator } from '../../src/auth/authenticate.js';
import { loadDevIssuer, type DevIssuer } from '../../src/auth/dev-issuer.js';
import { createDirectory } from '../../src/auth/directory.js';
import { createTokenValidator } from '../../src/auth/jwt.js';
import type { PermissionSetName } from '../../src/auth/permission-sets.js';
import { systemClock, type Clock } from '../../src/core/clock.js';
import type { Db } from '../../src/storage/db.js';

export type Headers = { authorization: string };

/** The client id of the application registered with `set`: `test-super`, `test-vendor-if-all`, … */
export const testClientId = (set: PermissionSetName): string => `test-${set.toLowerCase().replace(/ /g, '-')}`;

/**
 * Registers one application per permission set (unless already there) and answers the bearer
 * headers for one of them, signed by `issuer`.
 */
export async function registerTestApplications(
  accounts: Accounts,
  issuer: DevIssuer,
  clock: Clock = systemClock,
): Promise<(set: PermissionSetName) => Promise<Headers>> {
  const sets: PermissionSetName[] = ['SUPER', 'VENDOR IF ALL', 'VENDOR IF STANDARD'];
  const existing = new Set((await accounts.listApplications()).map((a) => a.clientId));
  for (const set of sets) {
    if (!existing.has(testClientId(set)))
      await accounts.createApplication({ clientId: testClientId(set), issuer: issuer.trust.issuer, permissionSets: [set] });
  }
  const tokens = new Map<PermissionSetName, Headers>();
  return async (set) => {
    let headers = tokens.get(set);
    if (headers === undefined) {
      headers = { authorization: `Bearer ${await issuer.sign(testClientId(set), { ttlSeconds: 24 * 3600, now: clock() })}` };
      tokens.set(set, headers);
    }
    return headers;
  };
}

export interface TestAuth {
  readonly authenticator: Authenticator;
  readonly accounts: Accounts;
  readonly issuer: DevIssuer;
  /** Bearer headers of the SUPER test application. */
  readonly headers: Headers;
  headersFor(set: PermissionSetName): Promise<Headers>;
  cleanup(): void;
}

/** Authentication for a server built with `buildServer` directly (route tests without a whole service). */
export async function createTestAuth(db: Db): Promise<TestAuth> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ifw-auth-'));
  const issuer = await loadDevIssuer(dir);
  const directory = createDirectory(db, systemClock);
  const accounts = createAccounts(db, { clock: systemClock, onChange: () => directory.invalidate() });
  const headersFor = await registerTestApplications(accounts, issuer);
  const authenticator = createAuthenticator({
    directory,
    clock: systemClock,
    basic: true,
    tokens: createTokenValidator({ issuers: [issuer.trust] }),
  });
  return {
    authenticator,
    accounts,
    issuer,
    headers: await headersFor('SUPER'),
    headersFor,
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
