/**
 * The pieces of route schemas every entity set shares: the error body, a key parameter, what a body may
 * carry, integers the databases can hold, and a closed set of words (a status) as a union of its literals.
 */
import { Type, type TInteger, type TLiteral, type TNumberOptions, type TSchemaOptions, type TUnion } from 'typebox';
import { INTEGER_MAX, INTEGER_MIN } from '../core/bounds.js';

/** Every error answer: `{"error":{"code","message"}}`. */
export const ErrorSchema = Type.Object({ error: Type.Object({ code: Type.String(), message: Type.String() }) });

/** `name(<key>)` routes are declared as `name/:key` (see odata.ts). */
export const KeyParams = Type.Object({ key: Type.String() });

/** OData clients may annotate a body (`@odata.context` from a GET sent back); anything else unknown is refused. */
export const ODATA_BODY = { additionalProperties: false, patternProperties: { '^@odata\\.': {} } } as const;

/** An answer to DELETE: no body. */
export const Deleted = Type.Null({ description: 'Deleted' });

type Literals<T extends readonly string[]> = { -readonly [I in keyof T]: TLiteral<T[I]> };

/**
 * One of the words of a model's `as const` array (`REQUEST_STATUSES`), so that a schema cannot list
 * other words than the model: `literalUnion(ENTRY_STATUSES)` is `Type.Union([Type.Literal('Ready'), …])`.
 */
export function literalUnion<const T extends readonly string[]>(values: T, options?: TSchemaOptions): TUnion<Literals<T>> {
  return Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  ) as unknown as TUnion<Literals<T>>;
}

/**
 * An integer property: within what both databases store (core/bounds.ts) unless narrower bounds are
 * given, so a value outside is refused with a 400 before any query. Every integer of every schema is
 * one of these (lint forbids `Type.Integer` elsewhere).
 */
export function Integer(options?: TNumberOptions): TInteger {
  return Type.Integer({ minimum: INTEGER_MIN, maximum: INTEGER_MAX, ...options });
}
