/**
 * The rules of an endpoint's Pagination section (spec 2.3): from the flat fields callers send to the
 * engine's tagged union, as each type's declaration (src/pagination/) says. Each type needs its own
 * settings, checked by their kind; a type that counts records needs a Page Size and a Response Data
 * Path, set (blank counts as set: the root array); and whatever the engine itself refuses
 * (paginationProblems) is refused on save, since a run could not do it.
 *
 * The settings of the other types are kept for when the type is switched back, and answers show them.
 * A caller may send them back unchanged (a GET-then-PATCH round trip) or null (false) to drop them, but
 * not a new value: a setting of a type not in use is, more often than not, a forgotten or misspelt
 * `paginationType`, and refusing it says so.
 */
import { invalidAt, pathOf } from '../core/validation.js';
import {
  JSON_PATH_LIMIT,
  OWN_SETTINGS,
  PAGINATION_TYPES,
  paginationOf,
  paginationProblems,
  pathProblem,
  type AnySettings,
  type PaginationFieldName,
  type PaginationFields,
  type PaginationType,
  type SettingDeclaration,
  type TextSetting,
} from '../pagination/index.js';
import { CONTROL, intIn, oneOf, required } from './common-rules.js';
import type { ConfiguredPagination, KeptPagination } from './pagination-fields.js';
import { enginePagination } from './runtime-forms.js';
import { LIMITS, ROOT_ARRAY_PATH, type EndpointInput } from './schemas.js';

type PaginationInput = Pick<EndpointInput, 'paginationType' | PaginationFieldName | 'pageSize' | 'responseDataPath'>;

/** Query parameters set elsewhere, each with where, for the message: the paginator's own must not be among them. */
export type TakenQueryNames = readonly (readonly [Readonly<Record<string, string>>, string])[];

const shown = (value: string | boolean): string => (typeof value === 'string' ? `"${value}"` : String(value));

/**
 * The Pagination Type (default None) and the settings kept of the other types. `stored`: the endpoint's
 * settings of every type as saved (its answer's values), none for a new one. For a setting of a type
 * not in use: left out keeps the stored value, the stored value itself keeps it, null (false) drops it,
 * and anything else is refused.
 */
export function paginationTypeOf(
  input: PaginationInput,
  stored: PaginationFields | undefined,
  at: string,
): { readonly type: PaginationType; readonly kept: KeptPagination } {
  const type: PaginationType = oneOf(PAGINATION_TYPES, input.paginationType, 'none', pathOf(at, 'paginationType'));
  const kept: Partial<Record<PaginationFieldName, string | boolean>> = {};
  for (const { setting, types: owners, titles } of OWN_SETTINGS) {
    if (owners.includes(type)) continue;
    const name = setting.field;
    const before = stored?.[name] ?? null;
    const value = input[name];
    const keep = value === undefined ? before : value;
    if (keep === null || keep === false) continue;
    if (keep !== before) {
      const hint =
        before === null || before === false
          ? ''
          : ` (its kept value is ${shown(before)}: send that unchanged, or ${String(setting.unset)} to drop it)`;
      throw invalidAt(
        pathOf(at, name),
        `only ${titles} pagination ${owners.length > 1 ? 'use' : 'uses'} ${name}; paginationType is ${type}${hint}`,
      );
    }
    kept[name] = keep;
  }
  return { type, kept: kept as KeptPagination };
}

/** Response Data Path and Next Link JSON Path are read by the pagination engine's own path reader. */
function responsePath(value: string, at: string): string {
  if (value === ROOT_ARRAY_PATH) return value;
  if (value.length > JSON_PATH_LIMIT) throw invalidAt(at, `must be at most ${JSON_PATH_LIMIT} characters, got ${value.length}`);
  if (CONTROL.test(value)) throw invalidAt(at, 'must not contain control characters');
  const problem = pathProblem(value);
  if (problem !== null) throw invalidAt(at, problem);
  return value;
}

