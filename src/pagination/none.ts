/**
 * None (spec 2.3): one request, no pagination. When the response says more records follow, the run
 * warns: "only the first page is imported" with the spec's remedy, "set the type".
 */
import { declarePagination } from './declaration.js';
import { moreRecordsSignal } from './more-signals.js';

export const none = declarePagination({
  type: 'none',
  title: 'None',
  help: 'None: one call.',
  pageSize: 'optional',
  settings: {},
  rules: [],
  start: (_settings, firstUrl) => ({
    first: { pageNo: 1, url: firstUrl },
    strategy: (_previous, { body, records }) => {
      const detail = 'Pagination Type is None: one request';
      const signal = moreRecordsSignal(body, 1, records?.length ?? 0);
      if (signal === undefined) return { kind: 'stop', reason: 'singlePage', detail };
      return {
        kind: 'stop',
        reason: 'singlePage',
        detail: `${detail}, but ${signal.says}`,
        warning: `Only the first page is imported: Pagination Type is None, but ${signal.says}. Set the Pagination Type`,
      };
    },
  }),
});
