/**
 * The rules of an endpoint's Pagination section (spec 2.3): from the flat fields callers send to the
 * engine's tagged union. Each type needs its own settings and refuses those of the other types (so a
 * typo in `paginationType` does not go unnoticed); Page Number and Offset/Limit need records to count;
 * and whatever the engine itself refuses (paginationProblems) is refused on save, since a run could not
 * do it.
 */
import { invalidAt, pathOf } from '../core/validation.js';
import { PAGINATION_TYPES, paginationProblems, pathProblem, type PaginationSettings, type PaginationType } from '../pagination/index.js';
import { CONTROL, intIn, oneOf, required } from './common-rules.js';
import { enginePagination } from './runtime-forms.js';
import { LIMITS, ROOT_ARRAY_PATH, type EndpointInput } from './schemas.js';
import { PAGINATION_FIELD_NAMES, PAGINATION_USES, type PaginationFieldName } from './settings.js';

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

/** The Pagination Type (default None); a setting that belongs to another type is refused. */
export function paginationTypeOf(input: PaginationInput, at: string): PaginationType {
  const paginationType: PaginationType = oneOf(PAGINATION_TYPES, input.paginationType, 'none', pathOf(at, 'paginationType'));
  for (const name of PAGINATION_FIELD_NAMES) {
    const value = input[name];
    if (value === undefined || value === null || value === false) continue;
    if (!PAGINATION_USES[paginationType].includes(name)) {
      const owner = PAGINATION_TYPES.find((t) => PAGINATION_USES[t].includes(name)) ?? 'none';
      throw invalidAt(pathOf(at, name), `only ${PAGINATION_TITLES[owner]} pagination uses ${name}; paginationType is ${paginationType}`);
    }
  }
  return paginationType;
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
): PaginationSettings {
  const title = PAGINATION_TITLES[type];
  const rawDataPath = input.responseDataPath?.trim() ?? '';
  const counted = (): { pageSize: number; responseDataPath: string } => {
    const pageSize = input.pageSize;
    if (pageSize === undefined || pageSize === null) {
      throw invalidAt(
        pathOf(at, 'pageSize'),
        `${title} pagination needs a Page Size: the number of records the API really returns per page (${LIMITS.pageSize.min} to ${LIMITS.pageSize.max})`,
      );
    }
    if (rawDataPath === '') {
      throw invalidAt(
        pathOf(at, 'responseDataPath'),
        `${title} pagination needs a Response Data Path (the JSON path of the data array, e.g. "data" or "value") to count records; use "${ROOT_ARRAY_PATH}" when the response root is the array`,
      );
    }
    return {
      pageSize: pageSizeIn(pageSize, pathOf(at, 'pageSize')),
      responseDataPath: responsePath(rawDataPath, pathOf(at, 'responseDataPath')),
    };
  };

  const pagination = ((): PaginationSettings => {
    switch (type) {
      case 'none': {
        const pageSize = optionalPageSize(input.pageSize, pathOf(at, 'pageSize'));
        return { type, maxPages, pageSize, responseDataPath: responsePath(rawDataPath, pathOf(at, 'responseDataPath')) };
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
        const responseDataPath = responsePath(rawDataPath, pathOf(at, 'responseDataPath'));
        return { type, nextLinkPath, allowCrossOrigin, maxPages, pageSize, responseDataPath };
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
