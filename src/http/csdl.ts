/**
 * The OData model of the API (CSDL: entity types, entity sets, bound actions), derived from the
 * routes themselves so that it cannot drift from the answers: an entity set is a GET list route
 * `<base>/<set>` answering `{ value: [...] }`, its entity type the schema of the list's items (and of
 * `<set>(<key>)`), a sub-resource `<set>(<key>)/<name>` a contained navigation property, and a POST
 * `…/Microsoft.NAV.<name>` a bound action, with its body's properties as parameters.
 *
 * A route schema does not say which property the key in parentheses is: the entity set's declaration
 * does (entity-set.ts), and its routes carry it in their config (`odataKey`). A sub-resource declared
 * with an empty key (the rows of a target table: each table has its own columns and primary key, and no
 * route addresses one row) is not an entity: it is a property of its parent whose type is an open
 * complex type (a collection of them for a list), served at `<set>(<key>)/<name>` and left out of the
 * parent's own answer (OData lets a service answer a default set of properties). Clients then query it
 * as a collection property, with `$filter`, `$top`, … and `@odata.nextLink`, and never look for a key.
 * Building the model fails, and so the server does not start, when an entity set has no declared key,
 * an empty one, or a key that is not a required, non-null, primitive property.
 */

export const NAMESPACE = 'Microsoft.NAV';
export const CONTAINER = 'default';

// ---- the model -----------------------------------------------------------------------------

export type EdmPrimitive = 'Edm.String' | 'Edm.Int64' | 'Edm.Double' | 'Edm.Boolean' | 'Edm.Guid' | 'Edm.DateTimeOffset' | 'Edm.Date';

/** A type reference: a primitive or a qualified structured type name, one value or a collection. */
export interface TypeRef {
  readonly type: string;
  readonly collection: boolean;
  /** For a collection: whether its items may be null. */
  readonly nullable: boolean;
}

export interface Property extends TypeRef {
  readonly name: string;
}

export interface NavigationProperty extends TypeRef {
  readonly name: string;
}

export interface StructuredType {
  readonly kind: 'EntityType' | 'ComplexType';
  readonly name: string;
  /** EntityType only; empty for an abstract one. */
  readonly key: readonly string[];
  readonly abstract: boolean;
  /** Properties beyond the declared ones may appear (a value the schema leaves untyped). */
  readonly open: boolean;
  readonly properties: readonly Property[];
  readonly navigation: readonly NavigationProperty[];
}

export interface Action {
  readonly name: string;
  /** The binding parameter's type: the entity type, or a collection of it for `<set>/Microsoft.NAV.<name>`. */
  readonly binding: TypeRef;
  readonly parameters: readonly Property[];
  readonly returnType: TypeRef | undefined;
}

export interface EntitySet {
  readonly name: string;
  /** Qualified entity type name. */
  readonly entityType: string;
}

export interface Csdl {
  readonly namespace: string;
  readonly container: string;
  readonly types: readonly StructuredType[];
  readonly actions: readonly Action[];
  readonly entitySets: readonly EntitySet[];
}

/** What a route contributes: its method, its URL, the schemas it declares and the key of what it answers. */
export interface RouteShape {
  readonly method: string;
  readonly url: string;
  readonly body?: unknown;
  /** The schema of the success answer (200, 201 or 202). */
  readonly response?: unknown;
  /** The key properties of the entity it answers, from its entity set's declaration. */
  readonly key?: readonly string[] | undefined;
}

// ---- JSON schema → CSDL --------------------------------------------------------------------

type Schema = Readonly<Record<string, unknown>>;
const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const qualified = (name: string): string => `${NAMESPACE}.${name}`;
const capitalized = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** `jobQueueEntries` → `jobQueueEntry`, `users` → `user`; names the API uses, not English at large. */
export function singular(name: string): string {
  if (name.endsWith('ies')) return `${name.slice(0, -3)}y`;
  if (name.endsWith('s') && !name.endsWith('ss')) return name.slice(0, -1);
  return name;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Properties of an object schema that describe data: not `@odata.*` annotations, nor a former name still accepted (`deprecated`). */
function dataProperties(schema: Schema): [string, Schema][] {
  if (!isSchema(schema.properties)) return [];
  return Object.entries(schema.properties).filter(
    (e): e is [string, Schema] => !e[0].startsWith('@') && isSchema(e[1]) && e[1].deprecated !== true,
  );
}

const requiredOf = (schema: Schema): ReadonlySet<string> =>
  new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);

