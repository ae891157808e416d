/**
 * The `pagination` column of `ifw_rest_endpoint`: an endpoint's Pagination section stored as the
 * tagged union it is validated into, as JSON, with Response Data Path as configured (`$` kept). It is
 * written only from validated settings; reading checks its shape once, so a row changed by hand fails
 * there, naming the endpoint, rather than in the middle of a run.
 */
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import type { PaginationSettings } from '../pagination/index.js';

const closed = { additionalProperties: false } as const;
const common = {
  maxPages: Type.Integer(),
  pageSize: Type.Union([Type.Integer(), Type.Null()]),
  responseDataPath: Type.String(),
};
const StoredPaginationSchema = Type.Union([
  Type.Object({ type: Type.Literal('none'), ...common }, closed),
  Type.Object({ type: Type.Literal('nextLink'), nextLinkPath: Type.String(), allowCrossOrigin: Type.Boolean(), ...common }, closed),
  Type.Object({ type: Type.Literal('pageNumber'), pageParam: Type.String(), ...common, pageSize: Type.Integer() }, closed),
  Type.Object(
    { type: Type.Literal('offsetLimit'), offsetParam: Type.String(), limitParam: Type.String(), ...common, pageSize: Type.Integer() },
    closed,
  ),
]);

export const paginationColumn = (pagination: PaginationSettings): string => JSON.stringify(pagination);

export function paginationFromColumn(text: string, endpointCode: string): PaginationSettings {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!Value.Check(StoredPaginationSchema, value)) {
    throw new Error(`REST API endpoint "${endpointCode}": the stored pagination ${text} is not one of the Pagination section's forms`);
  }
  // The schema's type must stay assignable to the engine's union: this assignment fails to compile otherwise.
  const pagination: PaginationSettings = value;
  return pagination;
}
