/**
 * An OData entity set, declared once: `entitySet({ name, key, keyType, noun, item, listOptions })`.
 * Everything its routes would otherwise write by hand comes from that one declaration:
 *
 * - the URLs: the collection (`<base>/<name>`), one entity (`…/:key`, written `name(<key>)` by
 *   callers, see odata.ts), bound actions (`…(<key>)/Microsoft.NAV.<action>`), a new entity's Location;
 * - the key read from `name(<key>)`: a string (quoted), an integer or a GUID, 404 when it cannot be one;
 * - `@odata.context` (the collection, and `…/$entity` for one entity) and the envelope schemas;
 * - the paged list answer (`$filter`, `$orderby`, `$top`, `$skip`, `$count`, `@odata.nextLink`);
 * - the key `$metadata` declares: `config(permission)` carries it on every route of the set, and
 *   csdl.ts reads it from there, so the CSDL key and the URL key are one declaration.
 *
 * Sub-resources are declared from their set: `containsMany` (`integrations(<n>)/fields`) and
 * `containsOne` (`bulkImportRequests(<id>)/details`).
 */
import { Type, type TArray, type TInteger, type TObject, type TOptional, type TProperties, type TString } from 'typebox';
import type { Permission } from '../auth/permissions.js';
import { badRequest, notFound } from '../core/errors.js';
import type { FilterClause } from '../storage/filter.js';
import {
  API_BASE,
  pageResult,
  parseCount,
  parseFilter,
  parseGuidKey,
  parseIntegerKey,
  parseOrderBy,
  parsePaging,
  parseStringKey,
  requestedUrl,
  requireKey,
  type FilterPropertyType,
  type OrderItem,
} from './odata.js';
import { Integer } from './schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The key of the entity the route answers, for `$metadata`; an entity set's `config()` sets it. */
    odataKey?: readonly string[];
  }
}

/** How the key in parentheses is written: `'text'` (quoted, a quote doubled), `10`, or a bare GUID. */
export type KeyType = 'string' | 'integer' | 'guid';
export type KeyValue<K extends KeyType> = K extends 'integer' ? number : string;

/** The query options of a list, in the order the OpenAPI document shows them. */
export type ListOption = '$filter' | '$orderby' | '$top' | '$skip' | '$count';

type Nothing = Record<never, never>;
type EntityProperties<P extends TProperties> = { '@odata.context': TString } & P;
type ListProperties<P extends TProperties, O extends readonly ListOption[]> = { '@odata.context': TString } & ('$count' extends O[number]
  ? { '@odata.count': TOptional<TInteger> }
  : Nothing) & { value: TArray<TObject<P>> } & ('$top' extends O[number] ? { '@odata.nextLink': TOptional<TString> } : Nothing);
type QueryProperties<O extends readonly ListOption[]> = { [N in O[number]]: TOptional<TString> };

export type ODataEntity<T> = { '@odata.context': string } & T;

export interface ListAnswer<T> {
  '@odata.context': string;
  '@odata.count'?: number;
  value: T[];
  '@odata.nextLink'?: string;
}

/** What a paged list handler reads of its request: the query options and the URL the caller wrote. */
export interface ListRequest {
  readonly query: Readonly<Partial<Record<ListOption, string>>>;
  readonly originalUrl: string;
  readonly protocol: string;
  readonly host: string;
}

/** The rows a paged list asks its query for: `limit` is one more than the page, to know whether a next page exists. */
export interface ListRows {
  readonly filter: FilterClause[];
  readonly orderBy: OrderItem[];
  readonly skip: number;
  readonly limit: number;
}

/**
 * How a list may be ordered: by one property (`by`), asc or desc, with its default direction; or by any
 * of `among`, comma-separated, each asc or desc (the caller adds its own tie-break).
 */
export type ListOrder = { readonly by: string; readonly default: 'asc' | 'desc' } | { readonly among: readonly string[] };

export interface PagedList<Row, Item> {
  readonly maxPageSize: number;
  /** The properties `$filter` may use, with their types. */
  readonly filter?: Readonly<Record<string, FilterPropertyType>>;
  readonly orderBy?: ListOrder;
  readonly rows: (query: ListRows) => Promise<Row[]>;
  /** The items matching the filter on all pages, for `$count=true`. */
  readonly count?: (filter: FilterClause[]) => Promise<number>;
  /** How a row is answered, when not as it is. */
  readonly item?: (row: Row) => Item;
}