function branches(schema: Schema): Schema[] | undefined {
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  return union?.filter(isSchema);
}

const isNullSchema = (s: Schema): boolean => s.type === 'null';

function primitiveOf(schema: Schema): EdmPrimitive | undefined {
  switch (schema.type) {
    case 'string':
      if (schema.format === 'date-time') return 'Edm.DateTimeOffset';
      if (schema.format === 'uuid') return 'Edm.Guid';
      if (schema.format === 'date') return 'Edm.Date';
      return 'Edm.String';
    case 'integer':
      return 'Edm.Int64';
    case 'number':
      return 'Edm.Double';
    case 'boolean':
      return 'Edm.Boolean';
    default:
      return undefined;
  }
}

/** The merged object of a union of objects: every property, none required. */
function mergedObject(objects: readonly Schema[]): Schema {
  return { type: 'object', properties: firstOfEach(objects) };
}

/** Each data property of the schemas, as the first schema that has it declares it (a Map: any name is safe). */
function firstOfEach(schemas: readonly Schema[]): Record<string, Schema> {
  const properties = new Map<string, Schema>();
  for (const s of schemas) for (const [name, p] of dataProperties(s)) if (!properties.has(name)) properties.set(name, p);
  return Object.fromEntries(properties);
}

class ModelBuilder {
  readonly types = new Map<string, StructuredType>();

  /** Adds a structured type; a second type of the same name and shape is the same type. */
  add(type: StructuredType): string {
    const existing = this.types.get(type.name);
    if (existing !== undefined) {
      if (JSON.stringify(existing) === JSON.stringify(type)) return qualified(type.name);
      for (let n = 2; ; n++) {
        const name = `${type.name}${n}`;
        const other = this.types.get(name);
        if (other === undefined || JSON.stringify(other) === JSON.stringify({ ...type, name })) return this.add({ ...type, name });
      }
    }
    this.types.set(type.name, type);
    return qualified(type.name);
  }

  /** The properties of an object schema; `open` when some value could not be typed and was left out. */
  structure(schema: Schema, owner: string): { properties: Property[]; open: boolean } {
    const required = requiredOf(schema);
    const properties: Property[] = [];
    let open = schema.additionalProperties === true || isSchema(schema.additionalProperties) || isSchema(schema.patternProperties);
    for (const [name, propertySchema] of dataProperties(schema)) {
      if (!IDENTIFIER.test(name)) throw new Error(`$metadata: property "${name}" of ${owner} is not an OData identifier`);
      const ref = this.typeOf(propertySchema, `${owner}${capitalized(name)}`);
      if (ref === undefined) {
        open = true;
        continue;
      }
      properties.push({ name, ...ref, nullable: ref.nullable || !required.has(name) });
    }
    return { properties, open };
  }

  /**
   * The type of a value schema; `nullable` says whether the value may be null (for a collection:
   * whether an item may). Undefined when the schema leaves the value untyped (`{}`, mixed unions).
   */
  typeOf(schema: Schema, name: string): TypeRef | undefined {
    const union = branches(schema);
    if (union !== undefined) {
      const nonNull = union.filter((b) => !isNullSchema(b));
      const nullable = nonNull.length < union.length;
      if (nonNull.length === 1) {
        const single = this.typeOf(nonNull[0]!, name);
        return single === undefined ? undefined : { ...single, nullable: nullable || single.nullable };
      }
      if (nonNull.length > 0 && nonNull.every((b) => b.type === 'object')) {
        const merged = this.typeOf(mergedObject(nonNull), name);
        return merged === undefined ? undefined : { ...merged, nullable };
      }
      const primitives = new Set(nonNull.map(primitiveOf));
      if (primitives.size === 1) {
        const [type] = primitives;
        return type === undefined ? undefined : { type, collection: false, nullable };
      }
      return undefined;
    }
    if (schema.nullable === true) {
      const inner = this.typeOf({ ...schema, nullable: false }, name);
      return inner === undefined ? undefined : { ...inner, nullable: true };
    }
    if (schema.type === 'array') {
      if (!isSchema(schema.items)) return undefined;
      const item = this.typeOf(schema.items, singular(name));
      return item === undefined || item.collection ? undefined : { type: item.type, collection: true, nullable: item.nullable };
    }
    if (schema.type === 'object') {
      const { properties, open } = this.structure(schema, name);
      const type = this.add({ kind: 'ComplexType', name, key: [], abstract: false, open, properties, navigation: [] });
      return { type, collection: false, nullable: false };
    }
    const primitive = primitiveOf(schema);
    return primitive === undefined ? undefined : { type: primitive, collection: false, nullable: false };
  }
}

