/** `targetTables('<name>')/rows`: the rows imports wrote, paged like every list. */
import { Type } from 'typebox';
import { notFound } from '../core/errors.js';
import type { Database } from '../storage/database.js';
import { readTableRows } from './rows.js';
import { getTargetTable } from './store.js';
import { API_BASE, pageResult, parsePaging, parseStringKey, requireKey } from '../http/odata.js';
import type { RoutePlugin } from '../http/server.js';

export function targetTableRowRoutes(deps: { db: Database; maxPageSize: number }): RoutePlugin {
  return (app) => {
    app.get(
      `${API_BASE}/targetTables/:key/rows`,
      {
        config: { permission: 'read' },
        schema: {
          summary: 'Rows of a target table, ordered by primary key ($top, $skip, @odata.nextLink)',
          tags: ['Target tables'],
          params: Type.Object({ key: Type.String() }),
          querystring: Type.Object(
            { $top: Type.Optional(Type.String()), $skip: Type.Optional(Type.String()) },
            { additionalProperties: false },
          ),
        },
      },
      async (request) => {
        const name = requireKey(parseStringKey(request.params.key), 'target table', request.params.key);
        const table = await getTargetTable(deps.db.kysely, name);
        if (table === undefined) throw notFound(`No target table "${name}".`);
        const page = parsePaging(request.query, deps.maxPageSize);
        const rows = await readTableRows(deps.db.kysely, table, { skip: page.skip, limit: page.limit + 1 });
        const { value, nextLink } = pageResult(rows, page, new URL(request.url, `${request.protocol}://${request.host}`));
        return {
          '@odata.context': `${API_BASE}/$metadata#targetTables('${name}')/rows`,
          value,
          ...(nextLink !== undefined ? { '@odata.nextLink': nextLink } : {}),
        };
      },
    );
  };
}
