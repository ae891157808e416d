/**
 * Offset/Limit (spec 4.4): an offset parameter starts at 0 and grows by Page Size; the limit parameter
 * is always Page Size.
 */
import { countedStart } from './counted.js';
import { declarePagination, queryParameterSetting } from './declaration.js';

export const offsetLimit = declarePagination({
  type: 'offsetLimit',
  title: 'Offset/Limit',
  help: 'Offset/Limit: an offset grows by Page Size.',
  pageSize: 'counted',
  settings: {
    offsetParam: queryParameterSetting({
      field: 'offsetParameterName',
      label: 'Offset Parameter Name',
      description: 'Offset/Limit: the query parameter for the start position (first 0)',
      help: 'Query parameter for the start position; the first is 0 and it grows by Page Size.',
      needs: 'the query parameter for the start position (e.g. "offset")',
    }),
    limitParam: queryParameterSetting({
      field: 'limitParameterName',
      label: 'Limit Parameter Name',
      description: 'Offset/Limit: the query parameter for the page size',
      help: 'Query parameter for the page size; its value is always Page Size.',
      needs: 'the query parameter for the page size (e.g. "limit")',
    }),
  },
  rules: [
    {
      setting: 'limitParam',
      broken: (s) => s.offsetParam !== '' && s.offsetParam === s.limitParam,
      problem: 'Offset Parameter Name and Limit Parameter Name must differ',
      fieldProblem: (s) => `must differ from offsetParameterName (both are "${s.limitParam}")`,
    },
  ],
  start: (settings, firstUrl) =>
    countedStart(settings, firstUrl, {
      position: (pageNo) => String((pageNo - 1) * settings.pageSize),
      params: (position) => ({ [settings.offsetParam]: position, [settings.limitParam]: String(settings.pageSize) }),
    }),
});
