/**
 * The pagination types of a REST API endpoint (spec section 2.3), each declared once in its own file
 * (declaration.ts says how), and the settings union derived from them: the one source of the stored
 * form, the API and `ifw apply` properties, the console's Pagination section and the rules. A new type
 * is a new file beside none.ts and its entry in this list.
 */
import type { PaginationDeclaration, PageSizeRole, SettingDeclaration, SettingsFor, AnyPagination, SettingValue } from './declaration.js';
import { cursor } from './cursor.js';
import { linkHeader } from './link-header.js';
import { nextLink } from './next-link.js';
import { none } from './none.js';
import { offsetLimit } from './offset-limit.js';
import { pageNumber } from './page-number.js';

export type {
  AnyPagination,
  AnySettings,
  ChoiceSetting,
  CommonSettings,
  OptionalTextSetting,
  SettingDeclaration,
  SwitchSetting,
  TextSetting,
} from './declaration.js';
export type { NextStep, PageRequest, PageResponse, Paginator, ResponseHeaders, StopReason } from './steps.js';

/** The spec's four in its order, then the others: the API's `paginationType` values and the console's choices. */
export const PAGINATIONS = [none, nextLink, pageNumber, offsetLimit, linkHeader, cursor] as const;

type Declared = (typeof PAGINATIONS)[number];
export type PaginationType = Declared['type'];
export const PAGINATION_TYPES: readonly PaginationType[] = PAGINATIONS.map((d) => d.type);

type SettingsOf<D> = D extends PaginationDeclaration<infer T, infer S, infer P extends PageSizeRole> ? SettingsFor<T, S, P> : never;

/** The Pagination section as the engine reads it: a tagged union on `type`. */
export type PaginationSettings = SettingsOf<Declared>;

/** Spec 4.4: "Max Pages: default 100". */
export const DEFAULT_MAX_PAGES = 100;

/** The declaration of a type. */
export const paginationOf = (type: PaginationType): AnyPagination => {
  const declaration: AnyPagination | undefined = PAGINATIONS.find((d) => d.type === type);
  if (declaration === undefined) throw new Error(`unknown Pagination Type ${JSON.stringify(type)}`);
  return declaration;
};

/** Every type's own settings, each declaration with its type. */
type SettingOf<D> = D extends { readonly settings: infer S } ? S[keyof S] : never;
export type PaginationSetting = SettingOf<Declared> & SettingDeclaration;
export type PaginationFieldName = PaginationSetting['field'];

/** Every type's own settings in their flat form (the API's names): null (false) when not set. */
export type PaginationFields = { readonly [S in PaginationSetting as S['field']]: SettingValue<S> | S['unset'] };
