/**
 * Pagination detection: from the first response of an endpoint (its URL, request body, headers and
 * JSON), the settings that would page through it: the record array (Response Data Path), the
 * Pagination Type and its own settings, a stop condition the response offers, and the real page size,
 * each with the evidence it was read from. Pure: rest-source fetches the pages (detect-pagination.ts)
 * and hands them here; `confirmProposal` adds what the pages after the first showed.
 */
import {
  bodyCursor,
  findProperty,
  findRecordArray,
  graphqlPageInfo,
  headerCursor,
  isBoolean,
  isCount,
  MORE_NAMES,
  PAGES_NAMES,
  positive,
  TOTAL_NAMES,
  urlParameters,
  type RecordArray,
} from './detect-shapes.js';
import { compileLookup } from '../json-path/lookup.js';
import { linksWith, parseLinkHeader } from './link-values.js';
import { nextLinkCandidate } from './more-signals.js';
import type { ResponseHeaders } from './steps.js';
import { DEFAULT_MAX_PAGES, paginationOf, type PaginationSettings } from './types.js';

/** One response as the detector sees it. */
export interface ObservedPage {
  /** The URL requested (absolute). */
  readonly url: string;
  readonly method: 'GET' | 'POST';
  /** The JSON body sent with a POST, as written. */
  readonly requestBody: string | null;
  /** Response headers, lower-case names. */
  readonly headers: ResponseHeaders;
  readonly body: unknown;
}

/** Proposed settings, with the evidence for each and what detection could only guess. */
export interface Proposal {
  readonly settings: PaginationSettings;
  /** What the response showed, and what was made of it: `the response's Link header has rel="next" → …`. */
  readonly evidence: readonly string[];
  /** What was guessed or could not be seen (a parameter name taken from common usage), to check before saving. */
  readonly notes: readonly string[];
  /** The records on page 1 (at the proposed Response Data Path), null when no record array was found. */
  readonly firstPageRecords: number | null;
  /** The total number of records the response claims, when it says (`"total_count": 23`). */
  readonly claimedTotal: number | null;
  /** The number of pages the response claims, when it says (`totalPages`, a Link header's rel="last" page). */
  readonly claimedPages: number | null;
  /** Whether following the proposal found a page 2 with records other than page 1's (confirmProposal); false until then. */
  readonly morePages: boolean;
}

type Common = { maxPages: number; pageSize: number | null; responseDataPath: string };

const isUrlLike = (text: string): boolean => /^(https?:\/\/|\/|\?|\.\.?\/)/i.test(text) || /^[\w.-]+\/.+|\?.+=/.test(text);
const quoted = (path: string): string => (path === '' ? 'blank (the response root)' : `"${path}"`);

/** The path of the last record's `id`, Stripe's `starting_after` cursor: `$.data[-1].id`. */
function lastIdPath(recordsPath: string): string {
  if (recordsPath === '') return '$[-1].id';
  return recordsPath.startsWith('$') ? `${recordsPath}[-1].id` : `$.${recordsPath}[-1].id`;
}

/** Where a GraphQL query takes its cursor: `variables.<name>` of the POST body, `after` unless the query declares another. */
function graphqlVariable(page: ObservedPage, notes: string[]): { parametersIn: 'body' | 'query'; name: string } {
  let query: unknown;
  try {
    query = page.requestBody === null ? undefined : (JSON.parse(page.requestBody) as { query?: unknown }).query;
  } catch {
    query = undefined;
  }
  if (page.method !== 'POST' || typeof query !== 'string') {
    notes.push(
      'the cursor of a GraphQL API goes in a variable of the POST body: set Method POST and Body to the query (with an $after variable) and detect again',
    );
    return { parametersIn: 'query', name: 'after' };
  }
  const declared = /\$(after|cursor|endCursor|next)\s*:/i.exec(query)?.[1];
  if (declared === undefined)
    notes.push('the query declares no $after variable: add one (e.g. contacts(first: 100, after: $after)) and use it');
  return { parametersIn: 'body', name: `variables.${declared ?? 'after'}` };
}

