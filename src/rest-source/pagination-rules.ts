/**
 * The rules of an endpoint's Pagination section (spec 2.3): from the flat fields callers send to the
 * engine's tagged union. Each type needs its own settings; Page Number and Offset/Limit need a
 * Response Data Path, set (blank counts as set: the root array); and whatever the engine itself refuses
 * (paginationProblems) is refused on save, since a run could not do it.
 *
 * The settings of the other types are kept for when the type is switched back, and answers show them.
 * A caller may send them back unchanged (a GET-then-PATCH round trip) or null (false) to drop them, but
 * not a new value: a setting of a type not in use is, more often than not, a forgotten or misspelt
 * `paginationType`, and refusing it says so.
 */
import { invalidAt, pathOf } from '../core/validation.js';
import { PAGINATION_TYPES, paginationProblems, pathProblem, type PaginationType } from '../pagination/index.js';
import { CONTROL, intIn, oneOf, required } from './common-rules.js';
import { enginePagination } from './runtime-forms.js';
import { LIMITS, ROOT_ARRAY_PATH, type EndpointInput } from './schemas.js';
import {
  PAGINATION_FIELD_NAMES,
  PAGINATION_USES,
  type ConfiguredPagination,
  type KeptPagination,
  type PaginationFieldName,
  type PaginationFields,
} from './settings.js';

type PaginationInput = Pick<EndpointInput, 'paginationType' | PaginationFieldName | 'pageSize' | 'responseDataPath'>;

/** Query parameters set elsewhere, each with where, for the message: the paginator's own must not be among them. */
export type TakenQueryNames = readonly (readonly [Readonly<Record<string, string>>, string])[];

const PATH_LIMIT = 250;

/** The spec's names of the pagination types, for messages. */
const PAGINATION_TITLES: Readonly<Record<PaginationType, string>> = {
  none: 'None',
  nextLink: 'Next Link',
  pageNumber: 'Page Number',
  offsetLimit: 'Offset/Limit',
};

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
  for (const name of PAGINATION_FIELD_NAMES) {
    if (PAGINATION_USES[type].includes(name)) continue;
    const before = stored?.[name] ?? null;
    const value = input[name];
    const keep = value === undefined ? before : value;
    if (keep === null || keep === false) continue;
    if (keep !== before) {
      const owner = PAGINATION_TYPES.find((t) => PAGINATION_USES[t].includes(name)) ?? 'none';
      const hint =
        before === null || before === false
          ? ''
          : ` (its kept value is ${shown(before)}: send that unchanged, or ${name === 'allowCrossOrigin' ? 'false' : 'null'} to drop it)`;
      throw invalidAt(pathOf(at, name), `only ${PAGINATION_TITLES[owner]} pagination uses ${name}; paginationType is ${type}${hint}`);
    }
    kept[name] = keep;
  }
  return { type, kept: kept as KeptPagination };
}

/** Response Data Path and Next Link JSON Path are read by the pagination engine's own path reader. */
function responsePath(value: string, at: string): string {
  if (value === ROOT_ARRAY_PATH) return value;
  if (value.length > PATH_LIMIT) throw invalidAt(at, `must be at most ${PATH_LIMIT} characters, got ${value.length}`);
  if (CONTROL.test(value)) throw invalidAt(at, 'must not contain control characters');
  const problem = pathProblem(value);
  if (problem !== null) throw invalidAt(at, problem);
  return value;
}

/** A query parameter name the paginator sets on every request. */
function paginatorParam(value: string | null | undefined, at: string, missing: string, taken: TakenQueryNames): string {
  const name = required(value, at, missing, 100);
  if (/[\s&=#?]/u.test(name)) throw invalidAt(at, `"${name}" is not a usable query parameter name (no spaces, &, =, # or ?)`);
  for (const [query, where] of taken) {
    if (Object.hasOwn(query, name))
      throw invalidAt(at, `"${name}" is also set in ${where}; the paginator sets it on every request, so remove it there`);
  }
  return name;
}

const pageSizeIn = (value: number, at: string): number => intIn(value, { ...LIMITS.pageSize, default: value }, at);

/** None and Next Link take a Page Size for display only; it may be left out. */
function optionalPageSize(value: number | null | undefined, at: string): number | null {
  return value === undefined || value === null ? null : pageSizeIn(value, at);
}

/**
 * The section of type `type` (from paginationTypeOf) with Max Pages already checked. `taken`: the
 * endpoint's and the connection's query parameters, which the paginator's own must not repeat.
 */
export function validatePagination(
  input: PaginationInput,
  type: PaginationType,
  maxPages: number,
  taken: TakenQueryNames,
  at: string,
): ConfiguredPagination {
  const title = PAGINATION_TITLES[type];
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

  const pagination = ((): ConfiguredPagination => {
    switch (type) {
      case 'none': {
        const pageSize = optionalPageSize(input.pageSize, pathOf(at, 'pageSize'));
        return { type, maxPages, pageSize, responseDataPath: optionalDataPath() };
      }
      case 'nextLink': {
        const nextLinkPath = responsePath(
          required(
            input.nextLinkJsonPath,
            pathOf(at, 'nextLinkJsonPath'),
            'Next Link pagination needs a Next Link JSON Path: where the next page URL is in a response (e.g. "@odata.nextLink", "links.next" or "$.paging.next")',
            PATH_LIMIT,
          ),
          pathOf(at, 'nextLinkJsonPath'),
        );
        const allowCrossOrigin = input.allowCrossOrigin ?? false;
        const pageSize = optionalPageSize(input.pageSize, pathOf(at, 'pageSize'));
        return { type, nextLinkPath, allowCrossOrigin, maxPages, pageSize, responseDataPath: optionalDataPath() };
      }
      case 'pageNumber': {
        const pageParam = paginatorParam(
          input.pageParameterName,
          pathOf(at, 'pageParameterName'),
          'Page Number pagination needs a Page Parameter Name: the query parameter that carries the page number (e.g. "page")',
          taken,
        );
        return { type, pageParam, maxPages, ...counted() };
      }
      case 'offsetLimit': {
        const offsetParam = paginatorParam(
          input.offsetParameterName,
          pathOf(at, 'offsetParameterName'),
          'Offset/Limit pagination needs an Offset Parameter Name: the query parameter for the start position (e.g. "offset")',
          taken,
        );
        const limitParam = paginatorParam(
          input.limitParameterName,
          pathOf(at, 'limitParameterName'),
          'Offset/Limit pagination needs a Limit Parameter Name: the query parameter for the page size (e.g. "limit")',
          taken,
        );
        if (limitParam === offsetParam) {
          throw invalidAt(pathOf(at, 'limitParameterName'), `must differ from offsetParameterName (both are "${limitParam}")`);
        }
        return { type, offsetParam, limitParam, maxPages, ...counted() };
      }
      default: {
        const never: never = type;
        throw new Error(`unknown pagination type ${String(never)}`);
      }
    }
  })();
  // The engine's own rules, last: whatever they refuse, a run could not do.
  const [problem] = paginationProblems(enginePagination(pagination));
  if (problem !== undefined) throw invalidAt(pathOf(at, 'paginationType'), problem);
  return pagination;
}
