/**
 * A tiny path compiler for locating values in parsed JSON: the records path of an integration and the
 * source path of each Integration Field. A path is parsed once into segments and turned into a getter
 * closure, because the getter runs once per field per record (hundreds of thousands of times).
 *
 * Accepted forms (a subset of JSONPath plus the dot paths users write by hand):
 *   ''                      the root itself
 *   address.city            dot path; `lines.0.qty` indexes an array
 *   items[0].qty            brackets also work without a leading `$`
 *   $  $.address.city  $['odd key'].x  $["@odata.value"]  $.items[0]
 * Wildcards, filters, slices, negative indexes and recursive descent are refused: a field must name
 * exactly one value.
 */
import { invalidRequest } from '../core/errors.js';

/** A property name, or an index that also matches the property of the same name on an object. */
export type PathSegment = { readonly kind: 'name'; readonly name: string } | { readonly kind: 'index'; readonly index: number };

export type PathGetter = (root: unknown) => unknown;

const INDEX = /^(0|[1-9]\d*)$/;

function invalid(path: string, reason: string): Error {
  return invalidRequest(`invalid path "${path}": ${reason}`);
}

function nameOrIndex(name: string): PathSegment {
  return INDEX.test(name) && Number.isSafeInteger(Number(name)) ? { kind: 'index', index: Number(name) } : { kind: 'name', name };
}

/**
 * Reads a quoted bracket member (`['a b']` or `["a\"b"]`) of `body` starting at the quote; returns the
 * name and the index after `]`. Positions in messages are indexes into the whole `path`.
 */
function readQuoted(path: string, body: string, start: number, offset: number): { name: string; next: number } {
  const quote = body[start];
  let name = '';
  for (let i = start + 1; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') {
      const escaped = body[i + 1];
      if (escaped === undefined) break;
      name += escaped;
      i++;
    } else if (c === quote) {
      if (body[i + 1] !== ']') throw invalid(path, `expected "]" after the quoted name at position ${offset + i + 1}`);
      return { name, next: i + 2 };
    } else {
      name += c;
    }
  }
  throw invalid(path, 'unterminated quoted name');
}

/** Parses the part after `$` (or a whole dot path, read as if it followed `$.`); `offset` maps body indexes to path indexes. */
function parseSegments(path: string, body: string, offset: number, jsonPath: boolean): PathSegment[] {
  const segments: PathSegment[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i];
    if (c === '.') {
      if (jsonPath && body[i + 1] === '.') throw invalid(path, 'recursive descent ("..") is not supported');
      let end = i + 1;
      while (end < body.length && body[end] !== '.' && body[end] !== '[') end++;
      const name = body.slice(i + 1, end);
      if (name === '') throw invalid(path, `empty name at position ${offset + i + 1}`);
      if (name === '*') throw invalid(path, 'wildcards are not supported');
      segments.push(nameOrIndex(name));
      i = end;
    } else if (c === '[') {
      const q = body[i + 1];
      if (q === "'" || q === '"') {
        const { name, next } = readQuoted(path, body, i + 1, offset);
        segments.push({ kind: 'name', name });
        i = next;
      } else {
        const close = body.indexOf(']', i);
        const inner = close < 0 ? '' : body.slice(i + 1, close);
        if (!INDEX.test(inner) || !Number.isSafeInteger(Number(inner))) {
          throw invalid(path, `only quoted names and non-negative indexes are supported in brackets (at position ${offset + i})`);
        }
        segments.push({ kind: 'index', index: Number(inner) });
        i = close + 1;
      }
    } else {
      throw invalid(path, `unexpected "${c}" at position ${offset + i}`);
    }
  }
  return segments;
}

export function parsePath(path: string): PathSegment[] {
  if (path === '') return [];
  if (path.startsWith('$')) return parseSegments(path, path.slice(1), 1, true);
  if (path.startsWith('.') || path.startsWith('[')) throw invalid(path, 'a dot path starts with a name');
  return parseSegments(path, `.${path}`, -1, false);
}

/** Names inherited by every parsed object; only these need an own-property check (JSON objects have no other prototype). */
const inherited = (name: string): boolean => name in Object.prototype;

function step(segment: PathSegment): (value: unknown) => unknown {
  if (segment.kind === 'index') {
    const { index } = segment;
    const key = String(index);
    return (value) => {
      if (typeof value !== 'object' || value === null) return undefined;
      if (Array.isArray(value)) return value[index] as unknown;
      return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
    };
  }
  const { name } = segment;
  if (inherited(name)) {
    return (value) =>
      typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, name)
        ? (value as Record<string, unknown>)[name]
        : undefined;
  }
  return (value) =>
    typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[name] : undefined;
}

/** Compiles a path into a getter returning the value, or undefined when any step is missing. Throws AppError on a bad path. */
export function compilePath(path: string): PathGetter {
  const steps = parsePath(path).map(step);
  // Specialised shapes: most source paths have one or two segments.
  if (steps.length === 0) return (root) => root;
  if (steps.length === 1) return steps[0]!;
  if (steps.length === 2) {
    const [a, b] = steps as [PathGetter, PathGetter];
    return (root) => b(a(root));
  }
  return (root) => {
    let value = root;
    for (let i = 0; i < steps.length && value !== undefined; i++) value = steps[i]!(value);
    return value;
  };
}