/** The first page's next-page mechanism, the type's own settings and the evidence; undefined when none is seen. */
function mechanism(
  page: ObservedPage,
  records: RecordArray | undefined,
  evidence: string[],
  notes: string[],
  common: Common,
): PaginationSettings | undefined {
  const parsed = parseLinkHeader(page.headers.link);
  const next = 'links' in parsed ? linksWith(parsed.links, 'next')[0] : undefined;
  if (next !== undefined) {
    const target = new URL(next, page.url).href;
    const cross = new URL(target).origin !== new URL(page.url).origin;
    evidence.push(`the response's Link header has rel="next" → Pagination Type Link Header (next page ${target})`);
    if (cross) notes.push('the next link goes to another origin: Allow cross-origin links is proposed (credentials are not sent there)');
    return { type: 'linkHeader', ...common, allowCrossOrigin: cross };
  }
  const link = nextLinkCandidate(page.body);
  const linkMatch = link === undefined ? undefined : compileLookup(link.path)(page.body);
  const linkValue = linkMatch?.kind === 'one' ? linkMatch.value : undefined;
  if (link !== undefined && typeof linkValue === 'string' && isUrlLike(linkValue)) {
    const linkText = linkValue.trim();
    const target = new URL(linkText, page.url).href;
    const cross = new URL(target).origin !== new URL(page.url).origin;
    evidence.push(
      `the response has a next link at "${link.path}" (${linkText}) → Pagination Type Next Link, Next Link JSON Path "${link.path}"`,
    );
    if (cross) notes.push('the next link goes to another origin: Allow cross-origin links is proposed (credentials are not sent there)');
    return { type: 'nextLink', ...common, nextLinkPath: link.path, allowCrossOrigin: cross };
  }
  const cursorCommon = { ...common, cursorInitial: null, totalCountPath: null, stopOnEmptyPage: false };
  const graphql = graphqlPageInfo(page.body);
  if (graphql !== undefined) {
    const { parametersIn, name } = graphqlVariable(page, notes);
    evidence.push(
      `the response has a GraphQL pageInfo with endCursor at "${graphql.cursorPath}" → Pagination Type Cursor, Cursor JSON Path "${graphql.cursorPath}", sent as ${parametersIn === 'body' ? `the POST body's "${name}"` : `query parameter "${name}"`}`,
    );
    if (graphql.hasMorePath !== null)
      evidence.push(`"${graphql.hasMorePath}" says whether more pages follow → Has More JSON Path "${graphql.hasMorePath}"`);
    return {
      type: 'cursor',
      ...cursorCommon,
      cursorFrom: 'body',
      cursorPath: graphql.cursorPath,
      cursorHeader: null,
      cursorParam: name,
      parametersIn,
      hasMorePath: graphql.hasMorePath,
    };
  }
  const inHeader = headerCursor(page.headers);
  if (inHeader !== undefined) {
    evidence.push(
      `the response header ${inHeader.header} carries a cursor → Pagination Type Cursor from that header, sent back in request header ${inHeader.parameter}`,
    );
    notes.push(
      `the request header the cursor is sent back in (${inHeader.parameter}) is a guess from the response header's name: check the API's documentation`,
    );
    return {
      type: 'cursor',
      ...cursorCommon,
      cursorFrom: 'header',
      cursorPath: null,
      cursorHeader: inHeader.header,
      cursorParam: inHeader.parameter,
      parametersIn: 'header',
      hasMorePath: null,
    };
  }
  const more = findProperty(page.body, MORE_NAMES, isBoolean);
  const cursor = bodyCursor(page.body);
  if (cursor !== undefined) {
    evidence.push(
      `the response has a cursor at "${cursor.path}" → Pagination Type Cursor, Cursor JSON Path "${cursor.path}", sent as query parameter "${cursor.parameter}"`,
    );
    notes.push(`the query parameter the cursor is sent in ("${cursor.parameter}") is the usual name: check the API's documentation`);
    return {
      type: 'cursor',
      ...cursorCommon,
      cursorFrom: 'body',
      cursorPath: cursor.path,
      cursorHeader: null,
      cursorParam: cursor.parameter,
      parametersIn: 'query',
      hasMorePath: more?.path ?? null,
    };
  }
  const first = records?.records[0];
  if (more !== undefined && records !== undefined && typeof first === 'object' && first !== null && 'id' in first) {
    const path = lastIdPath(records.path);
    evidence.push(
      `the response has "${more.path}": ${String(more.value)} and records with an "id", as Stripe's lists → Pagination Type Cursor: the next page starts after the last record's id (Cursor JSON Path "${path}", query parameter "starting_after"), Has More JSON Path "${more.path}"`,
    );
    notes.push('"starting_after" is Stripe\'s name for the parameter: check the API\'s documentation');
    return {
      type: 'cursor',
      ...cursorCommon,
      cursorFrom: 'body',
      cursorPath: path,
      cursorHeader: null,
      cursorParam: 'starting_after',
      parametersIn: 'query',
      hasMorePath: more.path,
    };
  }
  return undefined;
}

