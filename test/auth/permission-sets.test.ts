import { describe, expect, it } from 'vitest';
import {
  allows,
  parsePermissionSet,
  PERMISSION_SET_NAMES,
  PERMISSION_SETS,
  permissionsOf,
  type PermissionSetName,
} from '../../src/auth/permission-sets.js';
import { AppError } from '../../src/core/errors.js';
import { PERMISSIONS, type Permission } from '../../src/auth/permissions.js';

const Y = true;
const N = false;

/** The documented model (spec section 5, issue 3), written out once more by hand. */
const EXPECTED: Record<Permission, Record<PermissionSetName | 'no set', boolean>> = {
  //              'VENDOR IF ALL'  'VENDOR IF STANDARD'  SUPER  'no set'
  public: { 'VENDOR IF ALL': Y, 'VENDOR IF STANDARD': Y, SUPER: Y, 'no set': Y },
  bulkImport: { 'VENDOR IF ALL': Y, 'VENDOR IF STANDARD': N, SUPER: Y, 'no set': N },
  read: { 'VENDOR IF ALL': Y, 'VENDOR IF STANDARD': Y, SUPER: Y, 'no set': N },
  configure: { 'VENDOR IF ALL': Y, 'VENDOR IF STANDARD': N, SUPER: Y, 'no set': N },
  configureConnections: { 'VENDOR IF ALL': Y, 'VENDOR IF STANDARD': N, SUPER: Y, 'no set': N },
  configureRest: { 'VENDOR IF ALL': Y, 'VENDOR IF STANDARD': Y, SUPER: Y, 'no set': N },
  runImports: { 'VENDOR IF ALL': Y, 'VENDOR IF STANDARD': Y, SUPER: Y, 'no set': N },
  jobQueue: { 'VENDOR IF ALL': Y, 'VENDOR IF STANDARD': N, SUPER: Y, 'no set': N },
  administer: { 'VENDOR IF ALL': N, 'VENDOR IF STANDARD': N, SUPER: Y, 'no set': N },
  metrics: { 'VENDOR IF ALL': N, 'VENDOR IF STANDARD': N, SUPER: Y, 'no set': N },
};

const cases = PERMISSIONS.flatMap((permission) =>
  ([...PERMISSION_SET_NAMES, 'no set'] as const).map((set) => [set, permission, EXPECTED[permission][set]] as const),
);

describe('allows, for each permission set and each permission', () => {
  it.each(cases)('%s × %s → %s', (set, permission, expected) => {
    expect(allows(set === 'no set' ? [] : [set], permission)).toBe(expected);
  });
});

describe('the permission sets', () => {
  it('are exactly VENDOR IF ALL, VENDOR IF STANDARD and SUPER', () => {
    expect(Object.keys(PERMISSION_SETS).sort()).toEqual(['SUPER', 'VENDOR IF ALL', 'VENDOR IF STANDARD']);
  });

  it('give VENDOR IF ALL every permission except public, administer and metrics', () => {
    expect([...PERMISSION_SETS['VENDOR IF ALL']].sort()).toEqual(
      PERMISSIONS.filter((p) => p !== 'public' && p !== 'administer' && p !== 'metrics').sort(),
    );
  });

  it('give SUPER every permission except public (which needs no grant)', () => {
    expect([...PERMISSION_SETS.SUPER].sort()).toEqual(PERMISSIONS.filter((p) => p !== 'public').sort());
  });

  it('grant administer in SUPER only', () => {
    const holders = PERMISSION_SET_NAMES.filter((s) => PERMISSION_SETS[s].has('administer'));
    expect(holders).toEqual(['SUPER']);
  });

  it('keep VENDOR IF STANDARD away from the Bulk Import API, the job queue and general configuration', () => {
    expect([...PERMISSION_SETS['VENDOR IF STANDARD']].sort()).toEqual(['configureRest', 'read', 'runImports']);
  });

  it('place every permission (public aside) in at least one set', () => {
    for (const p of PERMISSIONS.filter((x) => x !== 'public')) {
      expect(
        PERMISSION_SET_NAMES.some((s) => PERMISSION_SETS[s].has(p)),
        p,
      ).toBe(true);
    }
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(PERMISSION_SETS)).toBe(true);
  });
});

describe('permissionsOf', () => {
  it('is empty for no sets', () => {
    expect([...permissionsOf([])]).toEqual([]);
  });

  it('is the union of several sets', () => {
    const both = permissionsOf(['VENDOR IF STANDARD', 'VENDOR IF ALL']);
    expect([...both].sort()).toEqual([...PERMISSION_SETS['VENDOR IF ALL']].sort());
  });

  it('throws a plain (internal) error for an unknown stored set name instead of ignoring it', () => {
    expect(() => permissionsOf(['VENDOR IF ALL', 'VENDOR IF EVERYTHING'])).toThrow(/'VENDOR IF EVERYTHING' is not a known permission set/);
    expect(() => permissionsOf(['VENDOR IF EVERYTHING'])).not.toThrow(AppError);
  });

  it('makes allows throw for an unknown set name on a non-public permission', () => {
    expect(() => allows(['nope'], 'read')).toThrow(/not a known permission set/);
  });
});

describe('parsePermissionSet', () => {
  it.each(PERMISSION_SET_NAMES)('accepts %s', (name) => {
    expect(parsePermissionSet(name)).toBe(name);
  });

  it.each(['vendor if all', 'VENDOR_IF_ALL', ' SUPER', '', 'ADMIN'])(
    'refuses %j with a 400 invalidRequest naming the valid sets',
    (name) => {
      let error: unknown;
      try {
        parsePermissionSet(name);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ status: 400, code: 'invalidRequest' });
      expect((error as AppError).message).toBe(
        `unknown permission set '${name}'; expected one of 'VENDOR IF ALL', 'VENDOR IF STANDARD', 'SUPER'`,
      );
    },
  );
});