/** The route config of a route of the set: its permission, and the key `$metadata` declares for what it answers. */
export interface EntityRouteConfig {
  readonly permission: Permission;
  readonly odataKey: readonly string[];
}

export interface EntitySetOptions<P extends TProperties, K extends KeyType, O extends readonly ListOption[]> {
  /** The set's name in URLs and in `$metadata`: `bulkImportRequests`. */
  readonly name: string;
  /** The key property: the value in parentheses. */
  readonly key: keyof P & string;
  readonly keyType: K;
  /** One entity, in a 404's words: `No ${noun} with key …`. */
  readonly noun: string;
  /** One entity as the answers show it. */
  readonly item: TObject<P>;
  /** The list's query options, in the order the OpenAPI document lists them; none: the list answers everything at once. */
  readonly listOptions?: O;
}

/** A sub-resource whose items are addressed by their own key (`integrations(<n>)/fields(<fieldNo>)`). */
export interface KeyedMany<P extends TProperties, K extends KeyType, O extends readonly ListOption[], KP extends string> {
  readonly name: string;
  readonly key: keyof P & string;
  readonly keyType: K;
  readonly noun: string;
  /** The route parameter of the item's key: `fieldKey` routes `…/fields/:fieldKey`. */
  readonly keyParam: KP;
  readonly item: TObject<P>;
  readonly listOptions?: O;
}

/**
 * A sub-resource of open items without a key of their own (the rows of a target table): `$metadata`
 * declares it as a collection property of an open complex type, not as entities (csdl.ts).
 */
export interface OpenMany<P extends TProperties, O extends readonly ListOption[]> {
  readonly name: string;
  readonly key: null;
  readonly item: TObject<P>;
  readonly listOptions?: O;
}

export interface Collection<P extends TProperties, O extends readonly ListOption[]> {
  readonly Entity: TObject<EntityProperties<P>>;
  readonly List: TObject<ListProperties<P, O>>;
  /** The querystring of the list route; its options are `listOptions`. */
  readonly ListQuery: TObject<QueryProperties<O>>;
  readonly config: (permission: Permission) => EntityRouteConfig;
}

export interface EntitySet<P extends TProperties, K extends KeyType, O extends readonly ListOption[]> extends Collection<P, O> {
  readonly name: string;
  /** The collection's route: `<base>/<name>`. */
  readonly path: string;
  /** One entity's route: `<base>/<name>/:key`. */
  readonly itemPath: string;
  /** `@odata.context` of the list; an entity's is this with `/$entity`. */
  readonly context: string;
  readonly key: (raw: string) => KeyValue<K>;
  /** The entity's URL as callers write it, for a Location header. */
  readonly url: (key: KeyValue<K>) => string;
  /** The route of an action bound to one entity: `…/:key/Microsoft.NAV.<name>`. */
  readonly action: (name: string) => string;
  /** The route of an action bound to the collection: `<base>/<name>/Microsoft.NAV.<name>`. */
  readonly collectionAction: (name: string) => string;
  readonly entity: <T extends object>(value: T) => ODataEntity<T>;
  readonly list: <T>(value: T[]) => ListAnswer<T>;
  readonly page: <Row, Item = Row>(request: ListRequest, spec: PagedList<Row, Item>) => Promise<ListAnswer<Item>>;
  readonly containsMany: {
    <Q extends TProperties, KQ extends KeyType, const KP extends string, const OQ extends readonly ListOption[] = []>(
      options: KeyedMany<Q, KQ, OQ, KP>,
    ): KeyedSub<Q, KQ, OQ, KP, K>;
    <Q extends TProperties, const OQ extends readonly ListOption[] = []>(options: OpenMany<Q, OQ>): Sub<Q, OQ, K>;
  };
  readonly containsOne: <Q extends TProperties>(options: {
    readonly name: string;
    readonly key: keyof Q & string;
    readonly item: TObject<Q>;
  }) => One<Q>;
}

/** A sub-resource collection of the entity with key `parent`. */
export interface Sub<P extends TProperties, O extends readonly ListOption[], PK extends KeyType> extends Collection<P, O> {
  /** `<base>/<set>/:key/<name>`. */
  readonly path: string;
  readonly context: (parent: KeyValue<PK>) => string;
  readonly entity: <T extends object>(parent: KeyValue<PK>, value: T) => ODataEntity<T>;
  readonly list: <T>(parent: KeyValue<PK>, value: T[]) => ListAnswer<T>;
  readonly page: <Row, Item = Row>(request: ListRequest, parent: KeyValue<PK>, spec: PagedList<Row, Item>) => Promise<ListAnswer<Item>>;
}

