/** None (spec 2.3): one request, no pagination. */
import { declarePagination } from './declaration.js';

export const none = declarePagination({
  type: 'none',
  title: 'None',
  help: 'None: one call.',
  pageSize: 'optional',
  settings: {},
  rules: [],
  start: (_settings, firstUrl) => ({
    first: { pageNo: 1, url: firstUrl },
    strategy: () => ({ kind: 'stop', reason: 'singlePage', detail: 'Pagination Type is None: one request' }),
  }),
});
