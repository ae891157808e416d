/**
 * Next Link: the response names the next page's complete URL (spec 4.4). The link is resolved
 * against the URL of the page that contained it (RFC 3986) and used as is: the first request's query
 * is not re-appended, because APIs put their cursor state there.
 */
import { compileLookup, describeJsonType } from '../json-path/lookup.js';
import { declarePagination, jsonPathSetting, switchSetting, type CommonSettings } from './declaration.js';
import { nextLinkCandidate, propertiesHint } from './more-signals.js';
import { STOP_CONDITION_SETTINGS } from './stop-conditions.js';
import { maxPagesStop, type NextStep, type PageRequest, type Strategy } from './steps.js';

type NextLinkSettings = CommonSettings & { readonly nextLinkPath: string; readonly allowCrossOrigin?: boolean };

/**
 * The link the path finds, null when pagination ends there (`absent`: the path finds nothing at all,
 * rather than a null or empty value), or an error sentence.
 */
function readLink(
  path: string,
  match: ReturnType<ReturnType<typeof compileLookup>>,
): { link: string; absent?: undefined } | { link: null; absent: boolean } | { error: string } {
  switch (match.kind) {
    case 'none':
      return { link: null, absent: true };
    case 'many':
      return { error: `Next Link JSON Path "${path}" finds ${match.count} values; it must name exactly one URL` };
    case 'one': {
      const { value } = match;
      if (value === null) return { link: null, absent: false };
      if (typeof value !== 'string')
        return { error: `Next Link JSON Path "${path}" points to ${describeJsonType(value)}, not to a URL string` };
      // Whitespace-only is treated like "": resolving it would yield the current page again.
      const link = value.trim();
      return link === '' ? { link: null, absent: false } : { link };
    }
    default: {
      const unexpected: never = match;
      return { error: String(unexpected) };
    }
  }
}

/**
 * The stop when a page has no next link. A null or empty link is the API saying "last page"; a path
 * that finds nothing on page 1 may as well be a wrong path, so page 1 is not called the last page
 * then, and when the page holds a next link elsewhere, the run warns with the path to set.
 */
function noNextLink(path: string, pageNo: number, absent: boolean, body: unknown): NextStep {
  if (!absent || pageNo > 1)
    return { kind: 'stop', reason: 'noNextLink', detail: `page ${pageNo} has no next link at "${path}": the last page` };
  const candidate = nextLinkCandidate(body);
  if (candidate === undefined) {
    return {
      kind: 'stop',
      reason: 'noNextLink',
      detail: `Next Link JSON Path "${path}" finds nothing on page 1${propertiesHint(body)}: the only page if the API has no more; if it has, the path is wrong`,
    };
  }
  return {
    kind: 'stop',
    reason: 'noNextLink',
    detail: `Next Link JSON Path "${path}" finds nothing on page 1, but ${candidate.says}: more pages follow`,
    warning: `Only the first page is imported: Next Link JSON Path "${path}" finds nothing, but ${candidate.says}. Fix the path (set Next Link JSON Path to "${candidate.path}")`,
  };
}

/**
 * The next request for a link found on page `previous`: resolved against the page's URL (RFC 3986),
 * http or https only, on the connection's origin unless cross-origin links are allowed; the fragment
 * dropped. `what` names the link in messages ("the next link").
 */
export function followLink(
  link: string,
  previous: PageRequest,
  connectionOrigin: string,
  crossOrigin: boolean,
  what = 'the next link',
): NextStep {
  let url: URL;
  try {
    url = new URL(link, previous.url);
  } catch {
    return { kind: 'fail', error: `${what} "${link}" is not a valid URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { kind: 'fail', error: `${what} ${url.href} is not an http or https URL` };
  if (url.origin !== connectionOrigin && !crossOrigin) {
    return {
      kind: 'fail',
      error:
        `${what} ${url.href} points to another origin (${url.origin}) than the connection's (${connectionOrigin}); ` +
        'allow cross-origin next links on the endpoint if the API really sends them (credentials are never sent there)',
    };
  }
  if (url.hash !== '') url.hash = '';
  return { kind: 'next', request: { pageNo: previous.pageNo + 1, url: url.href } };
}

function nextLinkStrategy(settings: NextLinkSettings, connectionOrigin: string): Strategy {
  const { nextLinkPath: path, maxPages, allowCrossOrigin: crossOrigin } = settings;
  const lookup = compileLookup(path);
  return (previous, { body }) => {
    const read = readLink(path, lookup(body));
    if ('error' in read) return { kind: 'fail', error: read.error };
    if (read.link === null) return noNextLink(path, previous.pageNo, read.absent, body);
    if (previous.pageNo >= maxPages) return maxPagesStop(maxPages, `page ${previous.pageNo} still has a next link`);
    return followLink(read.link, previous, connectionOrigin, crossOrigin === true);
  };
}

/** Shared by Next Link and Link Header (one setting, one field). */
export const allowCrossOrigin = switchSetting({
  field: 'allowCrossOrigin',
  label: 'Allow cross-origin next links',
  description: 'Next Link and Link Header: follow links to another origin (credentials are never sent there); default false',
  help: 'Follow next links to another origin. Credentials are never sent there.',
});

export const nextLink = declarePagination({
  type: 'nextLink',
  title: 'Next Link',
  help: 'Next Link: the response names the next page URL.',
  pageSize: 'informational',
  settings: {
    nextLinkPath: jsonPathSetting({
      field: 'nextLinkJsonPath',
      label: 'Next Link JSON Path',
      description:
        'Next Link: where the next page URL is (a property name such as @odata.nextLink, a dot path or a JSONPath starting with $)',
      help: 'JSON path to the next-page URL in the response: a flat name (@odata.nextLink), a dotted path (links.next) or a JSONPath ($.paging.next). Pagination stops when it is absent, null or empty.',
      needs: 'where the next page URL is in a response (e.g. "@odata.nextLink", "links.next" or "$.paging.next")',
    }),
    allowCrossOrigin,
    ...STOP_CONDITION_SETTINGS,
  },
  rules: [],
  start: (settings, firstUrl, connectionOrigin) => ({
    first: { pageNo: 1, url: firstUrl },
    strategy: nextLinkStrategy(settings, connectionOrigin),
  }),
});