/** Page Number or Offset/Limit from the request URL's parameters (or a guess when the response says more follow). */
function fromUrl(
  page: ObservedPage,
  evidence: string[],
  notes: string[],
  common: Common,
  saysMore: boolean,
): PaginationSettings | undefined {
  const { page: pageParam, offset, limit } = urlParameters(page.url);
  const size = positive(limit?.value);
  const pageSize = size ?? common.pageSize ?? 100;
  const counted = { ...common, pageSize, hasMorePath: null, totalCountPath: null, stopOnEmptyPage: false };
  if (size === undefined && common.pageSize === null && (pageParam !== undefined || offset !== undefined))
    notes.push("page 1 has no records, so its size is unknown: Page Size 100 is a placeholder; set the API's page size");
  if (size !== undefined) evidence.push(`the URL sends ${limit!.name}=${size} → Page Size ${size}`);
  if (pageParam !== undefined) {
    evidence.push(
      `the URL has the page parameter ${pageParam.name}=${pageParam.value} → Pagination Type Page Number, Page Parameter Name "${pageParam.name}"`,
    );
    return { type: 'pageNumber', ...counted, pageParam: pageParam.name, parametersIn: 'query' };
  }
  if (offset !== undefined) {
    const limitName = limit?.name ?? 'limit';
    evidence.push(
      `the URL has the offset parameter ${offset.name}=${offset.value} → Pagination Type Offset/Limit, Offset Parameter Name "${offset.name}", Limit Parameter Name "${limitName}"`,
    );
    if (limit === undefined) notes.push('the URL has no limit parameter: "limit" is a guess; check the API\'s documentation');
    return { type: 'offsetLimit', ...counted, offsetParam: offset.name, limitParam: limitName, parametersIn: 'query' };
  }
  if (saysMore && limit !== undefined) {
    evidence.push(`the URL sends ${limit.name} and the response says more records follow → Pagination Type Page Number`);
    notes.push('the URL names no page parameter: "page" is a guess; check the API\'s documentation');
    return { type: 'pageNumber', ...counted, pageParam: 'page', parametersIn: 'query' };
  }
  return undefined;
}

/** The number of pages a Link header's rel="last" target names by its page parameter. */
function lastPageOf(page: ObservedPage): number | null {
  const parsed = parseLinkHeader(page.headers.link);
  const last = 'links' in parsed ? linksWith(parsed.links, 'last')[0] : undefined;
  if (last === undefined) return null;
  const pageParam = urlParameters(new URL(last, page.url).href).page;
  return positive(pageParam?.value) ?? null;
}