// ---- routes → model ------------------------------------------------------------------------

interface Resource {
  /** Schemas describing one entity: list items first, then the single answers. */
  readonly entitySchemas: Schema[];
  readonly collection: boolean;
  /** As the routes that answer it declare it; every one of them must agree. */
  key: readonly string[] | undefined;
}

/** Adds what one route says of a resource: the entity its answer describes and the key it declares. */
function addAnswer(resource: Resource, path: string, schema: Schema, key: readonly string[] | undefined): void {
  resource.entitySchemas.push(schema);
  if (key === undefined) return;
  if (resource.key !== undefined && resource.key.join() !== key.join())
    throw new Error(`$metadata: the routes of ${path} declare the keys [${resource.key.join(', ')}] and [${key.join(', ')}]`);
  resource.key = key;
}

interface SetRoutes {
  readonly entity: Resource;
  readonly subResources: Map<string, Resource>;
  readonly actions: { name: string; collectionBound: boolean; body: unknown; response: unknown }[];
}

const ACTION = /^Microsoft\.NAV\.([A-Za-z_][A-Za-z0-9_]*)$/;

/** The single entity an answer describes: its own properties, or the items of `value`. */
function answerEntity(response: unknown): { schema: Schema; collection: boolean } | undefined {
  if (!isSchema(response) || response.type !== 'object') return undefined;
  const properties = isSchema(response.properties) ? response.properties : {};
  const value = properties.value;
  if (isSchema(value) && value.type === 'array' && isSchema(value.items)) return { schema: value.items, collection: true };
  return { schema: response, collection: false };
}

function collectRoutes(base: string, routes: readonly RouteShape[]): Map<string, SetRoutes> {
  const sets = new Map<string, SetRoutes>();
  const setOf = (name: string): SetRoutes => {
    let set = sets.get(name);
    if (set === undefined) {
      set = { entity: { entitySchemas: [], collection: true, key: undefined }, subResources: new Map(), actions: [] };
      sets.set(name, set);
    }
    return set;
  };
  const parsed = routes
    .filter((route) => route.url.startsWith(`${base}/`))
    .map((route) => ({ route, segments: route.url.slice(base.length + 1).split('/') }))
    .filter(({ segments }) => IDENTIFIER.test(segments[0] ?? ''));
  // First the lists, which make the entity sets (in the order they were registered), then the rest.
  for (const { route, segments } of parsed) {
    const answer = route.method === 'GET' && segments.length === 1 ? answerEntity(route.response) : undefined;
    if (answer?.collection === true) addAnswer(setOf(segments[0]!).entity, segments[0]!, answer.schema, route.key);
  }
  for (const { route, segments } of parsed) {
    const [name = '', second, third, ...rest] = segments;
    if (!sets.has(name) || second === undefined) continue;
    const keyed = second.startsWith(':');
    if (route.method === 'GET' && keyed && rest.length === 0) {
      const answer = answerEntity(route.response);
      if (answer === undefined) continue;
      if (third === undefined) addAnswer(setOf(name).entity, name, answer.schema, route.key);
      else if (IDENTIFIER.test(third)) {
        const subs = setOf(name).subResources;
        const sub = subs.get(third) ?? { entitySchemas: [], collection: answer.collection, key: undefined };
        addAnswer(sub, `${name}/${third}`, answer.schema, route.key);
        subs.set(third, sub);
      }
    } else if (route.method === 'POST') {
      const bound = keyed && third !== undefined && rest.length === 0 ? ACTION.exec(third) : null;
      const collectionBound = third === undefined ? ACTION.exec(second) : null;
      const match = bound ?? collectionBound;
      if (match !== null)
        setOf(name).actions.push({
          name: match[1]!,
          collectionBound: collectionBound !== null,
          body: route.body,
          response: route.response,
        });
    }
  }
  for (const [name, set] of sets) if (set.entity.entitySchemas.length === 0) sets.delete(name);
  return sets;
}

