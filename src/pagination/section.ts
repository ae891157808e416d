/**
 * The Pagination section as a whole, read off the declared types (types.ts): every type's own settings
 * in one list, the settings every type has with their console texts, and the phrases that name types
 * by what Page Size is to them ("Page Number and Offset/Limit"), so that no text lists types by hand.
 */
import type { AnyPagination, PageSizeRole } from './declaration.js';
import { DEFAULT_MAX_PAGES, PAGINATIONS, type PaginationSetting, type PaginationType } from './types.js';

/**
 * One type's own setting, with the name the engine reads it by and the types that own it: a setting
 * may be shared by several types (the stop conditions, Send Parameters In), declared once and spread
 * into each type's settings; it is listed once.
 */
export interface OwnSetting {
  readonly key: string;
  readonly setting: PaginationSetting;
  readonly types: readonly PaginationType[];
  /** The titles of its types, as a phrase ("Next Link and Link Header"). */
  readonly titles: string;
}

/** Every type's own settings, type by type in declaration order, a shared one where its first type has it. */
export const OWN_SETTINGS: readonly OwnSetting[] = (() => {
  const byField = new Map<string, { key: string; setting: PaginationSetting; types: PaginationType[]; titles: string[] }>();
  for (const d of PAGINATIONS as readonly AnyPagination[]) {
    for (const [key, setting] of Object.entries(d.settings)) {
      const seen = byField.get(setting.field);
      if (seen === undefined) {
        byField.set(setting.field, { key, setting: setting as PaginationSetting, types: [d.type as PaginationType], titles: [d.title] });
        continue;
      }
      if (seen.setting !== setting || seen.key !== key) throw new Error(`two pagination settings are named ${setting.field}`);
      seen.types.push(d.type as PaginationType);
      seen.titles.push(d.title);
    }
  }
  return [...byField.values()].map(({ key, setting, types, titles }) => ({ key, setting, types, titles: listOf(titles) }));
})();

/** "A", "A and B", "A, B and C". */
function listOf(words: readonly string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

/** The titles of the types whose Page Size is (or, with `not`, is not) of this role, as a phrase. */
export const titlesWhere = (role: PageSizeRole, not = false): string =>
  listOf(PAGINATIONS.filter((d) => (d.pageSize === role) !== not).map((d) => d.title));

/** The console's help under Pagination Type: each type in a sentence. */
export const PAGINATION_TYPE_HELP = PAGINATIONS.map((d) => d.help).join(' ');

/** The spec's suggested Max Pages by expected volume and page size (shown under the field in the console). */
export const MAX_PAGES_SUGGESTIONS = [
  { volume: 'up to 1,000 records', pageSize: 100, maxPages: 20 },
  { volume: 'up to 10,000 records', pageSize: 100, maxPages: 150 },
  { volume: 'up to 50,000 records', pageSize: 500, maxPages: 150 },
  { volume: 'unknown volume', pageSize: 100, maxPages: 100 },
] as const;

/** The settings every type has, with their spec names and console help. */
export const COMMON_SETTINGS = {
  pageSize: {
    label: 'Page Size',
    help: `Records per page; must equal the records the API really returns per page. For ${titlesWhere('informational')} it is for display only.`,
  },
  maxPages: {
    label: 'Max Pages',
    help: `Safety limit against endless loops; default ${DEFAULT_MAX_PAGES}. Fetching stops at this page even if the API signals more. Suggested values by volume and page size are in the table below.`,
  },
  responseDataPath: {
    label: 'Response Data Path',
    help: `JSON path to the data array, used to count returned records (data, value, results.items). Required for ${titlesWhere('counted')}; blank when the response root is the array.`,
  },
} as const;
