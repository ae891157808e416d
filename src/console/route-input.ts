/**
 * What a console URL must look like, and where a console URL may send a browser: the schemas of a
 * route's path parameters and query, checked with the server's own validator, and `localPath`.
 */
import type { FastifyRequest } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { INTEGER_MAX, INTEGER_MIN, parseStorableInteger } from '../core/bounds.js';
import { AppError } from '../core/errors.js';
import { describeSchemaErrors, type SchemaError, type SchemaPart } from '../http/schema-errors.js';

/**
 * What a route's request must look like: its path parameters, its query and (for a form) its body, as
 * TypeBox schemas. The shell checks them (after the session and the CSRF token, before the handler)
 * and refuses a request that breaks them with the console's 400 page in words; the handler reads
 * `request.params`, `request.query` and `request.body` typed, without a cast. They are checked here
 * rather than declared to fastify so that the OpenAPI document, which covers the API, does not grow by
 * the console's pages.
 *
 * A form's body is checked as an object of its fields (`formFields`): each name with its text, a name
 * sent more than once with the list of its texts, the CSRF token left out. Declare it with `FormBody`.
 */
export interface RouteSchemas {
  readonly params?: TSchema;
  readonly query?: TSchema;
  readonly body?: TSchema;
}
type StaticOf<S> = S extends TSchema ? Static<S> : unknown;
export type ConsoleRequest<S extends RouteSchemas = RouteSchemas> = FastifyRequest<{
  Params: StaticOf<S['params']>;
  Querystring: StaticOf<S['query']>;
  Body: StaticOf<S['body']>;
}>;

/** A form field's text, at most `maxLength` characters (a pasted payload has its own byte limit). */
export const FormText = (maxLength = 4096) => Type.String({ maxLength });
/** A checkbox: sent as `on` when ticked, absent otherwise. */
export const FormCheckbox = Type.Optional(Type.Literal('on'));

/**
 * The fields a form sends: each declared field's schema, no other field unless `more` says which
 * names may come besides (a pattern, e.g. the rows of a repeated group: `'^fields\\.\\d+\\.[a-zA-Z]+$'`).
 */
export const FormBody = <P extends Record<string, TSchema>>(properties: P, more?: { readonly pattern: string; readonly value: TSchema }) =>
  Type.Object(
    properties,
    more === undefined
      ? { additionalProperties: false }
      : { patternProperties: { [more.pattern]: more.value }, additionalProperties: false },
  );

/** Fields sent any number of times (a group of checkboxes): the list of their texts, in order. */
export const FormList = (maxLength = 4096) => Type.Optional(Type.Array(Type.String({ maxLength }), { maxItems: 100 }));

/**
 * A form body as the object its schema checks: `name → text`; a name the schema declares a list
 * (`FormList`) → its texts; any other name sent more than once → its texts too, which its text
 * schema then refuses.
 */
export function formFields(form: URLSearchParams, schema: TSchema): Record<string, string | string[]> {
  const declared = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const fields = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of form) {
    if (name === '_csrf') continue;
    const seen = fields[name];
    if (seen === undefined) fields[name] = Object.hasOwn(declared, name) && declared[name]?.type === 'array' ? [value] : value;
    else fields[name] = Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return fields;
}

/** A string path parameter (every console URL's keys are text; the handler decides what it names). */
export const PathKey = <K extends string>(name: K) =>
  Type.Object({ [name]: Type.String() } as { [P in K]: ReturnType<typeof Type.String> });

/**
 * A part of the request checked against its schema with the server's own validator (the API's words
 * for a violation); refused with 400 otherwise.
 */
export function checkedInput<S extends TSchema>(
  request: FastifyRequest,
  schema: S,
  part: 'params' | 'querystring' | 'body',
  value: unknown = part === 'params' ? request.params : part === 'querystring' ? request.query : request.body,
): Static<S> {
  const validate = request.compileValidationSchema(schema, part);
  if (validate(value) !== true) {
    const errors = (validate.errors ?? []) as unknown as readonly SchemaError[];
    throw new AppError(400, 'invalidRequest', `${describeSchemaErrors(errors, part satisfies SchemaPart)}.`);
  }
  return value as Static<S>;
}

/** Any origin of the special scheme http: only used to resolve a path as a browser would. */
const PLACEHOLDER_ORIGIN = 'http://console.invalid';

/**
 * A path on this service to go to, read as a browser would read it in a `Location` header: parsed
 * against an origin (so `//host`, `/\\host` and `/<TAB>/host`, which browsers resolve to another
 * host, are seen as such) and kept only when it stays on that origin; anything else goes home. The
 * answer is serialised by the URL parser, so it is ASCII, percent-encoded, and safe in a header.
 */
export function localPath(target: string | undefined): string {
  if (target === undefined || !target.startsWith('/')) return '/';
  let url: URL;
  try {
    url = new URL(target, PLACEHOLDER_ORIGIN);
  } catch {
    return '/';
  }
  if (url.origin !== PLACEHOLDER_ORIGIN) return '/';
  return `${url.pathname}${url.search}`;
}

/**
 * A whole number a console URL or form carries, within what both databases hold (core/bounds.ts):
 * the number, or null when `raw` is none.
 */
export function wholeNumber(raw: string): number | null {
  return parseStorableInteger(raw.trim());
}

/** A form's whole number: `what` must be one, else a 400 that says so. */
export function formInteger(raw: string, what: string): number {
  const n = wholeNumber(raw);
  if (n === null)
    throw new AppError(400, 'invalidRequest', `${what} must be a whole number from ${INTEGER_MIN} to ${INTEGER_MAX}; got '${raw}'.`);
  return n;
}

/** The integration a console URL names by its sorting order; 404 for anything that cannot be one. */
export function sortingOrderOf(raw: string): number {
  const n = wholeNumber(raw);
  if (n === null || raw.trim() !== raw) throw new AppError(404, 'notFound', `No integration ${raw}.`);
  return n;
}
