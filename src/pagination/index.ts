/** What other folders use of pagination. */
export { compileLookup, pathProblem, type PathLookup, type PathMatch } from '../json-path/lookup.js';
export { JSON_PATH_LIMIT, mayBeAbsent, QUERY_PARAMETER_LIMIT, type PageSizeRole, type SettingValue } from './declaration.js';
export { parseLinkHeader, type LinkValue } from './link-values.js';
export { moreRecordsSignal, nextLinkCandidate, propertiesHint, type MoreSignal } from './more-signals.js';
export { createPaginator } from './paginator.js';
export { compileRecordsGetter, explainNoRecords, extractRecords, listKeys, responseHint, type RecordsGetter } from './records.js';
export { COMMON_SETTINGS, MAX_PAGES_SUGGESTIONS, OWN_SETTINGS, PAGINATION_TYPE_HELP, titlesWhere, type OwnSetting } from './section.js';
export { MAX_MAX_PAGES, MAX_PAGE_SIZE, paginationProblems } from './settings.js';
export { maxPagesWarning, STOP_REASONS } from './steps.js';
export * from './types.js';
export { originOf, setQueryParams } from './url.js';
export { checkPagination, PAGINATION_SYMPTOMS, type CheckedPage, type PaginationProblem, type PaginationSymptom } from './check.js';
export { confirmProposal, proposePagination, type FollowedPage, type ObservedPage, type Proposal } from './detect.js';
