/**
 * Permission sets (spec section 5) as data. Users and applications hold sets; routes declare a
 * Permission; a caller may use a route when one of its sets grants the route's permission.
 */
import { AppError } from '../core/errors.js';
import { PERMISSIONS, type Permission } from './permissions.js';

export const PERMISSION_SET_NAMES = ['VENDOR IF ALL', 'VENDOR IF STANDARD', 'SUPER'] as const;
export type PermissionSetName = (typeof PERMISSION_SET_NAMES)[number];

/** 'public' needs no set: it is granted to everyone, credentials or not. */
type GrantablePermission = Exclude<Permission, 'public'>;

/**
 * Every set says yes or no to every permission, so a Permission added later fails the typecheck here
 * until someone decides which sets grant it.
 */
const GRANTS = {
  /** Everything in the integration framework, including the Bulk Import API. */
  'VENDOR IF ALL': {
    bulkImport: true,
    read: true,
    configure: true,
    configureConnections: true,
    configureRest: true,
    runImports: true,
    jobQueue: true,
    administer: false,
    metrics: false,
  },
  /**
   * REST API endpoints and their pagination on the connections an administrator set up; test those
   * connections; run and read imports; read integrations.
   */
  'VENDOR IF STANDARD': {
    bulkImport: false,
    read: true,
    configure: false,
    configureConnections: false,
    configureRest: true,
    runImports: true,
    jobQueue: false,
    administer: false,
    metrics: false,
  },
  /** Administer users and applications, plus everything else. */
  SUPER: {
    bulkImport: true,
    read: true,
    configure: true,
    configureConnections: true,
    configureRest: true,
    runImports: true,
    jobQueue: true,
    administer: true,
    metrics: true,
  },
} as const satisfies Record<PermissionSetName, Record<GrantablePermission, boolean>>;

const GRANTABLE = PERMISSIONS.filter((p): p is GrantablePermission => p !== 'public');

/** The permissions each set grants ('public' is not listed: nobody needs it granted). */
export const PERMISSION_SETS: Readonly<Record<PermissionSetName, ReadonlySet<Permission>>> = Object.freeze({
  'VENDOR IF ALL': granted('VENDOR IF ALL'),
  'VENDOR IF STANDARD': granted('VENDOR IF STANDARD'),
  SUPER: granted('SUPER'),
});

function granted(set: PermissionSetName): ReadonlySet<Permission> {
  return new Set(GRANTABLE.filter((p) => GRANTS[set][p]));
}

const isPermissionSetName = (name: string): name is PermissionSetName => (PERMISSION_SET_NAMES as readonly string[]).includes(name);

/** Validates a set name given by an administrator (admin API, CLI); 400 for an unknown one. */
export function parsePermissionSet(name: string): PermissionSetName {
  if (isPermissionSetName(name)) return name;
  throw new AppError(
    400,
    'invalidRequest',
    `unknown permission set '${name}'; expected one of ${PERMISSION_SET_NAMES.map((n) => `'${n}'`).join(', ')}`,
  );
}

/** A set name read from storage: validated on the way in, so an unknown one is an internal error. */
function storedSet(name: unknown): PermissionSetName {
  if (typeof name !== 'string' || !isPermissionSetName(name))
    throw new Error(`stored permission set '${String(name)}' is not a known permission set`);
  return name;
}

/**
 * The permission sets stored on a user or application (a JSON array). A stored name that is not a
 * set means the stored data is wrong: an internal error, never a silently smaller set.
 */
export function parseStoredPermissionSets(json: string): PermissionSetName[] {
  const names: unknown = JSON.parse(json);
  if (!Array.isArray(names)) throw new Error(`stored permission sets are not a list: ${json}`);
  return names.map((name) => {
    return storedSet(name);
  });
}

/** The sets that grant `permission`, for messages that tell a caller what they are missing. */
export function setsGranting(permission: Permission): PermissionSetName[] {
  return PERMISSION_SET_NAMES.filter((set) => PERMISSION_SETS[set].has(permission));
}

/**
 * The union of the permissions of `sets`. Names come from stored users and applications, which were
 * validated on the way in, so an unknown name means the stored data is wrong: that is an internal
 * error (a plain Error, answered 500 and logged), never a silently smaller set of permissions.
 */
export function permissionsOf(sets: readonly string[]): ReadonlySet<Permission> {
  const result = new Set<Permission>();
  for (const name of sets) {
    for (const p of PERMISSION_SETS[storedSet(name)]) result.add(p);
  }
  return result;
}

/** Whether a caller holding `sets` may use a route declaring `permission`; 'public' always may. */
export function allows(sets: readonly string[], permission: Permission): boolean {
  if (permission === 'public') return true;
  // Asked on every request: look the permission up in each set instead of building their union.
  let granted = false;
  for (const name of sets) {
    if (PERMISSION_SETS[storedSet(name)].has(permission)) granted = true;
  }
  return granted;
}
