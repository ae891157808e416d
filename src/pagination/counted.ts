/**
 * Page Number and Offset/Limit: the client computes each page's position and stops when a page is
 * not full (spec 4.4). Both need records to count; without them only page 1 is fetched, and the run
 * says why, because "only the first page is imported" is the commonest misconfiguration. A counted
 * type declares only where a page is (its Positions); the rest is here.
 */
import type { CommonSettings } from './declaration.js';
import { moreRecordsSignal } from './more-signals.js';
import { explainNoRecords } from './records.js';
import { requestPlacer, type ParametersIn } from './request-places.js';
import { maxPagesStop, type NextStep, type PageRequest, type Start, type Strategy } from './steps.js';
import { queryParamsTemplate } from './url.js';

export type CountedSettings = CommonSettings & { readonly pageSize: number; readonly parametersIn?: ParametersIn };

/** Where page `pageNo` (1-based) is: the value that changes per page, and the query parameters that carry it. */
export interface Positions {
  /** The changing value of page `pageNo`: the page number, the offset. */
  position(pageNo: number): string;
  /** The query parameters with `position` in place of the changing value. */
  params(position: string): Record<string, string>;
}

/** Page URLs from `firstUrl`, exactly as setQueryParams would build them (serialised once: see queryParamsTemplate). */
export function countedUrls(positions: Positions, firstUrl: string): (pageNo: number) => string {
  const names = Object.keys(positions.params(''));
  const build = queryParamsTemplate(firstUrl, names);
  return (pageNo) => {
    const params = positions.params(positions.position(pageNo));
    return build(names.map((name) => params[name]!));
  };
}

function shortPageStop(pageNo: number, count: number, pageSize: number, body: unknown): NextStep {
  const short = `page ${pageNo} has ${count} records, fewer than Page Size ${pageSize}`;
  // Every page before this one was full: the records so far are known.
  const signal = moreRecordsSignal(body, pageNo, (pageNo - 1) * pageSize + count);
  if (signal !== undefined) {
    const lost = pageNo === 1 ? 'Only the first page is imported' : `Pages after page ${pageNo} are not imported`;
    const fix = count > 0 ? ` (set it to ${count}, the records the API returned on page ${pageNo})` : '';
    return {
      kind: 'stop',
      reason: 'shortPage',
      detail: `${short}, but ${signal.says}: more pages follow`,
      warning: `${lost}: ${short}, but ${signal.says}. Page Size differs from the API's real page size: match Page Size${fix}`,
    };
  }
  // On page 1 a short page is also what a Page Size above the API's real page size looks like.
  const hint = pageNo === 1 ? '; if the API has more records, Page Size is larger than its real page size' : '';
  return { kind: 'stop', reason: 'shortPage', detail: `${short}: the last page${hint}` };
}

export function countedStrategy(settings: CountedSettings, requestOf: (pageNo: number) => PageRequest): Strategy {
  const { pageSize, maxPages, responseDataPath } = settings;
  return (previous, { body, records, whyNoRecords }) => {
    const { pageNo } = previous;
    if (records === null) {
      const found = whyNoRecords?.() ?? explainNoRecords(body, responseDataPath);
      const why = `${found}: records cannot be counted, so fetching stopped after page ${pageNo}`;
      // The spec's remedy for "only the first page is imported" when Response Data Path is wrong.
      const remedy = /; set /.test(found) ? '' : '; fix Response Data Path (the path to the record array)';
      return { kind: 'stop', reason: 'recordsNotCountable', detail: why, warning: `${why}${remedy}` };
    }
    if (records.length < pageSize) return shortPageStop(pageNo, records.length, pageSize, body);
    if (pageNo >= maxPages) return maxPagesStop(maxPages, `page ${pageNo} was full (${records.length} records)`);
    const request = requestOf(pageNo + 1);
    if (records.length > pageSize) {
      // One wording for every such page, so that the run reports it once.
      const warning = `pages have more records than Page Size (${pageSize}): set Page Size to the number of records the API really returns per page`;
      return { kind: 'next', request, warning };
    }
    return { kind: 'next', request };
  };
}

/**
 * How page `pageNo` is requested: in the query (the spec's way, the fast path), or with its parameters
 * in request headers or the JSON body (Send Parameters In), where they are numbers.
 */
function countedRequests(
  settings: CountedSettings,
  firstUrl: string,
  body: string | null,
  positions: Positions,
): (pageNo: number) => PageRequest {
  const where = settings.parametersIn ?? 'query';
  if (where === 'query') {
    const urlOf = countedUrls(positions, firstUrl);
    return (pageNo) => ({ pageNo, url: urlOf(pageNo) });
  }
  const place = requestPlacer(where, firstUrl, body);
  return (pageNo) => {
    const values = Object.entries(positions.params(positions.position(pageNo))).map(([name, value]) => [name, Number(value)]);
    return { pageNo, ...place(Object.fromEntries(values) as Record<string, number>) };
  };
}

/** The paginator factory of a counted type: page 1 carries its position too. */
export function countedStart(settings: CountedSettings, firstUrl: string, body: string | null, positions: Positions): Start {
  const requestOf = countedRequests(settings, firstUrl, body, positions);
  return { first: requestOf(1), strategy: countedStrategy(settings, requestOf) };
}
