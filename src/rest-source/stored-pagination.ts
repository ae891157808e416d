/**
 * The pagination columns of `ifw_rest_endpoint`:
 *
 * - `pagination`: the endpoint's Pagination section as the tagged union it is validated into, as JSON,
 *   with Response Data Path as configured (null when not set, `$` kept);
 * - `pagination_kept`: the settings of the pagination types not in use (pagination-fields.ts KeptPagination),
 *   as JSON in the API's names, `{}` when none is kept.
 *
 * Their schemas are read off the pagination declarations. Both are written only from validated
 * settings; reading checks their shape once, so a row changed by hand fails there, naming the
 * endpoint, rather than in the middle of a run.
 */
import { Type, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { mayBeAbsent, OWN_SETTINGS, PAGINATIONS, type AnyPagination, type SettingDeclaration } from '../pagination/index.js';
import type { ConfiguredPagination, KeptPagination } from './pagination-fields.js';
import { Integer } from '../http/schemas.js';

const closed = { additionalProperties: false } as const;
const common = {
  maxPages: Integer(),
  pageSize: Type.Union([Integer(), Type.Null()]),
  responseDataPath: Type.Union([Type.String(), Type.Null()]),
};
/** A setting in the stored form: an optional text may be null; what may be absent (declaration.ts mayBeAbsent) is optional. */
function storedSetting(setting: SettingDeclaration): TSchema {
  const value =
    setting.kind === 'optionalJsonPath' || setting.kind === 'text' ? Type.Union([setting.schema(), Type.Null()]) : setting.schema();
  return mayBeAbsent(setting) ? Type.Optional(value) : value;
}

/** One object per declared type: its kind name, its own settings by their TypeBox types, the common ones. */
const storedForm = (declaration: AnyPagination) =>
  Type.Object(
    {
      type: Type.Literal(declaration.type),
      ...Object.fromEntries(Object.entries(declaration.settings).map(([key, setting]): [string, TSchema] => [key, storedSetting(setting)])),
      ...common,
      ...(declaration.pageSize === 'counted' ? { pageSize: Integer() } : {}),
    },
    closed,
  );
const StoredPaginationSchema: TSchema = Type.Union((PAGINATIONS as readonly AnyPagination[]).map(storedForm));
const StoredKeptSchema: TSchema = Type.Object(
  Object.fromEntries(OWN_SETTINGS.map(({ setting }) => [setting.field, Type.Optional(setting.schema())])),
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
  // The schema is derived from the same declarations as the union, so what it accepts is one of its members.
  return value as ConfiguredPagination;
}

export function keptPaginationFromColumn(text: string, endpointCode: string): KeptPagination {
  const value = parsed(text);
  if (!Value.Check(StoredKeptSchema, value)) {
    throw new Error(`REST API endpoint "${endpointCode}": the stored settings of other pagination types ${text} are not in their form`);
  }
  return value as KeptPagination;
}
