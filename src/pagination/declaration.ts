/**
 * How a pagination type is declared: once, in its own file, with everything its other forms are read
 * from. The settings union (types.ts), the engine's rules (settings.ts), the paginator (paginator.ts),
 * and in rest-source the API and `ifw apply` properties, the answers, the stored columns, the save rules
 * and the console's Pagination section all iterate over the declarations; none names a type.
 *
 * A setting is declared under the name the engine reads (`offsetParam`), with the name callers send,
 * answers show and forms use (`field`: `offsetParameterName`), the spec's name (`label`), the TypeBox
 * type of its value, its limits, the API description and the console help. Plain data: no HTML here.
 */
import { Type, type Static, type TBoolean, type TSchemaOptions, type TString, type TUnsafe } from 'typebox';
import type { Start } from './steps.js';

/** The settings every type has (spec 2.3), in the engine's form. */
export interface CommonSettings {
  /** Safety limit against endless loops (spec default 100). */
  readonly maxPages: number;
  /** Records per page; for Next Link informational only; for Offset/Limit also the limit value. */
  readonly pageSize: number | null;
  /**
   * Where the record array is in a response ('' = blank: the root is the array). What pagination
   * counts is handed to it with each response (PageResponse.records), found by the caller.
   */
  readonly responseDataPath: string;
}

interface SettingTexts<F extends string> {
  /** The name callers send, answers show, and `ifw apply` files and console forms use. */
  readonly field: F;
  /** The spec's name (section 2.3): the engine's messages and the console label. */
  readonly label: string;
  /** The API description (OpenAPI, `ifw apply`). */
  readonly description: string;
  /** The console's help text beside the field. */
  readonly help: string;
}

/**
 * A text setting, checked by kind: `jsonPath`, a path read out of each response (Next Link JSON Path);
 * `queryParameter`, a query parameter the paginator sets on every request (Page Parameter Name).
 * Required by its type; null (not set) while another type is in use.
 */
export interface TextSetting<F extends string = string> extends SettingTexts<F> {
  readonly kind: 'jsonPath' | 'queryParameter';
  readonly schema: (options?: TSchemaOptions) => TString;
  readonly maxLength: number;
  readonly unset: null;
  /** What the type needs it for, after "<Title> pagination needs a <label>: " when it is missing. */
  readonly needs: string;
  /** The console field: a text input, required while its type is in use. */
  readonly input: 'text';
}

/**
 * An optional text setting, checked by kind when set: `optionalJsonPath`, a path read out of each
 * response (Has More JSON Path); `text`, a value used as written (a header name, an initial cursor).
 * Null (not set) is allowed while its type is in use.
 */
export interface OptionalTextSetting<F extends string = string> extends SettingTexts<F> {
  readonly kind: 'optionalJsonPath' | 'text';
  readonly schema: (options?: TSchemaOptions) => TString;
  readonly maxLength: number;
  readonly unset: null;
  /** The console field: a text input that may stay empty. */
  readonly input: 'optionalText';
}

/** A switch: false unless set; the console shows a checkbox. */
export interface SwitchSetting<F extends string = string> extends SettingTexts<F> {
  readonly kind: 'switch';
  readonly schema: (options?: TSchemaOptions) => TBoolean;
  readonly unset: false;
  readonly input: 'checkbox';
}

/** One of a few named values, `byDefault` unless set; the console shows a select. */
export interface ChoiceSetting<F extends string = string, O extends string = string> extends SettingTexts<F> {
  readonly kind: 'choice';
  readonly options: readonly O[];
  /** What each option means, for the console's select and the API description. */
  readonly optionLabels: Readonly<Record<O, string>>;
  readonly byDefault: O;
  /** A string to JSON Schema (as `paginationType` and `method` are: the rules name the allowed values), typed as its options. */
  readonly schema: (options?: TSchemaOptions) => TUnsafe<O>;
  readonly unset: null;
  readonly input: 'select';
}

export type SettingDeclaration<F extends string = string> = TextSetting<F> | OptionalTextSetting<F> | SwitchSetting<F> | ChoiceSetting<F>;

/** The value a setting holds while its type is in use. */
export type SettingValue<S extends SettingDeclaration> = S extends OptionalTextSetting ? string | null : Static<ReturnType<S['schema']>>;

/** Limits of the text settings: a path is longer than a parameter name. */
export const JSON_PATH_LIMIT = 250;
export const QUERY_PARAMETER_LIMIT = 100;

type TextDeclaration<F extends string> = SettingTexts<F> & { readonly needs: string };

export const jsonPathSetting = <const F extends string>(texts: TextDeclaration<F>): TextSetting<F> => ({
  kind: 'jsonPath',
  schema: Type.String,
  maxLength: JSON_PATH_LIMIT,
  unset: null,
  input: 'text',
  ...texts,
});

export const queryParameterSetting = <const F extends string>(texts: TextDeclaration<F>): TextSetting<F> => ({
  kind: 'queryParameter',
  schema: Type.String,
  maxLength: QUERY_PARAMETER_LIMIT,
  unset: null,
  input: 'text',
  ...texts,
});

