/**
 * Administering users and applications (admin API and CLI share it): validation with messages an
 * administrator can act on, password hashing, and one guard — no change may leave the service
 * without an enabled principal holding SUPER, since nobody could administer it through the API then.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../core/clock.js';
import { AppError, conflict, notFound, invalidRequest } from '../core/errors.js';
import {
  CLIENT_ID_PATTERN,
  DISPLAY_NAME_MAX_LENGTH,
  USER_NAME_PATTERN,
  type Application,
  type User,
  type UserCredentials,
} from '../auth/model.js';
import { hashPassword, passwordProblem } from '../auth/passwords.js';
import { parsePermissionSet, type PermissionSetName } from '../auth/permission-sets.js';
import * as store from '../auth/store.js';
import type { Db } from '../storage/db.js';
import { withTransaction } from '../storage/transaction.js';

export interface NewUser {
  readonly userName: string;
  readonly password: string;
  readonly permissionSets?: readonly string[];
  readonly enabled?: boolean;
}

export interface UserChanges {
  readonly password?: string;
  readonly permissionSets?: readonly string[];
  readonly enabled?: boolean;
}

export interface NewApplication {
  readonly clientId: string;
  /** The issuer of its tokens; default (undefined or null): not bound, accepted only while the service trusts one issuer. */
  readonly issuer?: string | null;
  readonly displayName?: string;
  readonly permissionSets?: readonly string[];
  readonly enabled?: boolean;
}

export interface ApplicationChanges {
  readonly issuer?: string | null;
  readonly displayName?: string;
  readonly permissionSets?: readonly string[];
  readonly enabled?: boolean;
}

export interface Accounts {
  listUsers(): Promise<User[]>;
  getUser(userName: string): Promise<User>;
  createUser(user: NewUser): Promise<User>;
  changeUser(userName: string, changes: UserChanges): Promise<User>;
  deleteUser(userName: string): Promise<void>;
  listApplications(): Promise<Application[]>;
  getApplication(clientId: string): Promise<Application>;
  createApplication(application: NewApplication): Promise<Application>;
  changeApplication(clientId: string, changes: ApplicationChanges): Promise<Application>;
  deleteApplication(clientId: string): Promise<void>;
}

export interface AccountsOptions {
  readonly clock: Clock;
  /**
   * The issuers whose tokens the service accepts (`iss`). An application registered without an issuer
   * is bound to the only one; with several, its issuer must be named.
   */
  readonly issuers?: readonly string[];
  /** Called after every committed change (the authentication cache drops what it remembers). */
  readonly onChange?: () => void;
}

/** The stored user without its password hash and session identity. */
export function publicUser(user: UserCredentials): User {
  const { passwordHash: _hash, userId: _id, securityStamp: _stamp, ...rest } = user;
  return rest;
}

/** A password for a generated account: 24 characters of base64url, 144 bits. */
export const generatePassword = (): string => randomBytes(18).toString('base64url');

function permissionSets(names: readonly string[] | undefined): PermissionSetName[] {
  if (names === undefined) return [];
  return [...new Set(names.map(parsePermissionSet))];
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem !== null) throw invalidRequest(`The ${problem}.`);
}

function checkUserName(userName: string): void {
  if (!USER_NAME_PATTERN.test(userName)) {
    throw invalidRequest(
      `userName '${userName}' is not valid: use 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit.`,
    );
  }
}

function checkClientId(clientId: string): void {
  if (!CLIENT_ID_PATTERN.test(clientId)) {
    throw invalidRequest(
      `clientId '${clientId}' is not valid: use the client id your identity provider issues (1 to 200 letters, digits, '.', '_', ':', '@' or '-').`,
    );
  }
}

// eslint-disable-next-line no-control-regex -- an issuer is a URL or URN: no control characters.
const ISSUER_PATTERN = /^[^\u0000-\u001f\u007f\s]{1,500}$/;

function checkIssuer(issuer: string | null | undefined): void {
  if (issuer === undefined || issuer === null) return;
  if (!ISSUER_PATTERN.test(issuer))
    throw invalidRequest(
      `issuer must be the issuer exactly as the application's tokens carry it in "iss" (1 to 500 characters, no spaces or control characters).`,
    );
}