/** The settings that would page through the API whose first response is `page`, with their evidence. */
export function proposePagination(page: ObservedPage): Proposal {
  const evidence: string[] = [];
  const notes: string[] = [];
  const records = findRecordArray(page.body);
  if (records === undefined) notes.push('no record array was found in the response: set Response Data Path to the path of the records');
  else evidence.push(`${records.evidence} → Response Data Path ${quoted(records.path)}`);
  const count = records?.records.length ?? null;
  const common: Common = {
    maxPages: DEFAULT_MAX_PAGES,
    pageSize: count === null || count === 0 ? null : count,
    responseDataPath: records?.path ?? '',
  };
  const total = findProperty(page.body, TOTAL_NAMES, isCount);
  const pages = findProperty(page.body, PAGES_NAMES, isCount);
  const claimedTotal = typeof total?.value === 'number' ? total.value : null;
  const claimedPages = typeof pages?.value === 'number' ? pages.value : lastPageOf(page);
  const saysMore = (claimedTotal !== null && count !== null && claimedTotal > count) || (claimedPages ?? 0) > 1;
  let settings = mechanism(page, records, evidence, notes, common) ?? fromUrl(page, evidence, notes, common, saysMore);
  if (settings !== undefined && (settings.type === 'pageNumber' || settings.type === 'offsetLimit') && total !== undefined) {
    evidence.push(`"${total.path}" gives the total number of records (${String(total.value)}) → Total Count JSON Path "${total.path}"`);
    settings = { ...settings, totalCountPath: total.path };
  }
  if (settings === undefined) {
    settings = { type: 'none', ...common };
    if (saysMore)
      notes.push(
        `the response says there are more records (${claimedTotal !== null ? `"${total!.path}": ${claimedTotal}` : `${claimedPages} pages`}) but names no next link, cursor or page parameter: choose Page Number or Offset/Limit as the API's documentation says, or add its page parameter to the path and detect again`,
      );
    else evidence.push('no next link, Link header, cursor, or page or offset parameter → Pagination Type None (one request)');
  }
  if (count !== null && settings.pageSize !== null && paginationOf(settings.type).pageSize !== 'counted')
    evidence.push(
      `page 1 has ${count} records → Page Size ${settings.pageSize} (shown only: ${paginationOf(settings.type).title} does not count records)`,
    );
  else if (count !== null && settings.pageSize !== null && settings.pageSize === count && urlParameters(page.url).limit === undefined)
    evidence.push(`page 1 has ${count} records → Page Size ${count}`);
  return { settings, evidence, notes, firstPageRecords: count, claimedTotal, claimedPages, morePages: false };
}

/** A page fetched after the first with the proposed settings, as detection follows them. */
export interface FollowedPage {
  readonly pageNo: number;
  /** The URL as sent, secrets redacted. */
  readonly url: string;
  readonly records: readonly unknown[] | null;
}

const same = (a: unknown, b: unknown): boolean => a !== undefined && JSON.stringify(a) === JSON.stringify(b);

/**
 * The proposal with what the following pages showed: their records (new ones, or page 1's again), and
 * how following them ended (`ended`: the paginator's stop detail or failure, or null when more follow).
 */
export function confirmProposal(
  proposal: Proposal,
  firstRecords: readonly unknown[] | null,
  followed: readonly FollowedPage[],
  ended: string | null,
): Proposal {
  const evidence = [...proposal.evidence];
  const notes = [...proposal.notes];
  for (const page of followed) {
    if (page.records === null) {
      notes.push(`page ${page.pageNo} (${page.url}) has no record array at the proposed Response Data Path`);
      continue;
    }
    const repeats = same(page.records[0], firstRecords?.[0]);
    evidence.push(
      `page ${page.pageNo} (${page.url}) has ${page.records.length} records${repeats ? '' : page.records.length > 0 ? ', none of them the first record of page 1' : ''}`,
    );
    if (repeats)
      notes.push(
        `page ${page.pageNo} begins with page 1's first record again: the API may ignore the proposed parameter; check the proposal`,
      );
  }
  if (ended !== null) evidence.push(followed.length === 0 ? `fetching would end after page 1: ${ended}` : `then: ${ended}`);
  const morePages = followed.some((p) => p.records !== null && p.records.length > 0 && !same(p.records[0], firstRecords?.[0]));
  const { settings } = proposal;
  const counted = paginationOf(settings.type).pageSize === 'counted';
  const size = followed.length > 0 && firstRecords !== null && firstRecords.length > 0 ? firstRecords.length : null;
  if (counted && size !== null && settings.pageSize !== null && size < settings.pageSize) {
    notes.push(`the API returned ${size} records per page although ${settings.pageSize} were asked for: Page Size ${size} is proposed`);
    return { ...proposal, settings: { ...settings, pageSize: size }, evidence, notes, morePages };
  }
  return { ...proposal, evidence, notes, morePages };
}
