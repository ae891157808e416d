/**
 * Where a paginator puts what changes per request (a page number, an offset and limit, a cursor): in
 * the query (the spec's way), in a request header, or in the endpoint's JSON POST body at a dot path
 * (`variables.after` for a GraphQL variable). One setting, `parametersIn`, shared by the types that
 * send parameters; the parameter names then name a query parameter, a header or a body path.
 */
import { invalidRequest } from '../core/errors.js';
import { choiceSetting } from './declaration.js';
import type { PageRequest } from './steps.js';
import { queryParamsTemplate } from './url.js';

export const parametersIn = choiceSetting({
  field: 'parametersIn',
  label: 'Send Parameters In',
  description:
    'Page Number, Offset/Limit and Cursor: where the paginator sends its parameters: query (default), header (the parameter names are request header names) or body (the names are dot paths into the JSON POST body, e.g. variables.after for a GraphQL variable)',
  help: 'Where the page parameters go: the query string (default), request headers named by them, or the JSON POST body at the dot paths they name (variables.after for a GraphQL variable; the endpoint must be POST with a JSON object body).',
  optionLabels: { query: 'Query parameters', header: 'Request headers', body: 'JSON body (POST)' },
  byDefault: 'query',
});

export type ParametersIn = (typeof parametersIn.options)[number];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A dot path's names; each must be non-empty. */
export function bodyPathProblem(path: string): string | null {
  return path.split('.').some((name) => name.trim() === '') ? `"${path}" is not a dot path of property names (e.g. variables.after)` : null;
}

/** The endpoint's body as the object parameters are set in; throws AppError (invalidRequest) when it is not one. */
function bodyObject(body: string | null): Record<string, unknown> {
  if (body === null || body.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw invalidRequest('the endpoint body is not JSON, so the paginator cannot set its parameters in it');
  }
  if (!isObject(parsed)) throw invalidRequest('the endpoint body is not a JSON object, so the paginator cannot set its parameters in it');
  return parsed;
}

/** A copy of `base` with `value` at the dot path `path`, objects created on the way. */
function withValue(base: Record<string, unknown>, names: readonly string[], value: unknown, path: string): Record<string, unknown> {
  const [name, ...rest] = names as [string, ...string[]];
  if (rest.length === 0) return { ...base, [name]: value };
  const inner = base[name] ?? {};
  if (!isObject(inner)) throw invalidRequest(`the endpoint body has a non-object at "${name}" on the way to "${path}"`);
  return { ...base, [name]: withValue(inner, rest, value, path) };
}

/** The values of one request, by parameter name; a number stays a number in a JSON body. */
export type Placed = Readonly<Record<string, string | number>>;

/**
 * Builds requests from the first URL and the endpoint's body. Throws AppError (invalidRequest) at once
 * when the parameters go in a body that is not a JSON object.
 */
export function requestPlacer(where: ParametersIn, firstUrl: string, body: string | null): (values: Placed) => Omit<PageRequest, 'pageNo'> {
  switch (where) {
    case 'query': {
      // The same names on every page (a cursor, a page and its size): the URL is serialised once per set of names.
      let template: { readonly key: string; readonly build: (values: readonly string[]) => string } | undefined;
      return (values) => {
        const names = Object.keys(values);
        const key = names.join('\n');
        if (template?.key !== key) template = { key, build: queryParamsTemplate(firstUrl, names) };
        return { url: template.build(names.map((name) => String(values[name]))) };
      };
    }
    case 'header':
      return (values) => ({
        url: firstUrl,
        headers: Object.fromEntries(Object.entries(values).map(([name, value]) => [name, String(value)])),
      });
    case 'body': {
      const base = bodyObject(body);
      return (values) => {
        let next = base;
        for (const [path, value] of Object.entries(values)) next = withValue(next, path.split('.'), value, path);
        return { url: firstUrl, body: JSON.stringify(next) };
      };
    }
    default: {
      const never: never = where;
      throw new Error(`unknown place ${String(never)}`);
    }
  }
}

/** RFC 9110 token: what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const headerNameProblem = (name: string): string | null =>
  HEADER_NAME.test(name) ? null : `"${name}" is not a usable header name (letters, digits and !#$%&'*+.^_\`|~- only)`;

interface PlacedSettings {
  readonly parametersIn?: ParametersIn;
}

/**
 * The rules of a parameter name sent where Send Parameters In says: a header name, or a dot path into
 * the body. `key` is the engine's name of the setting, `label` its spec name.
 */
export function placedNameRule<K extends string, V extends PlacedSettings & Readonly<Record<K, string>>>(key: K, label: string) {
  const problemOf = (s: V): string | null => {
    const name = s[key];
    if (name === '') return null;
    if (s.parametersIn === 'header') return headerNameProblem(name);
    if (s.parametersIn === 'body') return bodyPathProblem(name);
    return null;
  };
  return {
    setting: key,
    broken: (s: V) => problemOf(s) !== null,
    problem: `${label} must be a header name when parameters go in headers, a dot path when they go in the body`,
    fieldProblem: (s: V) => problemOf(s) ?? '',
  };
}
