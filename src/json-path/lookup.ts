/**
 * How pagination reads a value out of a response by a user-written path (Next Link JSON Path,
 * Response Data Path). Order, as DESIGN.md decides:
 *   1. an exact top-level property of that name, so `@odata.nextLink` works as written;
 *   2. RFC 9535 JSONPath (json-p3) when the path starts with `$`, e.g. `$['@odata.nextLink']`;
 *   3. a dot path (`links.next`, `results.items`) through the records-path compiler of src/mapping.
 * json-p3 stays behind this file so that swapping the implementation touches nothing else.
 */
import { JSONPathError, compile, type JSONValue } from 'json-p3';
import { invalidRequest } from '../core/errors.js';
import { compilePath } from './paths.js';

/** What a path found: nothing, exactly one value, or several (a JSONPath with wildcards or filters). */
export type PathMatch =
  { readonly kind: 'none' } | { readonly kind: 'one'; readonly value: unknown } | { readonly kind: 'many'; readonly count: number };

export type PathLookup = (body: unknown) => PathMatch;

const NONE: PathMatch = { kind: 'none' };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function compileJsonPath(path: string): PathLookup {
  let query;
  try {
    query = compile(path);
  } catch (err) {
    if (err instanceof JSONPathError) throw invalidRequest(`invalid JSONPath "${path}": ${err.message}`);
    throw err;
  }
  return (body) => {
    // JSON.parse output is always a JSONValue; the cast only names that fact for json-p3's types.
    const nodes = query.query(body as JSONValue).nodes;
    if (nodes.length === 0) return NONE;
    if (nodes.length === 1) return { kind: 'one', value: nodes[0]!.value };
    return { kind: 'many', count: nodes.length };
  };
}

function compileDotPath(path: string): PathLookup {
  const get = compilePath(path);
  return (body) => {
    const value = get(body);
    return value === undefined ? NONE : { kind: 'one', value };
  };
}

/**
 * Compiles a path once; the lookup runs once per page. '' names the root. Throws AppError
 * (invalidRequest) for a path that cannot be parsed.
 */
export function compileLookup(path: string): PathLookup {
  if (path === '') return (body) => ({ kind: 'one', value: body });
  const fallback = path.startsWith('$') ? compileJsonPath(path) : compileDotPath(path);
  return (body) => (isObject(body) && Object.hasOwn(body, path) ? { kind: 'one', value: body[path] } : fallback(body));
}

/** The problem with a path, or null when it compiles: for validating settings before they are saved. */
export function pathProblem(path: string): string | null {
  try {
    compileLookup(path);
    return null;
  } catch (err) {
    if (err instanceof Error) return err.message;
    throw err;
  }
}

/** A short description of a JSON value's type for messages: "an object", "the number 2", "null". */
export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'object':
      return 'an object';
    case 'string':
      return 'a string';
    case 'number':
      return `the number ${value}`;
    case 'boolean':
      return `the boolean ${value}`;
    default:
      return typeof value;
  }
}
