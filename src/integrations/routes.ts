/**
 * `integrations(<sortingOrder>)` with their `fields(<fieldNo>)` and `mappings(<fieldNo>)`: OData-style
 * CRUD. POST and PATCH also take the fields and mappings inline, as `ifw apply` does. The rules live in
 * `src/integrations`; this file only speaks HTTP.
 */
import { INTEGRATION_EXAMPLES } from './body-examples.js';
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
import type { Db } from '../storage/db.js';
import { entitySet } from '../http/entity-set.js';
import type { RoutePlugin } from '../http/server.js';
import { Deleted, ErrorSchema, KeyParams, ODATA_BODY, Integer } from '../http/schemas.js';

const tags = ['Integrations'];

const integrations = entitySet({
  name: 'integrations',
  key: 'sortingOrder',
  keyType: 'integer',
  noun: 'integration',
  item: Type.Object({
    sortingOrder: Integer(),
    name: Type.String(),
    type: Type.String(),
    targetTable: Type.String(),
    recordsPath: Type.String(),
    acceptBulkImportRequests: Type.Boolean(),
    maxPayloadSizeKb: Type.Union([Integer(), Type.Null()]),
    writeMode: Type.String(),
    onRecordError: Type.String(),
  }),
});
const fields = integrations.containsMany({
  name: 'fields',
  key: 'fieldNo',
  keyType: 'integer',
  noun: 'integration field',
  keyParam: 'fieldKey',
  item: Type.Object({
    integrationSortingOrder: Integer(),
    fieldNo: Integer(),
    title: Type.String(),
    sourcePath: Type.String(),
    columnType: Type.String(),
    constantValue: Type.Union([Type.String(), Type.Null()]),
  }),
});
/** A mapping is the mapping of one field: keyed by the field's number, under the same route parameter and noun. */
const mappings = integrations.containsMany({
  name: 'mappings',
  key: 'fieldNo',
  keyType: 'integer',
  noun: 'integration field',
  keyParam: 'fieldKey',
  item: Type.Object({
    integrationSortingOrder: Integer(),
    fieldNo: Integer(),
    targetField: Type.String(),
    required: Type.Boolean(),
  }),
});

/** Inline fields and mappings are answered in the shape they are sent in, so an answer can be sent back as a PATCH. */
const InlineFieldOut = Type.Object({
  fieldNo: Integer(),
  title: Type.String(),
  sourcePath: Type.String(),
  columnType: Type.String(),
  constantValue: Type.Union([Type.String(), Type.Null()]),
});
const InlineMappingOut = Type.Object({ fieldNo: Integer(), targetField: Type.String(), required: Type.Boolean() });
const IntegrationWithSets = Type.Object({
  ...integrations.Entity.properties,
  fields: Type.Optional(Type.Array(InlineFieldOut, { description: 'Present when the request listed fields or mappings' })),
  mappings: Type.Optional(Type.Array(InlineMappingOut, { description: 'Present when the request listed fields or mappings' })),
});
/** The integration, and its fields and mappings as stored when the request listed either. */
function declaredEntity(declared: IntegrationDeclared, listed: { fields?: unknown; mappings?: unknown }) {
  const answer = integrations.entity(declared.integration);
  if (listed.fields === undefined && listed.mappings === undefined) return answer;
  return {
    ...answer,
    fields: declared.fields.map(({ integrationSortingOrder: _, ...f }) => f),
    mappings: declared.mappings.map(({ integrationSortingOrder: _, ...m }) => m),
  };
}