function checkDisplayName(displayName: string): void {
  if (displayName.length > DISPLAY_NAME_MAX_LENGTH)
    throw invalidRequest(`displayName must be at most ${DISPLAY_NAME_MAX_LENGTH} characters.`);
}

/** Enabled users and applications holding SUPER. */
async function administratorCount(db: Db): Promise<number> {
  const holds = '%"SUPER"%';
  const users = await db
    .selectFrom('ifw_user')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('enabled', '=', 1)
    .where('permission_sets', 'like', holds)
    .executeTakeFirstOrThrow();
  const apps = await db
    .selectFrom('ifw_application')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('enabled', '=', 1)
    .where('permission_sets', 'like', holds)
    .executeTakeFirstOrThrow();
  return Number(users.n) + Number(apps.n);
}

/**
 * Runs `change` in a transaction and refuses it when it removed the last enabled SUPER holder.
 * SQLite runs one write transaction at a time. PostgreSQL does not: two changes removing the two
 * last holders at once would each still see the other holder, and both pass. So on PostgreSQL the
 * guarded changes take one transaction-scoped advisory lock first, and run one after another.
 */
async function guarded(db: Db, what: string, change: (trx: Db) => Promise<void>): Promise<void> {
  await withTransaction(db, async (trx) => {
    if (trx.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext('ifw_administrators'))`.execute(trx);
    const before = await administratorCount(trx);
    await change(trx);
    if (before > 0 && (await administratorCount(trx)) === 0) {
      throw conflict(
        'lastAdministrator',
        `${what} would leave no enabled user or application holding SUPER; grant SUPER to another one first.`,
      );
    }
  });
}

export function createAccounts(db: Db, options: AccountsOptions): Accounts {
  const { clock } = options;
  const changed = () => options.onChange?.();
  const now = () => clock().toISOString();
  const issuers = options.issuers ?? [];

  /** The issuer an application is bound to when its registration names none. */
  function defaultIssuer(): string | null {
    if (issuers.length <= 1) return issuers[0] ?? null;
    throw invalidRequest(
      `issuer is required: the service accepts tokens of ${issuers.length} issuers (${issuers.map((i) => `'${i}'`).join(', ')}), and a client id names an application at one of them.`,
    );
  }

  async function loadUser(userName: string): Promise<UserCredentials> {
    const user = await store.findUser(db, userName);
    if (user === undefined) throw notFound(`No user '${userName}'.`);
    return user;
  }

  async function loadApplication(clientId: string): Promise<Application> {
    const application = await store.findApplication(db, clientId);
    if (application === undefined) throw notFound(`No application '${clientId}'.`);
    return application;
  }

  return {
    async listUsers() {
      return (await store.listUsers(db)).map(publicUser);
    },
    async getUser(userName) {
      return publicUser(await loadUser(userName));
    },
    async createUser(user) {
      checkUserName(user.userName);
      checkPassword(user.password);
      const sets = permissionSets(user.permissionSets);
      if ((await store.findUser(db, user.userName)) !== undefined) throw conflict('conflict', `User '${user.userName}' already exists.`);
      const passwordHash = await hashPassword(user.password);
      const at = now();
      try {
        await store.insertUser(db, {
          user_name: user.userName,
          user_id: randomUUID(),
          security_stamp: randomUUID(),
          password_hash: passwordHash,
          enabled: user.enabled === false ? 0 : 1,
          permission_sets: JSON.stringify(sets),
          created_at: at,
          updated_at: at,
          password_changed_at: at,
        });
      } catch (err) {
        if ((await store.findUser(db, user.userName)) !== undefined) throw conflict('conflict', `User '${user.userName}' already exists.`);
        throw err;
      }
      changed();
      return publicUser(await loadUser(user.userName));
    },
    async changeUser(userName, changes) {
      await loadUser(userName);
      const sets = changes.permissionSets === undefined ? undefined : permissionSets(changes.permissionSets);
      if (changes.password !== undefined) checkPassword(changes.password);
      const passwordHash = changes.password === undefined ? undefined : await hashPassword(changes.password);
      const at = now();
      // Any change of what a session was granted ends the user's sessions (console/sessions.ts).
      const stampChanges = sets !== undefined || changes.enabled !== undefined || passwordHash !== undefined;
      await guarded(db, `Changing user '${userName}'`, (trx) =>
        store.updateUser(trx, userName, {
          updated_at: at,
          ...(stampChanges ? { security_stamp: randomUUID() } : {}),
          ...(sets === undefined ? {} : { permission_sets: JSON.stringify(sets) }),
          ...(changes.enabled === undefined ? {} : { enabled: changes.enabled ? 1 : 0 }),
          ...(passwordHash === undefined ? {} : { password_hash: passwordHash, password_changed_at: at }),
        }),
      );
      changed();
      return publicUser(await loadUser(userName));
    },
    async deleteUser(userName) {
      await loadUser(userName);
      await guarded(db, `Deleting user '${userName}'`, (trx) => store.deleteUser(trx, userName));
      changed();
    },
    listApplications: () => store.listApplications(db),
    getApplication: loadApplication,
    async createApplication(application) {
      checkClientId(application.clientId);
      checkIssuer(application.issuer);
      const issuer = application.issuer ?? defaultIssuer();
      checkDisplayName(application.displayName ?? '');
      const sets = permissionSets(application.permissionSets);
      if ((await store.findApplication(db, application.clientId)) !== undefined) {
        throw conflict('conflict', `Application '${application.clientId}' is already registered.`);
      }
      const at = now();
      await store.insertApplication(db, {
        client_id: application.clientId,
        issuer,
        display_name: application.displayName ?? '',
        enabled: application.enabled === false ? 0 : 1,
        permission_sets: JSON.stringify(sets),
        created_at: at,
        updated_at: at,
      });
      changed();
      return loadApplication(application.clientId);
    },
    async changeApplication(clientId, changes) {
      await loadApplication(clientId);
      checkIssuer(changes.issuer);
      if (changes.displayName !== undefined) checkDisplayName(changes.displayName);
      const sets = changes.permissionSets === undefined ? undefined : permissionSets(changes.permissionSets);
      await guarded(db, `Changing application '${clientId}'`, (trx) =>
        store.updateApplication(trx, clientId, {
          updated_at: now(),
          ...(changes.issuer === undefined ? {} : { issuer: changes.issuer }),
          ...(changes.displayName === undefined ? {} : { display_name: changes.displayName }),
          ...(sets === undefined ? {} : { permission_sets: JSON.stringify(sets) }),
          ...(changes.enabled === undefined ? {} : { enabled: changes.enabled ? 1 : 0 }),
        }),
      );
      changed();
      return loadApplication(clientId);
    },
    async deleteApplication(clientId) {
      await loadApplication(clientId);
      await guarded(db, `Deleting application '${clientId}'`, (trx) => store.deleteApplication(trx, clientId));
      changed();
    },
  };
}

export interface InitialAdministrator {
  readonly userName: string;
  /** Set when the password was generated: shown once to whoever started the service, never stored in clear. */
  readonly generatedPassword?: string;
}

/**
 * On the first start with an empty database (no user, no application), creates a SUPER user named
 * `userName` with `password`, or with a generated password that the caller prints once. Does nothing
 * (undefined) when any principal exists already.
 */
export async function ensureInitialAdministrator(
  accounts: Accounts,
  db: Db,
  settings: { readonly userName: string; readonly password: string | undefined },
): Promise<InitialAdministrator | undefined> {
  if (await store.hasAnyPrincipal(db)) return undefined;
  const password = settings.password ?? generatePassword();
  try {
    await accounts.createUser({ userName: settings.userName, password, permissionSets: ['SUPER'] });
  } catch (err) {
    // Another process started at the same moment and created it: that one reports the password.
    if (err instanceof AppError && err.code === 'conflict') return undefined;
    if (err instanceof AppError)
      throw new AppError(err.status, err.code, `The initial administrator (IFW_ADMIN_USER / IFW_ADMIN_PASSWORD): ${err.message}`);
    throw err;
  }
  return settings.password === undefined ? { userName: settings.userName, generatedPassword: password } : { userName: settings.userName };
}
