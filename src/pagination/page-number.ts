/**
 * Page Number (spec 4.4): a query parameter carries the page number, from 1; or, with Send Parameters
 * In, a request header or a property of the JSON body.
 */
import { countedStart } from './counted.js';
import { declarePagination, queryParameterSetting } from './declaration.js';
import { parametersIn, placedNameRule } from './request-places.js';
import { STOP_CONDITION_SETTINGS } from './stop-conditions.js';

export const pageNumber = declarePagination({
  type: 'pageNumber',
  title: 'Page Number',
  help: 'Page Number: a page parameter counts up from 1.',
  pageSize: 'counted',
  settings: {
    pageParam: queryParameterSetting({
      field: 'pageParameterName',
      label: 'Page Parameter Name',
      description:
        'Page Number: the query parameter that carries the page number (first page 1); a header name or body dot path when parametersIn says so',
      help: 'Query parameter that carries the page number; the first page is 1.',
      needs: 'the query parameter that carries the page number (e.g. "page")',
    }),
    parametersIn,
    ...STOP_CONDITION_SETTINGS,
  },
  rules: [placedNameRule('pageParam', 'Page Parameter Name')],
  start: (settings, firstUrl, _origin, body) =>
    countedStart(settings, firstUrl, body, {
      position: (pageNo) => String(pageNo),
      params: (position) => ({ [settings.pageParam]: position }),
    }),
});
