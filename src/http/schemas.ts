/** The pieces of route schemas every entity set shares: the error body, a key parameter, what a body may carry. */
import { Type } from 'typebox';

/** Every error answer: `{"error":{"code","message"}}`. */
export const ErrorSchema = Type.Object({ error: Type.Object({ code: Type.String(), message: Type.String() }) });

/** `name(<key>)` routes are declared as `name/:key` (see odata.ts). */
export const KeyParams = Type.Object({ key: Type.String() });

/** OData clients may annotate a body (`@odata.context` from a GET sent back); anything else unknown is refused. */
export const ODATA_BODY = { additionalProperties: false, patternProperties: { '^@odata\\.': {} } } as const;
