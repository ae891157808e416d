/**
 * The pagination columns of `ifw_rest_endpoint`:
 *
 * - `pagination`: the endpoint's Pagination section as the tagged union it is validated into, as JSON,
 *   with Response Data Path as configured (null when not set, `$` kept);
 * - `pagination_kept`: the settings of the pagination types not in use (settings.ts KeptPagination),
 *   as JSON in the API's names, `{}` when none is kept.
 *
 * Both are written only from validated settings; reading checks their shape once, so a row changed by
 * hand fails there, naming the endpoint, rather than in the middle of a run.
 */
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import type { ConfiguredPagination, KeptPagination } from './settings.js';
import { Integer } from '../http/schemas.js';

const closed = { additionalProperties: false } as const;
const common = {
  maxPages: Integer(),
  pageSize: Type.Union([Integer(), Type.Null()]),
  responseDataPath: Type.Union([Type.String(), Type.Null()]),
};
const StoredPaginationSchema = Type.Union([
  Type.Object({ type: Type.Literal('none'), ...common }, closed),
  Type.Object({ type: Type.Literal('nextLink'), nextLinkPath: Type.String(), allowCrossOrigin: Type.Boolean(), ...common }, closed),
  Type.Object({ type: Type.Literal('pageNumber'), pageParam: Type.String(), ...common, pageSize: Integer() }, closed),
  Type.Object(
    { type: Type.Literal('offsetLimit'), offsetParam: Type.String(), limitParam: Type.String(), ...common, pageSize: Integer() },
    closed,
  ),
]);
const StoredKeptSchema = Type.Object(
  {
    nextLinkJsonPath: Type.Optional(Type.String()),
    allowCrossOrigin: Type.Optional(Type.Boolean()),
    pageParameterName: Type.Optional(Type.String()),
    offsetParameterName: Type.Optional(Type.String()),
    limitParameterName: Type.Optional(Type.String()),
  },
  closed,
);

export const paginationColumn = (pagination: ConfiguredPagination): string => JSON.stringify(pagination);
export const keptPaginationColumn = (kept: KeptPagination): string => JSON.stringify(kept);

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

export function paginationFromColumn(text: string, endpointCode: string): ConfiguredPagination {
  const value = parsed(text);
  if (!Value.Check(StoredPaginationSchema, value)) {
    throw new Error(`REST API endpoint "${endpointCode}": the stored pagination ${text} is not one of the Pagination section's forms`);
  }
  // The schema's type must stay assignable to the settings' union: this assignment fails to compile otherwise.
  const pagination: ConfiguredPagination = value;
  return pagination;
}

export function keptPaginationFromColumn(text: string, endpointCode: string): KeptPagination {
  const value = parsed(text);
  if (!Value.Check(StoredKeptSchema, value)) {
    throw new Error(`REST API endpoint "${endpointCode}": the stored settings of other pagination types ${text} are not in their form`);
  }
  const kept: KeptPagination = value;
  return kept;
}
