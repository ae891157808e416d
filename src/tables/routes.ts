/**
 * `targetTables`: declare, redeclare (PUT is idempotent: create, add fields, or nothing), read and
 * delete target tables. The rules live in `src/tables`; this file only speaks HTTP.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { badRequest, notFound } from '../core/errors.js';
import type { Db } from '../storage/db.js';
import { createTargetTable, declareTargetTable, deleteTargetTable } from './service.js';
import { getTargetTable, listTargetTables } from './store.js';
import { FieldRelationSchema, TargetTableProperties } from './validate.js';
import { entitySet } from '../http/entity-set.js';
import type { RoutePlugin } from '../http/server.js';
import { Deleted, ErrorSchema, KeyParams, ODATA_BODY, Integer } from '../http/schemas.js';

const tags = ['Target tables'];

export const targetTables = entitySet({
  name: 'targetTables',
  key: 'name',
  keyType: 'string',
  noun: 'target table',
  // Immutable arrays: the model's declarations are readonly.
  item: Type.Object({
    name: Type.String(),
    primaryKey: Type.Immutable(Type.Array(Type.String())),
    fields: Type.Immutable(
      Type.Array(
        Type.Object({
          name: Type.String(),
          type: Type.String(),
          maxLength: Type.Optional(Integer()),
          required: Type.Optional(Type.Boolean()),
          options: Type.Optional(Type.Immutable(Type.Array(Type.String()))),
          relation: Type.Optional(FieldRelationSchema),
        }),
      ),
    ),
  }),
});
const DeclaredSchema = Type.Object({
  ...targetTables.Entity.properties,
  change: Type.Object({
    result: Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('unchanged')]),
    addedFields: Type.Immutable(Type.Array(Type.String())),
  }),
});
const CreateBody = Type.Object(TargetTableProperties, ODATA_BODY);
const PutBody = Type.Object(
  { ...TargetTableProperties, name: Type.Optional(Type.String({ description: 'Must equal the key when given' })) },
  ODATA_BODY,
);

export function targetTableRoutes(deps: { db: Db; clock: Clock }): RoutePlugin {
  const { db, clock } = deps;

  return (app) => {
    app.get(
      targetTables.path,
      { config: targetTables.config('read'), schema: { summary: 'List target tables', tags, response: { 200: targetTables.List } } },
      async () => targetTables.list(await listTargetTables(db)),
    );

    app.get(
      targetTables.itemPath,
      {
        config: targetTables.config('read'),
        schema: {
          summary: 'Read a target table declaration',
          tags,
          params: KeyParams,
          response: { 200: targetTables.Entity, 404: ErrorSchema },
        },
      },
      async (request) => {
        const name = targetTables.key(request.params.key);
        const table = await getTargetTable(db, name);
        if (table === undefined) throw notFound(`No target table "${name}".`);
        return targetTables.entity(table);
      },
    );

    app.post(
      targetTables.path,
      {
        config: targetTables.config('configure'),
        schema: {
          summary: 'Declare a new target table',
          description: 'Creates the SQL table of the same name, one column per field. 409 when the table exists (use PUT to redeclare).',
          tags,
          body: CreateBody,
          response: { 201: targetTables.Entity, 400: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        const table = await createTargetTable(db, request.body, clock);
        return reply.status(201).header('location', targetTables.url(table.name)).send(targetTables.entity(table));
      },
    );

    app.put(
      targetTables.itemPath,
      {
        config: targetTables.config('configure'),
        schema: {
          summary: 'Declare or redeclare a target table',
          description:
            'Idempotent: creates the table, adds new fields as columns, or changes nothing. Raising maxLength, adding option values and changing required are allowed; ' +
            'removing a field, changing a type, the primary key or a relation, shrinking maxLength or removing option values is refused with 409.',
          tags,
          params: KeyParams,
          body: PutBody,
          response: { 200: DeclaredSchema, 201: DeclaredSchema, 400: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        const name = targetTables.key(request.params.key);
        if (request.body.name !== undefined && request.body.name !== name) {
          throw badRequest('invalidRequest', `name: "${request.body.name}" differs from the key '${name}'; a table cannot be renamed.`);
        }
        const declared = await declareTargetTable(db, { ...request.body, name }, clock);
        return reply.status(declared.result === 'created' ? 201 : 200).send({
          ...targetTables.entity(declared.table),
          change: { result: declared.result, addedFields: declared.addedFields },
        });
      },
    );

    app.delete(
      targetTables.itemPath,
      {
        config: targetTables.config('configure'),
        schema: {
          summary: 'Delete a target table and its SQL table with all rows',
          description: 'Refused with 409 while an integration writes to it or another table relates to it.',
          tags,
          params: KeyParams,
          response: { 204: Deleted, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteTargetTable(db, targetTables.key(request.params.key));
        return reply.status(204).send(null);
      },
    );
  };
}
