/**
 * The CSDL model written out: as XML (OData 4.0 CSDL, what Excel, Power BI and most OData clients
 * ask for) and as JSON (OData CSDL JSON). Both come from the same model, so they say the same.
 */
import type { Action, Csdl, Property, StructuredType, TypeRef } from './csdl.js';

const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const attributes = (values: Readonly<Record<string, string | undefined>>): string =>
  Object.entries(values)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([name, value]) => ` ${name}="${escapeXml(value)}"`)
    .join('');

const xmlType = (ref: TypeRef): string => (ref.collection ? `Collection(${ref.type})` : ref.type);

// Nullable defaults to true in XML: written only where a value (or item) may not be null.
const xmlNullable = (ref: TypeRef): string | undefined => (ref.nullable ? undefined : 'false');

function xmlStructuredType(type: StructuredType): string[] {
  const lines = [
    `    <${type.kind}${attributes({
      Name: type.name,
      Abstract: type.abstract ? 'true' : undefined,
      OpenType: type.open ? 'true' : undefined,
    })}>`,
  ];
  if (type.kind === 'EntityType' && type.key.length > 0) {
    lines.push(`      <Key>${type.key.map((k) => `<PropertyRef${attributes({ Name: k })}/>`).join('')}</Key>`);
  }
  for (const p of type.properties)
    lines.push(`      <Property${attributes({ Name: p.name, Type: xmlType(p), Nullable: xmlNullable(p) })}/>`);
  for (const n of type.navigation) {
    lines.push(
      `      <NavigationProperty${attributes({
        Name: n.name,
        Type: xmlType(n),
        Nullable: n.collection ? undefined : 'false',
        ContainsTarget: 'true',
      })}/>`,
    );
  }
  lines.push(`    </${type.kind}>`);
  return lines;
}

function xmlParameter(p: Property): string {
  return `      <Parameter${attributes({ Name: p.name, Type: xmlType(p), Nullable: xmlNullable(p) })}/>`;
}

function xmlAction(action: Action): string[] {
  const lines = [`    <Action${attributes({ Name: action.name, IsBound: 'true' })}>`];
  lines.push(xmlParameter({ name: 'bindingParameter', ...action.binding }));
  for (const p of action.parameters) lines.push(xmlParameter(p));
  if (action.returnType !== undefined)
    lines.push(`      <ReturnType${attributes({ Type: xmlType(action.returnType), Nullable: xmlNullable(action.returnType) })}/>`);
  lines.push('    </Action>');
  return lines;
}

export function csdlXml(model: Csdl): string {
  return [
    '<?xml version="1.0" encoding="utf-8"?>',
    '<edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx">',
    '<edmx:DataServices>',
    `  <Schema Namespace="${escapeXml(model.namespace)}" xmlns="http://docs.oasis-open.org/odata/ns/edm">`,
    ...model.types.flatMap(xmlStructuredType),
    ...model.actions.flatMap(xmlAction),
    `    <EntityContainer${attributes({ Name: model.container })}>`,
    ...model.entitySets.map((s) => `      <EntitySet${attributes({ Name: s.name, EntityType: s.entityType })}/>`),
    '    </EntityContainer>',
    '  </Schema>',
    '</edmx:DataServices>',
    '</edmx:Edmx>',
    '',
  ].join('\n');
}

// ---- JSON ----------------------------------------------------------------------------------

type Json = Record<string, unknown>;

// In CSDL JSON $Nullable defaults to false: written only where null is allowed. $Type is always
// written, though it defaults to Edm.String, for a reader who does not know the default.
function jsonTypeRef(ref: TypeRef): Json {
  return {
    ...(ref.collection ? { $Collection: true } : {}),
    $Type: ref.type,
    ...(ref.nullable ? { $Nullable: true } : {}),
  };
}

function jsonStructuredType(type: StructuredType): Json {
  const members: Json = { $Kind: type.kind };
  if (type.abstract) members.$Abstract = true;
  if (type.open) members.$OpenType = true;
  if (type.kind === 'EntityType' && type.key.length > 0) members.$Key = [...type.key];
  for (const p of type.properties) members[p.name] = jsonTypeRef(p);
  for (const n of type.navigation) {
    members[n.name] = { $Kind: 'NavigationProperty', ...jsonTypeRef({ ...n, nullable: false }), $ContainsTarget: true };
  }
  return members;
}

function jsonAction(action: Action): Json {
  const parameter = (p: Property) => ({ $Name: p.name, ...jsonTypeRef(p) });
  return {
    $Kind: 'Action',
    $IsBound: true,
    $Parameter: [parameter({ name: 'bindingParameter', ...action.binding }), ...action.parameters.map(parameter)],
    ...(action.returnType === undefined ? {} : { $ReturnType: jsonTypeRef(action.returnType) }),
  };
}

export function csdlJson(model: Csdl): Json {
  const schema: Json = {};
  for (const type of model.types) schema[type.name] = jsonStructuredType(type);
  for (const action of model.actions) {
    const overloads = (schema[action.name] as Json[] | undefined) ?? [];
    overloads.push(jsonAction(action));
    schema[action.name] = overloads;
  }
  const container: Json = { $Kind: 'EntityContainer' };
  for (const set of model.entitySets) container[set.name] = { $Collection: true, $Type: set.entityType };
  schema[model.container] = container;
  return { $Version: '4.0', $EntityContainer: `${model.namespace}.${model.container}`, [model.namespace]: schema };
}
