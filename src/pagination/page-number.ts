/** Page Number (spec 4.4): a query parameter carries the page number, from 1. */
import { countedStart } from './counted.js';
import { declarePagination, queryParameterSetting } from './declaration.js';

export const pageNumber = declarePagination({
  type: 'pageNumber',
  title: 'Page Number',
  help: 'Page Number: a page parameter counts up from 1.',
  pageSize: 'counted',
  settings: {
    pageParam: queryParameterSetting({
      field: 'pageParameterName',
      label: 'Page Parameter Name',
      description: 'Page Number: the query parameter that carries the page number (first page 1)',
      help: 'Query parameter that carries the page number; the first page is 1.',
      needs: 'the query parameter that carries the page number (e.g. "page")',
    }),
  },
  rules: [],
  start: (settings, firstUrl) =>
    countedStart(settings, firstUrl, {
      position: (pageNo) => String(pageNo),
      params: (position) => ({ [settings.pageParam]: position }),
    }),
});
