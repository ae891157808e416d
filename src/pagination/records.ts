/**
 * The records of a page by Response Data Path: what pagination counts to decide whether a page was
 * full. '' means the response root is the array (spec 4.4 table).
 */
import { compileLookup, describeJsonType } from '../json-path/lookup.js';

export type RecordsGetter = (body: unknown) => readonly unknown[] | null;

/** Compiles Response Data Path once; the getter returns the array it points to, or null. */
export function compileRecordsGetter(responseDataPath: string): RecordsGetter {
  const lookup = compileLookup(responseDataPath);
  return (body) => {
    const match = lookup(body);
    return match.kind === 'one' && Array.isArray(match.value) ? (match.value as readonly unknown[]) : null;
  };
}

/** The array at Response Data Path in `body`, or null when the path finds no array. */
export function extractRecords(body: unknown, responseDataPath: string): readonly unknown[] | null {
  return compileRecordsGetter(responseDataPath)(body);
}

const MAX_LISTED_KEYS = 8;

/** `properties "a", "b"` (at most 8 named), or `no properties`: what a user needs to pick a path. */
export function listKeys(value: object): string {
  const keys = Object.keys(value);
  const shown = keys.slice(0, MAX_LISTED_KEYS).map((k) => `"${k}"`);
  if (keys.length > MAX_LISTED_KEYS) shown.push(`… ${keys.length - MAX_LISTED_KEYS} more`);
  return keys.length === 0 ? 'no properties' : `properties ${shown.join(', ')}`;
}

/** ` (the response has properties "a", "b")` for an object, '' for anything else: the hint after "finds nothing". */
export const responseHint = (body: unknown): string =>
  typeof body === 'object' && body !== null && !Array.isArray(body) ? ` (the response has ${listKeys(body)})` : '';

/** Why Response Data Path finds no array in `body`: a sentence a user can act on. */
export function explainNoRecords(body: unknown, responseDataPath: string): string {
  if (responseDataPath === '') {
    const hint =
      typeof body === 'object' && body !== null
        ? ` with ${listKeys(body)}; set Response Data Path to the property holding the records`
        : '';
    return `Response Data Path is blank, so the response root must be the record array, but it is ${describeJsonType(body)}${hint}`;
  }
  const match = compileLookup(responseDataPath)(body);
  switch (match.kind) {
    case 'none':
      return `Response Data Path "${responseDataPath}" finds nothing in the response${responseHint(body)}`;
    case 'many':
      return `Response Data Path "${responseDataPath}" finds ${match.count} values; it must name the one record array`;
    case 'one':
      return `Response Data Path "${responseDataPath}" points to ${describeJsonType(match.value)}, not to the record array`;
    default: {
      const unexpected: never = match;
      return String(unexpected);
    }
  }
}
