/**
 * createPaginator: the one entry point. Starts the paginator its Pagination Type declares and
 * adds what no strategy can see on its own: the stop conditions a type may add (stop-conditions.ts),
 * checked before its strategy, and loops: a request sent twice in one run (the same URL, or the same
 * cursor) fails naming the URL or the cursor instead of running to Max Pages.
 */
import { invalidRequest } from '../core/errors.js';
import { paginationProblems } from './settings.js';
import { stopConditions } from './stop-conditions.js';
import { paginationOf, type PageRequest, type PaginationSettings, type Paginator } from './types.js';
import { originOf } from './url.js';

/** What makes two requests the same one: URL, and the headers and body a paginator set. */
const requestKey = (request: PageRequest): string =>
  request.headers === undefined && request.body === undefined
    ? request.url
    : JSON.stringify([request.url, request.headers ?? null, request.body ?? null]);

function loopError(request: PageRequest, earlier: number): string {
  if (request.cursor !== undefined)
    return `the cursor "${request.cursor}" for page ${request.pageNo} was already sent for page ${earlier}: the API's cursors loop`;
  return `the next page's URL ${request.url} was already requested as page ${earlier}: the API's next links loop`;
}

/**
 * `firstUrl` is the endpoint's complete URL before pagination parameters; `connectionOrigin` (default:
 * firstUrl's origin) is where next links may point unless the endpoint allows other origins; `body`
 * the endpoint's JSON POST body, where a type may set its parameters.
 * Throws AppError (invalidRequest) when the settings break a rule of paginationProblems(), or when
 * parameters go in a body that is not a JSON object.
 */
export function createPaginator(
  settings: PaginationSettings,
  firstUrl: string,
  connectionOrigin: string = originOf(firstUrl),
  body: string | null = null,
): Paginator {
  const problems = paginationProblems(settings);
  if (problems.length > 0) throw invalidRequest(`invalid pagination settings: ${problems.join('; ')}`);
  const { first, strategy } = paginationOf(settings.type).start(settings, new URL(firstUrl).href, connectionOrigin, body);
  const stopCheck = stopConditions(settings);
  const requested = new Map<string, number>([[requestKey(first), first.pageNo]]);
  let recordsSoFar: number | null = 0;
  return {
    first,
    next(previous, response) {
      recordsSoFar = recordsSoFar === null || response.records === null ? null : recordsSoFar + response.records.length;
      const stopped = stopCheck?.(previous.pageNo, response, recordsSoFar);
      if (stopped !== undefined) return stopped;
      const step = strategy(previous, response);
      if (step.kind !== 'next') return step;
      const key = requestKey(step.request);
      const earlier = requested.get(key);
      if (earlier !== undefined) return { kind: 'fail', error: loopError(step.request, earlier) };
      requested.set(key, step.request.pageNo);
      return step;
    },
  };
}
