/**
 * Which records of a fetched page are imported. The integration's records path is applied to the
 * page's JSON exactly as to a bulk payload; a blank records path means "the page's record array":
 * the root when it is an array, else the array Response Data Path found (so an endpoint whose data
 * sits under `value` works with an integration that leaves its records path blank).
 */
import type { PathGetter } from '../json-path/paths.js';
import type { FetchedPage } from '../rest-source/model.js';

/** The records, or the sentence (naming the page and its URL) that fails the run. */
export function pageRecords(page: FetchedPage, recordsPath: string, getRecords: PathGetter): readonly unknown[] | string {
  const found = getRecords(page.body);
  if (Array.isArray(found)) return found as unknown[];
  if (recordsPath === '' && page.records !== null) return page.records;
  const where = `page ${page.pageNo} (${page.url})`;
  return recordsPath === ''
    ? `${where}: the response root is not an array and Response Data Path found none (set the integration's records path)`
    : `${where}: the integration's records path "${recordsPath}" does not point to an array`;
}
