/**
 * `targetTables`: declare, redeclare (PUT is idempotent: create, add fields, or nothing), read and
 * delete target tables. The rules live in `src/tables`; this file only speaks HTTP.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { badRequest, notFound } from '../core/errors.js';
import type { Database } from '../storage/database.js';
import type { TargetTable } from './model.js';
import { createTargetTable, declareTargetTable, deleteTargetTable } from './service.js';
import { getTargetTable, listTargetTables } from './store.js';
import { FieldRelationSchema, TargetTableProperties } from './validate.js';
import { API_BASE, parseStringKey, requireKey } from '../http/odata.js';
import type { RoutePlugin } from '../http/server.js';
import { ErrorSchema, KeyParams, ODATA_BODY } from '../http/schemas.js';

const SET = `${API_BASE}/targetTables`;
const CONTEXT = `${API_BASE}/$metadata#targetTables`;
const tags = ['Target tables'];

// Immutable arrays: the model's declarations are readonly.
const TableProperties = {
  name: Type.String(),
  primaryKey: Type.Immutable(Type.Array(Type.String())),
  fields: Type.Immutable(
    Type.Array(
      Type.Object({
        name: Type.String(),
        type: Type.String(),
        maxLength: Type.Optional(Type.Integer()),
        required: Type.Optional(Type.Boolean()),
        options: Type.Optional(Type.Immutable(Type.Array(Type.String()))),
        relation: Type.Optional(FieldRelationSchema),
      }),
    ),
  ),
};
const EntitySchema = Type.Object({ '@odata.context': Type.String(), ...TableProperties });
const ListSchema = Type.Object({ '@odata.context': Type.String(), value: Type.Array(Type.Object(TableProperties)) });
const DeclaredSchema = Type.Object({
  '@odata.context': Type.String(),
  ...TableProperties,
  change: Type.Object({
    result: Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('unchanged')]),
    addedFields: Type.Immutable(Type.Array(Type.String())),
  }),
});
const Deleted = Type.Null({ description: 'Deleted' });

const CreateBody = Type.Object(TargetTableProperties, ODATA_BODY);
const PutBody = Type.Object(
  { ...TargetTableProperties, name: Type.Optional(Type.String({ description: 'Must equal the key when given' })) },
  ODATA_BODY,
);

const entity = (table: TargetTable) => ({ '@odata.context': `${CONTEXT}/$entity`, ...table });

export function targetTableRoutes(deps: { db: Database; clock: Clock }): RoutePlugin {
  const { db, clock } = deps;
  const tableName = (raw: string): string => requireKey(parseStringKey(raw), 'target table', raw);

  return (app) => {
    app.get(
      SET,
      { config: { permission: 'read' }, schema: { summary: 'List target tables', tags, response: { 200: ListSchema } } },
      async () => ({ '@odata.context': CONTEXT, value: await listTargetTables(db.kysely) }),
    );

    app.get(
      `${SET}/:key`,
      {
        config: { permission: 'read' },
        schema: { summary: 'Read a target table declaration', tags, params: KeyParams, response: { 200: EntitySchema, 404: ErrorSchema } },
      },
      async (request) => {
        const name = tableName(request.params.key);
        const table = await getTargetTable(db.kysely, name);
        if (table === undefined) throw notFound(`No target table "${name}".`);
        return entity(table);
      },
    );

    app.post(
      SET,
      {
        config: { permission: 'configure' },
        schema: {
          summary: 'Declare a new target table',
          description: 'Creates the SQL table of the same name, one column per field. 409 when the table exists (use PUT to redeclare).',
          tags,
          body: CreateBody,
          response: { 201: EntitySchema, 400: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        const table = await createTargetTable(db, request.body, clock);
        return reply.status(201).header('location', `${SET}('${table.name}')`).send(entity(table));
      },
    );

    app.put(
      `${SET}/:key`,
      {
        config: { permission: 'configure' },
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
        const name = tableName(request.params.key);
        if (request.body.name !== undefined && request.body.name !== name) {
          throw badRequest('invalidRequest', `name: "${request.body.name}" differs from the key '${name}'; a table cannot be renamed.`);
        }
        const declared = await declareTargetTable(db, { ...request.body, name }, clock);
        return reply.status(declared.result === 'created' ? 201 : 200).send({
          ...entity(declared.table),
          change: { result: declared.result, addedFields: declared.addedFields },
        });
      },
    );

    app.delete(
      `${SET}/:key`,
      {
        config: { permission: 'configure' },
        schema: {
          summary: 'Delete a target table and its SQL table with all rows',
          description: 'Refused with 409 while an integration writes to it or another table relates to it.',
          tags,
          params: KeyParams,
          response: { 204: Deleted, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await deleteTargetTable(db, tableName(request.params.key));
        return reply.status(204).send(null);
      },
    );
  };
}