/** Every data property of the schemas, the first schema's first; required only where every schema requires it. */
function unionOfSchemas(schemas: readonly Schema[]): Schema {
  const properties = firstOfEach(schemas);
  const required = Object.keys(properties).filter((name) => schemas.every((s) => requiredOf(s).has(name)));
  const additionalProperties = schemas.some((s) => s.additionalProperties === true) ? true : undefined;
  return { type: 'object', properties, required, ...(additionalProperties ? { additionalProperties } : {}) };
}

function entityType(builder: ModelBuilder, typeName: string, path: string, resource: Resource): StructuredType {
  const { key } = resource;
  if (key === undefined || key.length === 0)
    throw new Error(`$metadata: no key is declared for ${path}; declare it with entitySet() in src/http/entity-set.ts`);
  const { properties, open } = builder.structure(unionOfSchemas(resource.entitySchemas), typeName);
  for (const name of key) {
    const property = properties.find((p) => p.name === name);
    if (property === undefined || property.nullable || property.collection || !property.type.startsWith('Edm.'))
      throw new Error(`$metadata: the key ${name} of ${path} is not a required, non-null, primitive property of its answers`);
  }
  return { kind: 'EntityType', name: typeName, key, abstract: false, open, properties, navigation: [] };
}

/** A sub-resource without a key of its own: an open complex type, the type of a property of its parent. */
function keylessType(builder: ModelBuilder, typeName: string, resource: Resource): StructuredType {
  const { properties } = builder.structure(unionOfSchemas(resource.entitySchemas), typeName);
  return { kind: 'ComplexType', name: typeName, key: [], abstract: false, open: true, properties, navigation: [] };
}

const sameNames = (a: readonly Property[], b: readonly string[]): boolean => a.length === b.length && a.every((p) => b.includes(p.name));

/** Builds the model from the routes under `base` (the API's root path). */
export function buildCsdl(base: string, routes: readonly RouteShape[]): Csdl {
  const builder = new ModelBuilder();
  const sets = collectRoutes(base, routes);
  const entitySets: EntitySet[] = [];
  const entities = new Map<string, StructuredType>();

  for (const [setName, set] of sets) {
    const typeName = singular(setName);
    const entity = entityType(builder, typeName, setName, set.entity);
    const navigation: NavigationProperty[] = [];
    const subProperties: Property[] = [];
    for (const [subName, sub] of set.subResources) {
      if (entity.properties.some((p) => p.name === subName))
        throw new Error(`$metadata: ${setName}/${subName} is both a property and a sub-resource`);
      const subTypeName = `${typeName}${capitalized(sub.collection ? singular(subName) : subName)}`;
      const path = `${setName}/${subName}`;
      const keyless = sub.key !== undefined && sub.key.length === 0;
      const type = builder.add(keyless ? keylessType(builder, subTypeName, sub) : entityType(builder, subTypeName, path, sub));
      (keyless ? subProperties : navigation).push({ name: subName, type, collection: sub.collection, nullable: false });
    }
    const complete = { ...entity, properties: [...entity.properties, ...subProperties], navigation };
    builder.add(complete);
    entities.set(setName, complete);
    entitySets.push({ name: setName, entityType: qualified(typeName) });
  }

  const actions: Action[] = [];
  for (const [setName, set] of sets) {
    const entity = entities.get(setName)!;
    for (const action of set.actions) {
      const parameters = isSchema(action.body) ? builder.structure(action.body, `${action.name}Parameters`).properties : [];
      actions.push({
        name: action.name,
        binding: { type: qualified(entity.name), collection: action.collectionBound, nullable: false },
        parameters,
        returnType: returnTypeOf(builder, entities, action.name, action.response),
      });
    }
  }

  const types = [...builder.types.values()];
  for (const action of actions)
    if (builder.types.has(action.name)) throw new Error(`$metadata: the action ${action.name} has the name of a type`);
  return { namespace: NAMESPACE, container: CONTAINER, types, actions, entitySets };
}

/** An action answering an entity of a set returns that entity type; any other answer is a complex type of its own. */
function returnTypeOf(builder: ModelBuilder, entities: ReadonlyMap<string, StructuredType>, action: string, response: unknown) {
  if (!isSchema(response) || response.type !== 'object') return undefined;
  const names = dataProperties(response).map(([name]) => name);
  for (const entity of entities.values())
    if (sameNames(entity.properties, names)) return { type: qualified(entity.name), collection: false, nullable: false };
  return builder.typeOf({ ...response, properties: Object.fromEntries(dataProperties(response)) }, `${action}Result`);
}
