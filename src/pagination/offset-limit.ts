/**
 * Offset/Limit (spec 4.4): an offset parameter starts at 0 and grows by Page Size; the limit parameter
 * is always Page Size. With Send Parameters In, both go in request headers or the JSON body instead.
 */
import { countedStart } from './counted.js';
import { declarePagination, queryParameterSetting } from './declaration.js';
import { parametersIn, placedNameRule } from './request-places.js';
import { STOP_CONDITION_SETTINGS } from './stop-conditions.js';

export const offsetLimit = declarePagination({
  type: 'offsetLimit',
  title: 'Offset/Limit',
  help: 'Offset/Limit: an offset grows by Page Size.',
  pageSize: 'counted',
  settings: {
    offsetParam: queryParameterSetting({
      field: 'offsetParameterName',
      label: 'Offset Parameter Name',
      description:
        'Offset/Limit: the query parameter for the start position (first 0); a header name or body dot path when parametersIn says so',
      help: 'Query parameter for the start position; the first is 0 and it grows by Page Size.',
      needs: 'the query parameter for the start position (e.g. "offset")',
    }),
    limitParam: queryParameterSetting({
      field: 'limitParameterName',
      label: 'Limit Parameter Name',
      description: 'Offset/Limit: the query parameter for the page size; a header name or body dot path when parametersIn says so',
      help: 'Query parameter for the page size; its value is always Page Size.',
      needs: 'the query parameter for the page size (e.g. "limit")',
    }),
    parametersIn,
    ...STOP_CONDITION_SETTINGS,
  },
  rules: [
    placedNameRule('offsetParam', 'Offset Parameter Name'),
    placedNameRule('limitParam', 'Limit Parameter Name'),
    {
      setting: 'limitParam',
      broken: (s) => s.offsetParam !== '' && s.offsetParam === s.limitParam,
      problem: 'Offset Parameter Name and Limit Parameter Name must differ',
      fieldProblem: (s) => `must differ from offsetParameterName (both are "${s.limitParam}")`,
    },
  ],
  start: (settings, firstUrl, _origin, body) =>
    countedStart(settings, firstUrl, body, {
      position: (pageNo) => String((pageNo - 1) * settings.pageSize),
      params: (position) => ({ [settings.offsetParam]: position, [settings.limitParam]: String(settings.pageSize) }),
    }),
});
