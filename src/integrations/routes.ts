/**
 * `integrations(<sortingOrder>)` with their `fields(<fieldNo>)` and `mappings(<fieldNo>)`: OData-style
 * CRUD. POST and PATCH also take the fields and mappings inline, as `ifw apply` does. The rules live in
 * `src/integrations`; this file only speaks HTTP.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { notFound } from '../core/errors.js';
import type { Integration, IntegrationField, IntegrationMapping } from './model.js';
import type { IntegrationDeclared } from './service.js';
import {
  createField,
  createIntegration,
  createMapping,
  deleteField,
  deleteIntegration,
  deleteMapping,
  updateField,
  updateIntegration,
  updateMapping,
} from './service.js';
import {
  getIntegration,
  getIntegrationField,
  getIntegrationMapping,
  listIntegrationFields,
  listIntegrationMappings,
  listIntegrations,
} from './store.js';
import {
  FieldPatchSchema,
  FieldProperties,
  IntegrationPatchSchema,
  IntegrationProperties,
  IntegrationSetsProperties,
  MappingPatchSchema,
  MappingProperties,
} from './validate.js';
import type { Database } from '../storage/database.js';
import { API_BASE, parseIntegerKey, requireKey } from '../http/odata.js';
import type { RoutePlugin } from '../http/server.js';
import { ErrorSchema, KeyParams, ODATA_BODY } from '../http/schemas.js';

const SET = `${API_BASE}/integrations`;
const CONTEXT = `${API_BASE}/$metadata#integrations`;
const tags = ['Integrations'];

const FieldKeyParams = Type.Object({ key: Type.String(), fieldKey: Type.String() });

const IntegrationOut = {
  sortingOrder: Type.Integer(),
  name: Type.String(),
  type: Type.String(),
  targetTable: Type.String(),
  recordsPath: Type.String(),
  acceptBulkImportRequests: Type.Boolean(),
  maxPayloadSizeKb: Type.Union([Type.Integer(), Type.Null()]),
  writeMode: Type.String(),
  onRecordError: Type.String(),
};
const FieldOut = {
  integrationSortingOrder: Type.Integer(),
  fieldNo: Type.Integer(),
  title: Type.String(),
  sourcePath: Type.String(),
  columnType: Type.String(),
  constantValue: Type.Union([Type.String(), Type.Null()]),
};
const MappingOut = {
  integrationSortingOrder: Type.Integer(),
  fieldNo: Type.Integer(),
  targetField: Type.String(),
  required: Type.Boolean(),
};

const IntegrationEntity = Type.Object({ '@odata.context': Type.String(), ...IntegrationOut });
/** Inline fields and mappings are answered in the shape they are sent in, so an answer can be sent back as a PATCH. */
const InlineFieldOut = Type.Object({
  fieldNo: Type.Integer(),
  title: Type.String(),
  sourcePath: Type.String(),
  columnType: Type.String(),
  constantValue: Type.Union([Type.String(), Type.Null()]),
});
const InlineMappingOut = Type.Object({ fieldNo: Type.Integer(), targetField: Type.String(), required: Type.Boolean() });
const IntegrationWithSets = Type.Object({
  '@odata.context': Type.String(),
  ...IntegrationOut,
  fields: Type.Optional(Type.Array(InlineFieldOut, { description: 'Present when the request listed fields or mappings' })),
  mappings: Type.Optional(Type.Array(InlineMappingOut, { description: 'Present when the request listed fields or mappings' })),
});
const IntegrationList = Type.Object({ '@odata.context': Type.String(), value: Type.Array(Type.Object(IntegrationOut)) });
const FieldEntity = Type.Object({ '@odata.context': Type.String(), ...FieldOut });
const FieldList = Type.Object({ '@odata.context': Type.String(), value: Type.Array(Type.Object(FieldOut)) });
const MappingEntity = Type.Object({ '@odata.context': Type.String(), ...MappingOut });
const MappingList = Type.Object({ '@odata.context': Type.String(), value: Type.Array(Type.Object(MappingOut)) });
const Deleted = Type.Null({ description: 'Deleted' });

const entity = <T extends object>(context: string, value: T) => ({ '@odata.context': `${context}/$entity`, ...value });

/** The integration, and its fields and mappings as stored when the request listed either. */
function declaredEntity(declared: IntegrationDeclared, listed: { fields?: unknown; mappings?: unknown }) {
  const answer = entity(CONTEXT, declared.integration);
  if (listed.fields === undefined && listed.mappings === undefined) return answer;
  return {
    ...answer,
    fields: declared.fields.map(({ integrationSortingOrder: _, ...f }) => f),
    mappings: declared.mappings.map(({ integrationSortingOrder: _, ...m }) => m),
  };
}
const fieldsContext = (n: number) => `${API_BASE}/$metadata#integrations(${n})/fields`;
const mappingsContext = (n: number) => `${API_BASE}/$metadata#integrations(${n})/mappings`;

