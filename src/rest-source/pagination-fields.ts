/**
 * The Pagination section in the flat form callers send and answers show (the API, `ifw apply` files,
 * the console): every type's own settings under their field names (`nextLinkJsonPath`,
 * `allowCrossOrigin`, …), read off the pagination declarations, with their TypeBox properties for
 * inputs and answers, and the mapping between the flat fields and the union the engine and storage
 * keep. Nothing here names a pagination type.
 *
 * Properties come in the order the API documents have always had: the text settings of every type,
 * then Page Size, Max Pages and Response Data Path, then the switches (`TEXT_SETTINGS`,
 * `SWITCH_SETTINGS`).
 */
import { Type, type TNull, type TOptional, type TUnion } from 'typebox';
import {
  OWN_SETTINGS,
  type OwnSetting,
  type PaginationFieldName,
  type PaginationFields,
  type PaginationSetting,
  type PaginationSettings,
  type PaginationType,
} from '../pagination/index.js';

/**
 * The Pagination section as configured: the engine's union, with Response Data Path as written: null
 * when it was not set, '' or `$` for "blank" (the root, or where the integration's records path
 * says: page-records.ts), or a path. The engine is given '' for null and `$` (runtime-forms.ts).
 */
export type ConfiguredPagination = {
  [T in PaginationType]: Omit<Extract<PaginationSettings, { readonly type: T }>, 'responseDataPath'> & {
    readonly responseDataPath: string | null;
  };
}[PaginationType];

/**
 * Settings of the pagination types not in use, kept so that switching the type back restores them
 * (spec 7 advises setting the type temporarily). Only those that are set (a switch only when true);
 * never a setting of the type in use.
 */
export type KeptPagination = { readonly [K in PaginationFieldName]?: Exclude<PaginationFields[K], null> };

type Switch = Extract<PaginationSetting, { readonly kind: 'switch' }>;
type Text = Exclude<PaginationSetting, { readonly kind: 'switch' }>;
type SwitchName = Switch['field'];
type TextName = Text['field'];

const isSwitch = (own: OwnSetting): boolean => own.setting.kind === 'switch';
export const TEXT_SETTINGS: readonly OwnSetting[] = OWN_SETTINGS.filter((own) => !isSwitch(own));
export const SWITCH_SETTINGS: readonly OwnSetting[] = OWN_SETTINGS.filter(isSwitch);

type Nullable<T extends Parameters<typeof Type.Union>[0][number]> = TUnion<[T, TNull]>;
const entries = <T>(settings: readonly OwnSetting[], schema: (setting: PaginationSetting) => T): Record<string, T> =>
  Object.fromEntries(settings.map(({ setting }) => [setting.field, schema(setting)]));

/** The inputs (API bodies, `ifw apply`): a text setting may be null, a switch not; no defaults (see schemas.ts). */
export const PaginationInputs = {
  texts: entries(TEXT_SETTINGS, (s) => Type.Optional(Type.Union([s.schema(), Type.Null()], { description: s.description }))) as {
    [S in Text as S['field']]: TOptional<Nullable<ReturnType<S['schema']>>>;
  },
  switches: entries(SWITCH_SETTINGS, (s) => Type.Optional(s.schema({ description: s.description }))) as {
    [S in Switch as S['field']]: TOptional<ReturnType<S['schema']>>;
  },
};

/** The answers: every setting of every type, null (false) when not set. */
export const PaginationAnswers = {
  texts: entries(TEXT_SETTINGS, (s) => Type.Union([s.schema(), Type.Null()])) as {
    [S in Text as S['field']]: Nullable<ReturnType<S['schema']>>;
  },
  switches: entries(SWITCH_SETTINGS, (s) => s.schema()) as { [S in Switch as S['field']]: ReturnType<S['schema']> },
};

const valueIn = (pagination: ConfiguredPagination, own: OwnSetting): unknown =>
  (pagination as unknown as Readonly<Record<string, unknown>>)[own.key];

/** What a setting of the type in use reads as when absent (stored before it was declared). */
const unsetOf = (setting: PaginationSetting): unknown => (setting.kind === 'choice' ? setting.byDefault : setting.unset);

/** The type-specific settings of every type: those of the type in use, and the kept ones of the others. */
export function paginationFieldsOf(pagination: ConfiguredPagination, kept: KeptPagination): PaginationFields {
  const fields: Record<string, unknown> = {};
  for (const own of OWN_SETTINGS) {
    const { field } = own.setting;
    fields[field] = own.types.includes(pagination.type)
      ? (valueIn(pagination, own) ?? unsetOf(own.setting))
      : (kept[field] ?? own.setting.unset);
  }
  return fields as PaginationFields;
}

const pick = <K extends PaginationFieldName>(fields: PaginationFields, settings: readonly OwnSetting[]): Pick<PaginationFields, K> =>
  Object.fromEntries(settings.map(({ setting }) => [setting.field, fields[setting.field]])) as Pick<PaginationFields, K>;

/** The text settings of every type, in their order. */
export const textFieldsOf = (fields: PaginationFields): Pick<PaginationFields, TextName> => pick<TextName>(fields, TEXT_SETTINGS);
/** The switches of every type, in their order. */
export const switchFieldsOf = (fields: PaginationFields): Pick<PaginationFields, SwitchName> => pick<SwitchName>(fields, SWITCH_SETTINGS);
