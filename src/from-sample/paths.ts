/**
 * A path to a value as an integration stores it (json-path/paths.ts reads it back): a dot path
 * (`address.city`) when every name can be written so, else JSONPath with quoted names
 * (`$['first name']`, `$['*']`). A name that is all digits reads as an index there, which also finds the
 * property of that name on an object, so it may stay in a dot path.
 */
export function formatPath(segments: readonly string[]): string {
  if (segments.length === 0) return '';
  const plain = (s: string, i: number) =>
    s !== '' && s !== '*' && !/[.[\]'"\\]/.test(s) && !(i === 0 && s.startsWith('$')) && s.trim() === s;
  if (segments.every(plain)) return segments.join('.');
  return `$${segments.map((s) => `['${s.replace(/[\\']/g, (c) => `\\${c}`)}']`).join('')}`;
}
