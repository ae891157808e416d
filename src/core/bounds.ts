/**
 * What both databases can hold, checked before either sees a value, so that SQLite and PostgreSQL
 * answer the same (docs/security.md, "Bounds"):
 *   - every integer the service stores is a 32-bit signed integer (PostgreSQL's `integer`);
 *   - no text holds U+0000 (PostgreSQL's `text` cannot, so SQLite is held to the same rule).
 */

export const INTEGER_MIN = -2_147_483_648;
export const INTEGER_MAX = 2_147_483_647;

export function isStorableInteger(value: number): boolean {
  return Number.isInteger(value) && value >= INTEGER_MIN && value <= INTEGER_MAX;
}

/**
 * A whole number written as text (an optional '-' and at most 10 digits, nothing around them) that
 * fits the bounds above; null for anything else. A URL's integer key and a console form's number
 * are read this way.
 */
export function parseStorableInteger(text: string): number | null {
  if (!/^-?\d{1,10}$/.test(text)) return null;
  const value = Number(text);
  return isStorableInteger(value) ? value : null;
}

export const NUL = '\u0000';

/** The words every refusal of a U+0000 uses, after the place it was found. */
export const NUL_REASON = 'contains the character U+0000, which the database cannot store';

/**
 * Where in a parsed JSON value (or a form) the first U+0000 is, in a key or a string: `name`,
 * `fields[2].title`, `` (the value itself); undefined when there is none.
 */
export function findNul(value: unknown, at = ''): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? at : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], `${at}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const path = at === '' ? key : `${at}.${key}`;
    if (key.includes(NUL)) return path;
    const found = findNul(item, path);
    if (found !== undefined) return found;
  }
  return undefined;
}