export interface KeyedSub<
  P extends TProperties,
  K extends KeyType,
  O extends readonly ListOption[],
  KP extends string,
  PK extends KeyType,
> extends Sub<P, O, PK> {
  /** `<base>/<set>/:key/<name>/:<keyParam>`. */
  readonly itemPath: string;
  readonly Params: TObject<{ key: TString } & { [N in KP]: TString }>;
  readonly key: (raw: string) => KeyValue<K>;
  readonly url: (parent: KeyValue<PK>, key: KeyValue<K>) => string;
}

/** A single-valued sub-resource (`bulkImportRequests(<id>)/details`). */
export interface One<P extends TProperties> {
  readonly path: string;
  readonly Entity: TObject<EntityProperties<P>>;
  /**
   * Its context is the set's with the sub-resource's name and no key (`#bulkImportRequests/details/$entity`),
   * as the API has always answered it.
   */
  readonly entity: <T extends object>(value: T) => ODataEntity<T>;
  readonly config: (permission: Permission) => EntityRouteConfig;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function entitySet<P extends TProperties, K extends KeyType, const O extends readonly ListOption[] = []>(
  options: EntitySetOptions<P, K, O>,
): EntitySet<P, K, O> {
  const { name, keyType } = options;
  if (!IDENTIFIER.test(name)) throw new Error(`entity set name "${name}" is not an OData identifier`);
  const path = `${API_BASE}/${name}`;
  const itemPath = `${path}/:key`;
  const context = `${API_BASE}/$metadata#${name}`;

  function containsMany<Q extends TProperties>(
    sub: KeyedMany<Q, KeyType, readonly ListOption[], string> | OpenMany<Q, readonly ListOption[]>,
  ): KeyedSub<Q, KeyType, readonly ListOption[], string, K> | Sub<Q, readonly ListOption[], K> {
    const subPath = `${itemPath}/${sub.name}`;
    const subContext = (parent: KeyValue<K>) => `${context}(${keyText(keyType, parent)})/${sub.name}`;
    const base: Sub<Q, readonly ListOption[], K> = {
      ...collection(sub.item, sub.name, sub.key === null ? [] : [sub.key], sub.listOptions ?? []),
      path: subPath,
      context: subContext,
      entity: (parent, value) => ({ '@odata.context': `${subContext(parent)}/$entity`, ...value }),
      list: (parent, value) => ({ '@odata.context': subContext(parent), value }),
      page: (request, parent, spec) => pagedList(request, subContext(parent), spec),
    };
    if (!('keyType' in sub)) return base;
    const param = sub.keyParam;
    const subKeyType = sub.keyType;
    return {
      ...base,
      itemPath: `${subPath}/:${param}`,
      Params: Type.Object({ key: Type.String(), [param]: Type.String() }),
      key: keyParser(subKeyType, sub.key, sub.noun),
      url: (parent, key) => `${path}(${keyText(keyType, parent)})/${sub.name}(${keyText(subKeyType, key)})`,
    };
  }

  return {
    ...collection(options.item, name, [options.key], options.listOptions ?? []),
    name,
    path,
    itemPath,
    context,
    key: keyParser(keyType, options.key, options.noun),
    url: (key) => `${path}(${keyText(keyType, key)})`,
    action: (action) => `${itemPath}/Microsoft.NAV.${action}`,
    collectionAction: (action) => `${path}/Microsoft.NAV.${action}`,
    entity: (value) => ({ '@odata.context': `${context}/$entity`, ...value }),
    list: (value) => ({ '@odata.context': context, value }),
    page: (request, spec) => pagedList(request, context, spec),
    containsMany: containsMany as EntitySet<P, K, O>['containsMany'],
    containsOne: (sub) => ({
      path: `${itemPath}/${sub.name}`,
      Entity: Type.Object(withContext(sub.item.properties)),
      entity: (value) => ({ '@odata.context': `${context}/${sub.name}/$entity`, ...value }),
      config: (permission) => ({ permission, odataKey: [sub.key] }),
    }),
  };
}

/** An envelope's properties: `@odata.context` first, as every answer of the API carries it. */
const withContext = <P extends TProperties>(properties: P) => ({ '@odata.context': Type.String(), ...properties });

/** The schemas and route config every collection has, a set or a sub-resource. */
function collection<P extends TProperties, O extends readonly ListOption[]>(
  item: TObject<P>,
  name: string,
  key: readonly string[],
  listOptions: O,
): Collection<P, O> {
  const paged = listOptions.includes('$top');
  if (paged !== listOptions.includes('$skip')) throw new Error(`the list of ${name} takes $top and $skip together`);
  if (!paged && listOptions.includes('$count')) throw new Error(`the list of ${name} takes $count only when it pages`);
  const query = Object.fromEntries(listOptions.map((option) => [option, Type.Optional(Type.String())]));
  return {
    Entity: Type.Object(withContext(item.properties)),
    List: Type.Object({
      ...withContext({}),
      ...(listOptions.includes('$count')
        ? { '@odata.count': Type.Optional(Integer({ description: `With $count=true: the ${name} matching $filter, on all pages` })) }
        : {}),
      value: Type.Array(item),
      ...(paged ? { '@odata.nextLink': Type.Optional(Type.String()) } : {}),
    }) as unknown as TObject<ListProperties<P, O>>,
    ListQuery: Type.Object(query, { additionalProperties: false }) as unknown as TObject<QueryProperties<O>>,
    config: (permission) => ({ permission, odataKey: key }),
  };
}

function keyText(type: KeyType, key: string | number): string {
  return type === 'string' ? `'${String(key).replace(/'/g, "''")}'` : String(key);
}

function keyParser<K extends KeyType>(type: K, property: string, noun: string): (raw: string) => KeyValue<K> {
  switch (type) {
    case 'guid':
      return ((raw: string) => {
        const id = parseGuidKey(raw);
        if (id === null) throw notFound(`No ${noun} ${raw.replace(/^\(|\)$/g, '')}: a ${property} is a GUID.`);
        return id;
      }) as (raw: string) => KeyValue<K>;
    case 'integer':
      return ((raw: string) => requireKey(parseIntegerKey(raw), noun, raw)) as (raw: string) => KeyValue<K>;
    case 'string':
      return ((raw: string) => requireKey(parseStringKey(raw), noun, raw)) as (raw: string) => KeyValue<K>;
    default: {
      const never: never = type;
      throw new Error(`unknown key type ${String(never)}`);
    }
  }
}

function parseOrder(text: string | undefined, order: ListOrder | undefined): OrderItem[] {
  if (order === undefined) return [];
  if ('among' in order) return parseOrderBy(text, order.among);
  // One property: the whole text is the property and an optional direction, nothing else.
  const written = (text ?? `${order.by} ${order.default}`).trim().replace(/\s+/g, ' ');
  if (![order.by, `${order.by} asc`, `${order.by} desc`].includes(written))
    throw badRequest('invalidQuery', `$orderby supports ${order.by} asc or ${order.by} desc.`);
  return [{ property: order.by, descending: written.endsWith('desc') }];
}

/**
 * One page of a list: the query options read in a fixed order (a wrong `$filter` is reported before a
 * wrong `$top`), one row more than the page fetched, and `@odata.nextLink` on the URL the caller wrote
 * (`targetTables('x')/rows`, not the rewritten route) when more rows exist.
 */
async function pagedList<Row, Item>(request: ListRequest, context: string, spec: PagedList<Row, Item>): Promise<ListAnswer<Item>> {
  const { query } = request;
  const filter = parseFilter(query.$filter, spec.filter ?? {});
  const orderBy = parseOrder(query.$orderby, spec.orderBy);
  const count = parseCount(query.$count);
  const page = parsePaging(query, spec.maxPageSize);
  const rows = await spec.rows({ filter, orderBy, skip: page.skip, limit: page.limit + 1 });
  const { value, nextLink } = pageResult(rows, page, requestedUrl(request));
  const answered = spec.item === undefined ? (value as unknown as Item[]) : value.map(spec.item);
  return {
    '@odata.context': context,
    ...(count && spec.count !== undefined ? { '@odata.count': await spec.count(filter) } : {}),
    value: answered,
    ...(nextLink !== undefined ? { '@odata.nextLink': nextLink } : {}),
  };
}
