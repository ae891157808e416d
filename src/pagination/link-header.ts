/**
 * Link Header: the next page's URL is the `Link` response header's link with `rel="next"` (RFC 8288,
 * as GitHub, GitLab and Shopify send it), resolved against the URL of the request that returned it,
 * and then followed like a Next Link: same origin unless allowed, no loop, Max Pages.
 */
import { declarePagination } from './declaration.js';
import { linksWith, parseLinkHeader } from './link-values.js';
import { allowCrossOrigin, followLink } from './next-link.js';
import { STOP_CONDITION_SETTINGS } from './stop-conditions.js';
import { maxPagesStop, type NextStep, type PageRequest, type ResponseHeaders } from './steps.js';

/** The step after a page whose Link header is `header`. */
function nextFromLinkHeader(
  header: ResponseHeaders[string],
  previous: PageRequest,
  maxPages: number,
  connectionOrigin: string,
  crossOrigin: boolean,
): NextStep {
  const parsed = parseLinkHeader(header);
  if ('error' in parsed) return { kind: 'fail', error: parsed.error };
  const [next, ...others] = linksWith(parsed.links, 'next');
  const { pageNo } = previous;
  if (next === undefined) {
    const has =
      parsed.links.length === 0
        ? 'no Link header'
        : `a Link header without rel="next" (${parsed.links.flatMap((l) => l.rels).join(', ') || 'no rel'})`;
    return { kind: 'stop', reason: 'noNextLink', detail: `page ${pageNo} has ${has}: the last page` };
  }
  if (others.some((other) => other !== next))
    return { kind: 'fail', error: `page ${pageNo}'s Link header names several next pages (${[next, ...others].join(', ')})` };
  if (pageNo >= maxPages) return maxPagesStop(maxPages, `page ${pageNo} still has a Link header with rel="next"`);
  return followLink(next, previous, connectionOrigin, crossOrigin, "the Link header's next link");
}

export const linkHeader = declarePagination({
  type: 'linkHeader',
  title: 'Link Header',
  help: 'Link Header: the Link response header names the next page (rel="next").',
  pageSize: 'informational',
  settings: { allowCrossOrigin, ...STOP_CONDITION_SETTINGS },
  rules: [],
  start: (settings, firstUrl, connectionOrigin) => ({
    first: { pageNo: 1, url: firstUrl },
    strategy: (previous, { headers }) =>
      nextFromLinkHeader(headers?.link, previous, settings.maxPages, connectionOrigin, settings.allowCrossOrigin === true),
  }),
});