export function integrationRoutes(deps: { db: Database; clock: Clock }): RoutePlugin {
  const { db, clock } = deps;
  const integrationKey = (raw: string): number => requireKey(parseIntegerKey(raw), 'integration', raw);
  const fieldKey = (raw: string): number => requireKey(parseIntegerKey(raw), 'integration field', raw);

  async function loadIntegration(sortingOrder: number): Promise<Integration> {
    const integration = await getIntegration(db.kysely, sortingOrder);
    if (integration === undefined) throw notFound(`No integration with sortingOrder ${sortingOrder}.`);
    return integration;
  }

  return (app) => {
    // ---- integrations ----------------------------------------------------------------------
    const integrationResponses = { 200: IntegrationEntity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };
    const changeResponses = { ...integrationResponses, 200: IntegrationWithSets };

    app.get(
      SET,
      { config: { permission: 'read' }, schema: { summary: 'List integrations', tags, response: { 200: IntegrationList } } },
      async () => ({
        '@odata.context': CONTEXT,
        value: await listIntegrations(db.kysely),
      }),
    );

    app.get(
      `${SET}/:key`,
      {
        config: { permission: 'read' },
        schema: { summary: 'Read an integration', tags, params: KeyParams, response: integrationResponses },
      },
      async (request) => entity(CONTEXT, await loadIntegration(integrationKey(request.params.key))),
    );

    app.post(
      SET,
      {
        config: { permission: 'configure' },
        schema: {
          summary: 'Create an integration, optionally with its fields and mappings',
          description:
            'Defaults: type file, recordsPath "", acceptBulkImportRequests false, maxPayloadSizeKb null, writeMode insert, onRecordError fail. ' +
            '`fields` and `mappings` may be listed inline, as in the file `ifw apply` reads: all of it is created in one transaction, or nothing is, ' +
            'and the answer then lists them as stored. acceptBulkImportRequests true needs at least one mapping (400 otherwise).',
          tags,
          body: Type.Object({ ...IntegrationProperties, ...IntegrationSetsProperties }, ODATA_BODY),
          response: { ...changeResponses, 201: IntegrationWithSets },
        },
      },
      async (request, reply) => {
        const declared = await createIntegration(db, request.body, clock);
        return reply
          .status(201)
          .header('location', `${SET}(${declared.integration.sortingOrder})`)
          .send(declaredEntity(declared, request.body));
      },
    );

    app.patch(
      `${SET}/:key`,
      {
        config: { permission: 'configure' },
        schema: {
          summary: 'Change an integration; a fields or mappings list replaces that set',
          description:
            'Settings not sent keep their values. A `fields` list replaces the fields (the mappings of fields left out go with them); ' +
            'a `mappings` list replaces the mappings; each mapping names a field of the integration. One transaction, or nothing changes. ' +
            'Refused (400) when it would leave an integration that accepts bulk import requests without mappings.',
          tags,
          params: KeyParams,
          body: Type.Object({ ...IntegrationPatchSchema.properties, ...IntegrationSetsProperties }, ODATA_BODY),
          response: changeResponses,
        },
      },
      async (request) => declaredEntity(await updateIntegration(db, integrationKey(request.params.key), request.body, clock), request.body),
    );

    app.delete(
      `${SET}/:key`,
      {
        config: { permission: 'configure' },
        schema: {
          summary: 'Delete an integration with its fields and mappings',
          description: 'Refused with 409 while bulk import requests for it are Pending or Processing.',
          tags,
          params: KeyParams,
          response: { 204: Deleted, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteIntegration(db, integrationKey(request.params.key));
        return reply.status(204).send(null);
      },
    );

    // ---- fields ----------------------------------------------------------------------------
    const fieldResponses = { 200: FieldEntity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };

    app.get(
      `${SET}/:key/fields`,
      {
        config: { permission: 'read' },
        schema: { summary: 'List the fields of an integration', tags, params: KeyParams, response: { 200: FieldList, 404: ErrorSchema } },
      },
      async (request) => {
        const { sortingOrder } = await loadIntegration(integrationKey(request.params.key));
        return { '@odata.context': fieldsContext(sortingOrder), value: await listIntegrationFields(db.kysely, sortingOrder) };
      },
    );

    app.get(
      `${SET}/:key/fields/:fieldKey`,
      {
        config: { permission: 'read' },
        schema: { summary: 'Read an integration field', tags, params: FieldKeyParams, response: fieldResponses },
      },
      async (request) => {
        const { sortingOrder } = await loadIntegration(integrationKey(request.params.key));
        const fieldNo = fieldKey(request.params.fieldKey);
        const field: IntegrationField | undefined = await getIntegrationField(db.kysely, sortingOrder, fieldNo);
        if (field === undefined) throw notFound(`Integration ${sortingOrder} has no field ${fieldNo}.`);
        return entity(fieldsContext(sortingOrder), field);
      },
    );

    app.post(
      `${SET}/:key/fields`,
      {
        config: { permission: 'configure' },
        schema: {
          summary: 'Add a field to an integration',
          description: 'columnType standard (default) reads sourcePath from each record; constant gives every record constantValue.',
          tags,
          params: KeyParams,
          body: Type.Object(FieldProperties, ODATA_BODY),
          response: { ...fieldResponses, 201: FieldEntity },
        },
      },
      async (request, reply) => {
        const sortingOrder = integrationKey(request.params.key);
        const field = await createField(db, sortingOrder, request.body, clock);
        return reply
          .status(201)
          .header('location', `${SET}(${sortingOrder})/fields(${field.fieldNo})`)
          .send(entity(fieldsContext(sortingOrder), field));
      },
    );

    app.patch(
      `${SET}/:key/fields/:fieldKey`,
      {
        config: { permission: 'configure' },
        schema: {
          summary: 'Change an integration field',
          tags,
          params: FieldKeyParams,
          body: Type.Object(FieldPatchSchema.properties, ODATA_BODY),
          response: fieldResponses,
        },
      },
      async (request) => {
        const sortingOrder = integrationKey(request.params.key);
        const field = await updateField(db, sortingOrder, fieldKey(request.params.fieldKey), request.body, clock);
        return entity(fieldsContext(sortingOrder), field);
      },
    );

    app.delete(
      `${SET}/:key/fields/:fieldKey`,
      {
        config: { permission: 'configure' },
        schema: {
          summary: 'Delete an integration field and its mapping',
          description: 'Refused (400) when its mapping is the last one of an integration that accepts bulk import requests.',
          tags,
          params: FieldKeyParams,
          response: { 204: Deleted, 400: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteField(db, integrationKey(request.params.key), fieldKey(request.params.fieldKey), clock);
        return reply.status(204).send(null);
      },
    );

    // ---- mappings --------------------------------------------------------------------------
    const mappingResponses = { 200: MappingEntity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };

    app.get(
      `${SET}/:key/mappings`,
      {
        config: { permission: 'read' },
        schema: {
          summary: 'List the mappings of an integration',
          tags,
          params: KeyParams,
          response: { 200: MappingList, 404: ErrorSchema },
        },
      },
      async (request) => {
        const { sortingOrder } = await loadIntegration(integrationKey(request.params.key));
        return { '@odata.context': mappingsContext(sortingOrder), value: await listIntegrationMappings(db.kysely, sortingOrder) };
      },
    );

    app.get(
      `${SET}/:key/mappings/:fieldKey`,
      {
        config: { permission: 'read' },
        schema: { summary: 'Read the mapping of an integration field', tags, params: FieldKeyParams, response: mappingResponses },
      },
      async (request) => {
        const { sortingOrder } = await loadIntegration(integrationKey(request.params.key));
        const fieldNo = fieldKey(request.params.fieldKey);
        const mapping: IntegrationMapping | undefined = await getIntegrationMapping(db.kysely, sortingOrder, fieldNo);
        if (mapping === undefined) throw notFound(`Integration ${sortingOrder} has no mapping for field ${fieldNo}.`);
        return entity(mappingsContext(sortingOrder), mapping);
      },
    );

    app.post(
      `${SET}/:key/mappings`,
      {
        config: { permission: 'configure' },
        schema: {
          summary: 'Map an integration field to a field of the target table',
          tags,
          params: KeyParams,
          body: Type.Object(MappingProperties, ODATA_BODY),
          response: { ...mappingResponses, 201: MappingEntity },
        },
      },
      async (request, reply) => {
        const sortingOrder = integrationKey(request.params.key);
        const mapping = await createMapping(db, sortingOrder, request.body, clock);
        return reply
          .status(201)
          .header('location', `${SET}(${sortingOrder})/mappings(${mapping.fieldNo})`)
          .send(entity(mappingsContext(sortingOrder), mapping));
      },
    );

    app.patch(
      `${SET}/:key/mappings/:fieldKey`,
      {
        config: { permission: 'configure' },
        schema: {
          summary: 'Change a mapping',
          tags,
          params: FieldKeyParams,
          body: Type.Object(MappingPatchSchema.properties, ODATA_BODY),
          response: mappingResponses,
        },
      },
      async (request) => {
        const sortingOrder = integrationKey(request.params.key);
        const mapping = await updateMapping(db, sortingOrder, fieldKey(request.params.fieldKey), request.body, clock);
        return entity(mappingsContext(sortingOrder), mapping);
      },
    );

    app.delete(
      `${SET}/:key/mappings/:fieldKey`,
      {
        config: { permission: 'configure' },
        schema: {
          summary: 'Delete a mapping',
          description: 'Refused (400) when it is the last mapping of an integration that accepts bulk import requests.',
          tags,
          params: FieldKeyParams,
          response: { 204: Deleted, 400: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteMapping(db, integrationKey(request.params.key), fieldKey(request.params.fieldKey), clock);
        return reply.status(204).send(null);
      },
    );
  };
}