export function integrationRoutes(deps: { db: Db; clock: Clock }): RoutePlugin {
  const { db, clock } = deps;

  async function loadIntegration(sortingOrder: number): Promise<Integration> {
    const integration = await getIntegration(db, sortingOrder);
    if (integration === undefined) throw notFound(`No integration with sortingOrder ${sortingOrder}.`);
    return integration;
  }

  return (app) => {
    // ---- integrations ----------------------------------------------------------------------
    const integrationResponses = { 200: integrations.Entity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };
    const changeResponses = { ...integrationResponses, 200: IntegrationWithSets };

    app.get(
      integrations.path,
      { config: integrations.config('read'), schema: { summary: 'List integrations', tags, response: { 200: integrations.List } } },
      async () => integrations.list(await listIntegrations(db)),
    );

    app.get(
      integrations.itemPath,
      {
        config: integrations.config('read'),
        schema: { summary: 'Read an integration', tags, params: KeyParams, response: integrationResponses },
      },
      async (request) => integrations.entity(await loadIntegration(integrations.key(request.params.key))),
    );

    app.post(
      integrations.path,
      {
        config: { ...integrations.config('configure'), bodyExamples: INTEGRATION_EXAMPLES },
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
          .header('location', integrations.url(declared.integration.sortingOrder))
          .send(declaredEntity(declared, request.body));
      },
    );

    app.patch(
      integrations.itemPath,
      {
        config: integrations.config('configure'),
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
      async (request) =>
        declaredEntity(await updateIntegration(db, integrations.key(request.params.key), request.body, clock), request.body),
    );

    app.delete(
      integrations.itemPath,
      {
        config: integrations.config('configure'),
        schema: {
          summary: 'Delete an integration with its fields and mappings',
          description: 'Refused with 409 while bulk import requests for it are Pending or Processing.',
          tags,
          params: KeyParams,
          response: { 204: Deleted, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteIntegration(db, integrations.key(request.params.key));
        return reply.status(204).send(null);
      },
    );

    // ---- fields ----------------------------------------------------------------------------
    const fieldResponses = { 200: fields.Entity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };

    app.get(
      fields.path,
      {
        config: fields.config('read'),
        schema: {
          summary: 'List the fields of an integration',
          tags,
          params: KeyParams,
          response: { 200: fields.List, 404: ErrorSchema },
        },
      },
      async (request) => {
        const { sortingOrder } = await loadIntegration(integrations.key(request.params.key));
        return fields.list(sortingOrder, await listIntegrationFields(db, sortingOrder));
      },
    );

    app.get(
      fields.itemPath,
      {
        config: fields.config('read'),
        schema: { summary: 'Read an integration field', tags, params: fields.Params, response: fieldResponses },
      },
      async (request) => {
        const { sortingOrder } = await loadIntegration(integrations.key(request.params.key));
        const fieldNo = fields.key(request.params.fieldKey);
        const field: IntegrationField | undefined = await getIntegrationField(db, sortingOrder, fieldNo);
        if (field === undefined) throw notFound(`Integration ${sortingOrder} has no field ${fieldNo}.`);
        return fields.entity(sortingOrder, field);
      },
    );

    app.post(
      fields.path,
      {
        config: fields.config('configure'),
        schema: {
          summary: 'Add a field to an integration',
          description: 'columnType standard (default) reads sourcePath from each record; constant gives every record constantValue.',
          tags,
          params: KeyParams,
          body: Type.Object(FieldProperties, ODATA_BODY),
          response: { ...fieldResponses, 201: fields.Entity },
        },
      },
      async (request, reply) => {
        const sortingOrder = integrations.key(request.params.key);
        const field = await createField(db, sortingOrder, request.body, clock);
        return reply.status(201).header('location', fields.url(sortingOrder, field.fieldNo)).send(fields.entity(sortingOrder, field));
      },
    );

    app.patch(
      fields.itemPath,
      {
        config: fields.config('configure'),
        schema: {
          summary: 'Change an integration field',
          tags,
          params: fields.Params,
          body: Type.Object(FieldPatchSchema.properties, ODATA_BODY),
          response: fieldResponses,
        },
      },
      async (request) => {
        const sortingOrder = integrations.key(request.params.key);
        const field = await updateField(db, sortingOrder, fields.key(request.params.fieldKey), request.body, clock);
        return fields.entity(sortingOrder, field);
      },
    );

    app.delete(
      fields.itemPath,
      {
        config: fields.config('configure'),
        schema: {
          summary: 'Delete an integration field and its mapping',
          description: 'Refused (400) when its mapping is the last one of an integration that accepts bulk import requests.',
          tags,
          params: fields.Params,
          response: { 204: Deleted, 400: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteField(db, integrations.key(request.params.key), fields.key(request.params.fieldKey), clock);
        return reply.status(204).send(null);
      },
    );

    // ---- mappings --------------------------------------------------------------------------
    const mappingResponses = { 200: mappings.Entity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };

    app.get(
      mappings.path,
      {
        config: mappings.config('read'),
        schema: {
          summary: 'List the mappings of an integration',
          tags,
          params: KeyParams,
          response: { 200: mappings.List, 404: ErrorSchema },
        },
      },
      async (request) => {
        const { sortingOrder } = await loadIntegration(integrations.key(request.params.key));
        return mappings.list(sortingOrder, await listIntegrationMappings(db, sortingOrder));
      },
    );

    app.get(
      mappings.itemPath,
      {
        config: mappings.config('read'),
        schema: { summary: 'Read the mapping of an integration field', tags, params: mappings.Params, response: mappingResponses },
      },
      async (request) => {
        const { sortingOrder } = await loadIntegration(integrations.key(request.params.key));
        const fieldNo = mappings.key(request.params.fieldKey);
        const mapping: IntegrationMapping | undefined = await getIntegrationMapping(db, sortingOrder, fieldNo);
        if (mapping === undefined) throw notFound(`Integration ${sortingOrder} has no mapping for field ${fieldNo}.`);
        return mappings.entity(sortingOrder, mapping);
      },
    );

    app.post(
      mappings.path,
      {
        config: mappings.config('configure'),
        schema: {
          summary: 'Map an integration field to a field of the target table',
          tags,
          params: KeyParams,
          body: Type.Object(MappingProperties, ODATA_BODY),
          response: { ...mappingResponses, 201: mappings.Entity },
        },
      },
      async (request, reply) => {
        const sortingOrder = integrations.key(request.params.key);
        const mapping = await createMapping(db, sortingOrder, request.body, clock);
        return reply
          .status(201)
          .header('location', mappings.url(sortingOrder, mapping.fieldNo))
          .send(mappings.entity(sortingOrder, mapping));
      },
    );

    app.patch(
      mappings.itemPath,
      {
        config: mappings.config('configure'),
        schema: {
          summary: 'Change a mapping',
          tags,
          params: mappings.Params,
          body: Type.Object(MappingPatchSchema.properties, ODATA_BODY),
          response: mappingResponses,
        },
      },
      async (request) => {
        const sortingOrder = integrations.key(request.params.key);
        const mapping = await updateMapping(db, sortingOrder, mappings.key(request.params.fieldKey), request.body, clock);
        return mappings.entity(sortingOrder, mapping);
      },
    );

    app.delete(
      mappings.itemPath,
      {
        config: mappings.config('configure'),
        schema: {
          summary: 'Delete a mapping',
          description: 'Refused (400) when it is the last mapping of an integration that accepts bulk import requests.',
          tags,
          params: mappings.Params,
          response: { 204: Deleted, 400: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteMapping(db, integrations.key(request.params.key), mappings.key(request.params.fieldKey), clock);
        return reply.status(204).send(null);
      },
    );
  };
}
