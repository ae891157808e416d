/**
 * `targetTables('<name>')/rows`: the rows imports wrote, as a list like every other: `$filter` on the
 * declared fields, `$orderby` (the primary key by default and always last), `$top` / `$skip` with
 * `@odata.nextLink`, `$count=true`.
 */
import { Type } from 'typebox';
import { notFound } from '../core/errors.js';
import type { Database } from '../storage/database.js';
import { countTableRows, readTableRows } from './rows.js';
import { getTargetTable } from './store.js';
import type { FieldType, TargetTable } from './model.js';
import {
  API_BASE,
  pageResult,
  parseCount,
  parseFilter,
  parseOrderBy,
  parsePaging,
  parseStringKey,
  requestedUrl,
  requireKey,
  type FilterPropertyType,
} from '../http/odata.js';
import type { RoutePlugin } from '../http/server.js';

const ErrorSchema = Type.Object({ error: Type.Object({ code: Type.String(), message: Type.String() }) });

/** How each field type is written in `$filter`; the values are compared in the form imports store. */
const FILTER_TYPES: Readonly<Record<Exclude<FieldType, 'option'>, FilterPropertyType>> = {
  text: 'string',
  code: 'string',
  guid: 'guid',
  integer: 'integer',
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

const RowSchema = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      "One property per field of the table's declaration (GET targetTables('<name>') lists them), named as the field: " +
      'text, code, option, guid, date (YYYY-MM-DD) and datetime (ISO 8601 UTC) as strings, integer and decimal as numbers, ' +
      'boolean as true or false; null where a row has no value.',
  },
);

const RowsSchema = Type.Object({
  '@odata.context': Type.String(),
  '@odata.count': Type.Optional(Type.Integer({ description: 'With $count=true: the rows matching $filter, on all pages' })),
  value: Type.Array(RowSchema),
  '@odata.nextLink': Type.Optional(Type.String()),
});

export function targetTableRowRoutes(deps: { db: Database; maxPageSize: number }): RoutePlugin {
  return (app) => {
    app.get(
      `${API_BASE}/targetTables/:key/rows`,
      {
        config: { permission: 'read' },
        schema: {
          summary: 'Rows of a target table',
          description:
            '$filter on the declared fields (eq, ne, gt, ge, lt, le joined by "and"; strings quoted, ' +
            "e.g. city eq 'Lyon' and since ge 2026-01-01); $orderby=<field> [asc|desc], comma-separated, the primary key " +
            `always last (the default order); $top, $skip; $count=true adds @odata.count. At most ${deps.maxPageSize} rows ` +
            'per answer; more through @odata.nextLink.',
          tags: ['Target tables'],
          params: Type.Object({ key: Type.String() }),
          querystring: Type.Object(
            {
              $filter: Type.Optional(Type.String()),
              $orderby: Type.Optional(Type.String()),
              $top: Type.Optional(Type.String()),
              $skip: Type.Optional(Type.String()),
              $count: Type.Optional(Type.String()),
            },
            { additionalProperties: false },
          ),
          response: { 200: RowsSchema, 400: ErrorSchema, 404: ErrorSchema },
        },
        // Rows are open objects, and OData wants @odata.count before value: JSON.stringify keeps the
        // order written below, where the compiled serializer would put required properties first.
        serializerCompiler: () => (data) => JSON.stringify(data),
      },
      async (request) => {
        const name = requireKey(parseStringKey(request.params.key), 'target table', request.params.key);
        const table = await getTargetTable(deps.db.kysely, name);
        if (table === undefined) throw notFound(`No target table "${name}".`);
        const filter = parseFilter(request.query.$filter, filterProperties(table));
        const orderBy = parseOrderBy(
          request.query.$orderby,
          table.fields.map((f) => f.name),
        ).map((o) => ({ field: o.property, descending: o.descending }));
        const count = parseCount(request.query.$count);
        const page = parsePaging(request.query, deps.maxPageSize);
        const db = deps.db.kysely;
        const rows = await readTableRows(db, table, { filter, orderBy, skip: page.skip, limit: page.limit + 1 });
        // The URL as the caller wrote it (`targetTables('x')`), not as routing rewrote it.
        const { value, nextLink } = pageResult(rows, page, requestedUrl(request));
        return {
          '@odata.context': `${API_BASE}/$metadata#targetTables('${name.replace(/'/g, "''")}')/rows`,
          ...(count ? { '@odata.count': await countTableRows(db, table, filter) } : {}),
          value,
          ...(nextLink !== undefined ? { '@odata.nextLink': nextLink } : {}),
        };
      },
    );
  };
}