/** A query parameter name the paginator sets on every request. */
function paginatorParam(value: string | null | undefined, at: string, missing: string, limit: number, taken: TakenQueryNames): string {
  const name = required(value, at, missing, limit);
  if (/[\s&=#?]/u.test(name)) throw invalidAt(at, `"${name}" is not a usable query parameter name (no spaces, &, =, # or ?)`);
  for (const [query, where] of taken) {
    if (Object.hasOwn(query, name))
      throw invalidAt(at, `"${name}" is also set in ${where}; the paginator sets it on every request, so remove it there`);
  }
  return name;
}

/** What a type that lacks one of its text settings is told. */
const missing = (title: string, setting: TextSetting): string =>
  `${title} pagination needs ${/^[AEIOU]/i.test(setting.label) ? 'an' : 'a'} ${setting.label}: ${setting.needs}`;

/** A type's own setting from the input, checked by its kind. */
function ownSetting(
  setting: SettingDeclaration,
  value: unknown,
  title: string,
  taken: TakenQueryNames,
  at: string,
): string | boolean | null {
  const where = pathOf(at, setting.field);
  switch (setting.kind) {
    case 'jsonPath':
      return responsePath(required(value as string | null | undefined, where, missing(title, setting), setting.maxLength), where);
    case 'queryParameter':
      return paginatorParam(value as string | null | undefined, where, missing(title, setting), setting.maxLength, taken);
    case 'optionalJsonPath': {
      const path = typeof value === 'string' ? value.trim() : '';
      return path === '' ? null : responsePath(path, where);
    }
    case 'text': {
      const written = typeof value === 'string' ? value.trim() : '';
      if (written === '') return null;
      if (written.length > setting.maxLength)
        throw invalidAt(where, `must be at most ${setting.maxLength} characters, got ${written.length}`);
      if (CONTROL.test(written)) throw invalidAt(where, 'must not contain control characters');
      return written;
    }
    case 'switch':
      return (value as boolean | undefined) ?? setting.unset;
    case 'choice':
      return oneOf(setting.options, value === null || value === '' ? undefined : (value as string | undefined), setting.byDefault, where);
    default: {
      const never: never = setting;
      throw new Error(`unknown kind of setting ${JSON.stringify(never)}`);
    }
  }
}

const pageSizeIn = (value: number, at: string): number => intIn(value, { ...LIMITS.pageSize, default: value }, at);

/** A Page Size that is for display only (or kept if given) may be left out. */
function optionalPageSize(value: number | null | undefined, at: string): number | null {
  return value === undefined || value === null ? null : pageSizeIn(value, at);
}

/**
 * The section of type `type` (from paginationTypeOf) with Max Pages already checked. `taken`: the
 * endpoint's and the connection's query parameters, which the paginator's own must not repeat.
 * The type's own settings are checked in their declared order, then its rules, then Page Size and
 * Response Data Path, then whatever the engine itself refuses.
 */
export function validatePagination(
  input: PaginationInput,
  type: PaginationType,
  maxPages: number,
  taken: TakenQueryNames,
  at: string,
): ConfiguredPagination {
  const declaration = paginationOf(type);
  const { title } = declaration;
  // Not set (null or left out) differs from blank: blank says "the root array" (spec 2.3, 4.4 table).
  const dataPath = input.responseDataPath === undefined || input.responseDataPath === null ? null : input.responseDataPath.trim();
  const optionalDataPath = (): string | null => (dataPath === null ? null : responsePath(dataPath, pathOf(at, 'responseDataPath')));
  const counted = (): { pageSize: number; responseDataPath: string } => {
    const pageSize = input.pageSize;
    if (pageSize === undefined || pageSize === null) {
      throw invalidAt(
        pathOf(at, 'pageSize'),
        `${title} pagination needs a Page Size: the number of records the API really returns per page (${LIMITS.pageSize.min} to ${LIMITS.pageSize.max})`,
      );
    }
    if (dataPath === null) {
      throw invalidAt(
        pathOf(at, 'responseDataPath'),
        `${title} pagination needs a Response Data Path to count records: the path of the record array (e.g. "data" or "value"), ` +
          `or "" (blank, also "${ROOT_ARRAY_PATH}") when the records are the response root or where the integration's records path says`,
      );
    }
    return {
      pageSize: pageSizeIn(pageSize, pathOf(at, 'pageSize')),
      responseDataPath: responsePath(dataPath, pathOf(at, 'responseDataPath')),
    };
  };

  const own: Record<string, string | boolean | null> = {};
  for (const [key, setting] of Object.entries(declaration.settings)) {
    own[key] = ownSetting(setting, input[setting.field as PaginationFieldName], title, taken, at);
  }
  // A type's rules read its own settings; Page Size and Response Data Path are checked after them.
  const checked = { type, ...own, maxPages, pageSize: null, responseDataPath: '' } as AnySettings;
  for (const rule of declaration.rules) {
    if (rule.broken(checked)) throw invalidAt(pathOf(at, declaration.settings[rule.setting]!.field), rule.fieldProblem(checked));
  }
  const common =
    declaration.pageSize === 'counted'
      ? counted()
      : { pageSize: optionalPageSize(input.pageSize, pathOf(at, 'pageSize')), responseDataPath: optionalDataPath() };
  const pagination = { type, ...own, maxPages, ...common } as ConfiguredPagination;
  // The engine's own rules, last: whatever they refuse, a run could not do.
  const [problem] = paginationProblems(enginePagination(pagination));
  if (problem !== undefined) throw invalidAt(pathOf(at, 'paginationType'), problem);
  return pagination;
}
