/**
 * `targetTables('<name>')/rows`: the rows imports wrote, as a list like every other: `$filter` on the
 * declared fields, `$orderby` (the primary key by default and always last), `$top` / `$skip` with
 * `@odata.nextLink`, `$count=true`.
 */
import { Type } from 'typebox';
import { notFound } from '../core/errors.js';
import type { Db } from '../storage/db.js';
import { countTableRows, readTableRows } from './rows.js';
import { getTargetTable } from './store.js';
import type { FieldType, TargetTable } from './model.js';
import type { FilterPropertyType } from '../http/odata.js';
import type { RoutePlugin } from '../http/server.js';
import { ErrorSchema, KeyParams } from '../http/schemas.js';
import { targetTables } from './routes.js';

/** How each field type is written in `$filter`; the values are compared in the form imports store. */
const FILTER_TYPES: Readonly<Record<Exclude<FieldType, 'option'>, FilterPropertyType>> = {
  text: 'string',
  code: 'string',
  guid: 'guid',
  integer: 'bigint',
  decimal: 'number',
  boolean: 'boolean',
  date: 'date',
  datetime: 'datetime',
};

export function filterProperties(table: TargetTable): Record<string, FilterPropertyType> {
  return Object.fromEntries(
    table.fields.map((f) => [f.name, f.type === 'option' ? { oneOf: f.options ?? [] } : FILTER_TYPES[f.type]] as const),
  );
}

/** Open items without a key of their own: each table has its own columns and primary key. */
const rows = targetTables.containsMany({
  name: 'rows',
  key: null,
  item: Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        "One property per field of the table's declaration (GET targetTables('<name>') lists them), named as the field: " +
        'text, code, option, guid, date (YYYY-MM-DD) and datetime (ISO 8601 UTC) as strings, integer and decimal as numbers, ' +
        'boolean as true or false; null where a row has no value.',
    },
  ),
  listOptions: ['$filter', '$orderby', '$top', '$skip', '$count'],
});

export function targetTableRowRoutes(deps: { db: Db; maxPageSize: number }): RoutePlugin {
  return (app) => {
    app.get(
      rows.path,
      {
        config: rows.config('read'),
        schema: {
          summary: 'Rows of a target table',
          description:
            '$filter on the declared fields (eq, ne, gt, ge, lt, le joined by "and"; strings quoted, ' +
            "e.g. city eq 'Lyon' and since ge 2026-01-01); $orderby=<field> [asc|desc], comma-separated, the primary key " +
            `always last (the default order); $top, $skip; $count=true adds @odata.count. At most ${deps.maxPageSize} rows ` +
            'per answer; more through @odata.nextLink.',
          tags: ['Target tables'],
          params: KeyParams,
          querystring: rows.ListQuery,
          response: { 200: rows.List, 400: ErrorSchema, 404: ErrorSchema },
        },
        // Rows are open objects, and OData wants @odata.count before value: JSON.stringify keeps the
        // order written below, where the compiled serializer would put required properties first.
        serializerCompiler: () => (data) => JSON.stringify(data),
      },
      async (request) => {
        const name = targetTables.key(request.params.key);
        const db = deps.db;
        const table = await getTargetTable(db, name);
        if (table === undefined) throw notFound(`No target table "${name}".`);
        return rows.page(request, name, {
          maxPageSize: deps.maxPageSize,
          filter: filterProperties(table),
          orderBy: { among: table.fields.map((f) => f.name) },
          rows: ({ filter, orderBy, skip, limit }) =>
            readTableRows(db, table, {
              filter,
              orderBy: orderBy.map((o) => ({ field: o.property, descending: o.descending })),
              skip,
              limit,
            }),
          count: (filter) => countTableRows(db, table, filter),
        });
      },
    );
  };
}
