/**
 * createPaginator: the one entry point. Starts the paginator its Pagination Type declares and
 * adds what no strategy can see on its own: a URL requested twice in one run is a loop, and fails
 * naming the URL instead of running to Max Pages.
 */
import { invalidRequest } from '../core/errors.js';
import { paginationProblems } from './settings.js';
import { paginationOf, type PaginationSettings, type Paginator } from './types.js';
import { originOf } from './url.js';

/**
 * `firstUrl` is the endpoint's complete URL before pagination parameters; `connectionOrigin` (default:
 * firstUrl's origin) is where next links may point unless the endpoint allows other origins.
 * Throws AppError (invalidRequest) when the settings break a rule of paginationProblems().
 */
export function createPaginator(settings: PaginationSettings, firstUrl: string, connectionOrigin: string = originOf(firstUrl)): Paginator {
  const problems = paginationProblems(settings);
  if (problems.length > 0) throw invalidRequest(`invalid pagination settings: ${problems.join('; ')}`);
  const { first, strategy } = paginationOf(settings.type).start(settings, new URL(firstUrl).href, connectionOrigin);
  const requested = new Map<string, number>([[first.url, first.pageNo]]);
  return {
    first,
    next(previous, response) {
      const step = strategy(previous, response);
      if (step.kind !== 'next') return step;
      const { url, pageNo } = step.request;
      const earlier = requested.get(url);
      if (earlier !== undefined) {
        return { kind: 'fail', error: `the next page's URL ${url} was already requested as page ${earlier}: the API's next links loop` };
      }
      requested.set(url, pageNo);
      return step;
    },
  };
}
