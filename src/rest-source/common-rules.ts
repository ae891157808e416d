/**
 * The small rules both rule sets (connection-rules.ts, endpoint-rules.ts) apply: codes, names and
 * texts, numbers in a range, one value of a list, and header and query maps. Each returns the value,
 * normalized, or throws a 400 whose message starts with the offending property's path.
 */
import { invalidAt, pathOf } from '../core/validation.js';

const CODE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,49}$/;
export const CONTROL = /\p{Cc}/u;
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Set by the HTTP client from the request itself; configuring them breaks requests. */
const RESERVED_HEADERS = ['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer'];
const NAME_LIMIT = 256;
export const SECRET_LIMIT = 8192;
export const URL_LIMIT = 2048;

export function oneOf<T extends string>(values: readonly T[], value: string | null | undefined, fallback: T, at: string): T {
  if (value === undefined || value === null) return fallback;
  if (!(values as readonly string[]).includes(value)) throw invalidAt(at, `"${value}" is not allowed; use one of ${values.join(', ')}`);
  return value as T;
}

export function intIn(
  value: number | null | undefined,
  range: { readonly min: number; readonly max: number; readonly default: number },
  at: string,
): number {
  const n = value ?? range.default;
  if (!Number.isInteger(n) || n < range.min || n > range.max)
    throw invalidAt(at, `must be a whole number from ${range.min} to ${range.max}, got ${n}`);
  return n;
}

export function validateCode(code: string, at: string): string {
  if (!CODE_PATTERN.test(code))
    throw invalidAt(at, `"${code}" is not a valid code: use 1 to 50 letters, digits, "_", "." or "-", starting with a letter or digit`);
  return code;
}

/** A name or text that must be there: `missing` says why when it is not. */
export function required(value: string | null | undefined, at: string, missing: string, limit = NAME_LIMIT): string {
  if (value === undefined || value === null || value.trim() === '') throw invalidAt(at, missing);
  if (value.length > limit) throw invalidAt(at, `must be at most ${limit} characters, got ${value.length}`);
  if (CONTROL.test(value)) throw invalidAt(at, 'must not contain line breaks or other control characters');
  return value;
}

export function headerMap(headers: Readonly<Record<string, string>> | undefined, at: string): Record<string, string> {
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers ?? {})) {
    const where = pathOf(at, name);
    if (!HEADER_NAME.test(name)) throw invalidAt(where, `"${name}" is not a valid header name (letters, digits and !#$%&'*+.^_\`|~- only)`);
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.includes(lower)) throw invalidAt(where, `${name} is set by the HTTP client and cannot be configured`);
    const earlier = seen.get(lower);
    if (earlier !== undefined)
      throw invalidAt(where, `"${name}" is given twice (also "${earlier}"); header names are compared without case`);
    seen.set(lower, name);
    if (CONTROL.test(value)) throw invalidAt(where, 'the value must not contain line breaks or other control characters');
    if (value.length > SECRET_LIMIT) throw invalidAt(where, `the value must be at most ${SECRET_LIMIT} characters, got ${value.length}`);
  }
  return { ...headers };
}

export function queryMap(query: Readonly<Record<string, string>> | undefined, at: string): Record<string, string> {
  for (const [name, value] of Object.entries(query ?? {})) {
    const where = pathOf(at, name);
    if (name === '' || name.length > NAME_LIMIT) throw invalidAt(at, `parameter names must be 1 to ${NAME_LIMIT} characters`);
    if (CONTROL.test(name) || CONTROL.test(value)) throw invalidAt(where, 'must not contain line breaks or other control characters');
  }
  return { ...query };
}

/** The property names of the query parameters: `queryParameters`, and `query`, its former name, still accepted on input. */
export type QueryNames = {
  readonly queryParameters?: Readonly<Record<string, string>> | undefined;
  readonly query?: Readonly<Record<string, string>> | undefined;
};

/**
 * The query parameters an input sends, under either name (not both), checked by `queryMap`, with the
 * path of the name it used (for the messages of later rules).
 */
export function queryParametersOf(input: QueryNames, at: string): { readonly query: Record<string, string>; readonly at: string } {
  if (input.queryParameters !== undefined && input.query !== undefined)
    throw invalidAt(pathOf(at, 'query'), 'is the former name of queryParameters; send one of them, not both');
  const where = pathOf(at, input.query === undefined ? 'queryParameters' : 'query');
  return { query: queryMap(input.queryParameters ?? input.query, where), at: where };
}

/** A stored input with a patch on top: a patch that sends the query parameters under either name replaces them. */
export function withPatch<T extends QueryNames>(base: T, patch: Partial<T>): T {
  if (patch.query === undefined && patch.queryParameters === undefined) return { ...base, ...patch };
  const { query: _query, queryParameters: _parameters, ...rest } = base;
  return { ...rest, ...patch } as T;
}

export const findKey = (map: Readonly<Record<string, string>>, name: string, ignoreCase: boolean): string | undefined =>
  Object.keys(map).find((k) => (ignoreCase ? k.toLowerCase() === name.toLowerCase() : k === name));