export const switchSetting = <const F extends string>(texts: SettingTexts<F>): SwitchSetting<F> => ({
  kind: 'switch',
  schema: Type.Boolean,
  unset: false,
  input: 'checkbox',
  ...texts,
});

/** An optional path read out of each response; checked when set. */
export const optionalJsonPathSetting = <const F extends string>(texts: SettingTexts<F>): OptionalTextSetting<F> => ({
  kind: 'optionalJsonPath',
  schema: Type.String,
  maxLength: JSON_PATH_LIMIT,
  unset: null,
  input: 'optionalText',
  ...texts,
});

/** An optional value used as written (a header name, an initial cursor). */
export const textSetting = <const F extends string>(texts: SettingTexts<F>): OptionalTextSetting<F> => ({
  kind: 'text',
  schema: Type.String,
  maxLength: JSON_PATH_LIMIT,
  unset: null,
  input: 'optionalText',
  ...texts,
});

export const choiceSetting = <const F extends string, const O extends string>(
  texts: SettingTexts<F> & { readonly optionLabels: Readonly<Record<O, string>>; readonly byDefault: NoInfer<O> },
): ChoiceSetting<F, O> => {
  const options = Object.keys(texts.optionLabels) as O[];
  return { kind: 'choice', options, schema: (o) => Type.Unsafe<O>(Type.String(o)), unset: null, input: 'select', ...texts };
};

/**
 * What Page Size is to a type: `counted`, required and compared with each page's records to decide
 * whether there is another (which needs a Response Data Path too); `informational`, for display only
 * (spec 4.4, Next Link); `optional`, kept if given.
 */
export type PageSizeRole = 'counted' | 'informational' | 'optional';

type Settings = Readonly<Record<string, SettingDeclaration>>;

/** The engine's settings of a declared type: its kind name, its own settings, and the common ones. */
export type SettingsFor<T extends string, S extends Settings, P extends PageSizeRole> = CommonSettings & {
  readonly type: T;
} & { readonly [K in keyof S as S[K] extends TextSetting ? K : never]: SettingValue<S[K]> } & {
  readonly [K in keyof S as S[K] extends TextSetting ? never : K]?: SettingValue<S[K]>;
} & (P extends 'counted' ? { readonly pageSize: number } : unknown);

/**
 * Whether a setting may be absent from a type's settings (the engine's and the stored form): every
 * kind but the required texts. Absent reads as unset: a switch off, an optional text not set, a
 * choice at its default; so settings saved before such a setting was declared need no migration.
 */
export const mayBeAbsent = (setting: SettingDeclaration): boolean => setting.kind !== 'jsonPath' && setting.kind !== 'queryParameter';

/** A rule across a type's settings, beyond each setting's own. */
export interface PaginationRule<V, K extends string = string> {
  /** The setting the API names in its message (its engine name). */
  readonly setting: K;
  broken(settings: V): boolean;
  /** The engine's sentence (spec names). */
  readonly problem: string;
  /** The API's message, after "<field>: ". */
  fieldProblem(settings: V): string;
}

export interface PaginationDeclaration<T extends string, S extends Settings, P extends PageSizeRole> {
  /** The kind name callers send as `paginationType` and storage keeps. */
  readonly type: T;
  /** The spec's name (section 2.3): messages and the console. */
  readonly title: string;
  /** What it does, in one sentence: the console's help under Pagination Type. */
  readonly help: string;
  readonly pageSize: P;
  /** Its own settings, in the order they are checked and shown. */
  readonly settings: S;
  readonly rules: readonly PaginationRule<SettingsFor<T, S, P>, keyof S & string>[];
  /**
   * The paginator factory: the first request and the strategy (paginator.ts adds loop detection and the
   * stop conditions). `body`: the endpoint's JSON POST body, for a type that sets parameters in it.
   */
  start(settings: SettingsFor<T, S, P>, firstUrl: string, connectionOrigin: string, body: string | null): Start;
}

export const declarePagination = <const T extends string, const S extends Settings, const P extends PageSizeRole>(
  declaration: PaginationDeclaration<T, S, P>,
): PaginationDeclaration<T, S, P> => declaration;

/** The engine's settings of some type: what generic code hands a declaration. */
export type AnySettings = CommonSettings & { readonly type: string };

/** A declaration as generic code sees it (methods take any type's settings). */
export interface AnyPagination {
  readonly type: string;
  readonly title: string;
  readonly help: string;
  readonly pageSize: PageSizeRole;
  readonly settings: Settings;
  readonly rules: readonly PaginationRule<AnySettings>[];
  start(settings: AnySettings, firstUrl: string, connectionOrigin: string, body: string | null): Start;
}

/** A setting's value in settings of its type (generic code reads them by the declared name). */
export const settingValue = (settings: AnySettings, key: string): unknown =>
  (settings as unknown as Readonly<Record<string, unknown>>)[key];
