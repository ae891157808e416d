/** Storage of users and applications. Permission sets are stored as a JSON array of names. */
import type { ApplicationRow, UserRow } from '../storage/schema.js';
import type { Application, UserCredentials } from './model.js';
import { parseStoredPermissionSets } from './permission-sets.js';
import type { Db } from '../storage/db.js';

const toUser = (row: UserRow): UserCredentials => ({
  userName: row.user_name,
  enabled: row.enabled === 1,
  permissionSets: parseStoredPermissionSets(row.permission_sets),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  passwordChangedAt: row.password_changed_at,
  passwordHash: row.password_hash,
  userId: row.user_id,
  securityStamp: row.security_stamp,
});

const toApplication = (row: ApplicationRow): Application => ({
  clientId: row.client_id,
  issuer: row.issuer,
  displayName: row.display_name,
  enabled: row.enabled === 1,
  permissionSets: parseStoredPermissionSets(row.permission_sets),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export async function findUser(db: Db, userName: string): Promise<UserCredentials | undefined> {
  const row = await db.selectFrom('ifw_user').selectAll().where('user_name', '=', userName).executeTakeFirst();
  return row && toUser(row);
}

export async function listUsers(db: Db): Promise<UserCredentials[]> {
  return (await db.selectFrom('ifw_user').selectAll().orderBy('user_name').execute()).map(toUser);
}

export async function insertUser(db: Db, row: UserRow): Promise<void> {
  await db.insertInto('ifw_user').values(row).execute();
}

export async function updateUser(db: Db, userName: string, changes: Partial<Omit<UserRow, 'user_name' | 'created_at'>>): Promise<void> {
  await db.updateTable('ifw_user').set(changes).where('user_name', '=', userName).execute();
}

export async function deleteUser(db: Db, userName: string): Promise<void> {
  await db.deleteFrom('ifw_user').where('user_name', '=', userName).execute();
}

export async function findApplication(db: Db, clientId: string): Promise<Application | undefined> {
  const row = await db.selectFrom('ifw_application').selectAll().where('client_id', '=', clientId).executeTakeFirst();
  return row && toApplication(row);
}

export async function listApplications(db: Db): Promise<Application[]> {
  return (await db.selectFrom('ifw_application').selectAll().orderBy('client_id').execute()).map(toApplication);
}

export async function insertApplication(db: Db, row: ApplicationRow): Promise<void> {
  await db.insertInto('ifw_application').values(row).execute();
}

export async function updateApplication(
  db: Db,
  clientId: string,
  changes: Partial<Omit<ApplicationRow, 'client_id' | 'created_at'>>,
): Promise<void> {
  await db.updateTable('ifw_application').set(changes).where('client_id', '=', clientId).execute();
}

export async function deleteApplication(db: Db, clientId: string): Promise<void> {
  await db.deleteFrom('ifw_application').where('client_id', '=', clientId).execute();
}

/** Whether any user or application exists at all (the first start creates the administrator). */
export async function hasAnyPrincipal(db: Db): Promise<boolean> {
  const user = await db.selectFrom('ifw_user').select('user_name').limit(1).executeTakeFirst();
  if (user !== undefined) return true;
  const app = await db.selectFrom('ifw_application').select('client_id').limit(1).executeTakeFirst();
  return app !== undefined;
}
