/**
 * What every declaration (target tables, integrations, REST API connections and endpoints, users)
 * shares: messages that start with where in the input the problem is, the comparison of a declared
 * value with the stored one, and what a declaration did.
 */
import { conflict, invalidRequest, type AppError } from './errors.js';

/** What declaring something did: `ifw apply` reports it per item. */
export type ChangeResult = 'created' | 'updated' | 'unchanged';

/** `pathOf('fields[2]', 'type')` is `fields[2].type`; a number key is an array index. */
export function pathOf(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  return base === '' ? key : `${base}.${key}`;
}

export function invalidAt(path: string, reason: string): AppError {
  return invalidRequest(path === '' ? reason : `${path}: ${reason}`);
}

export function incompatibleAt(path: string, reason: string): AppError {
  return conflict('incompatibleChange', path === '' ? reason : `${path}: ${reason}`);
}

/** Deep equality of JSON-like values, whatever the order of object keys. */
export function sameJson(a: unknown, b: unknown): boolean {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : typeof v === 'object' && v !== null
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([, x]) => x !== undefined)
              .sort(([k1], [k2]) => (k1 < k2 ? -1 : 1))
              .map(([k, x]) => [k, canonical(x)]),
          )
        : v;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}
