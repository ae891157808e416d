/** The console's Target tables: each table's fields and a paged view of its rows, filtered as the API filters them. */
import { Type } from 'typebox';
import { AppError } from '../core/errors.js';
import { PathKey, type ConsolePages } from '../console/console.js';
import { html, path } from '../console/html.js';
import { field, formError, pager, table } from '../console/widgets.js';
import { parseFilter } from '../http/odata.js';
import type { Database } from '../storage/database.js';
import { fieldMaxLength, isFieldRequired, type TargetField } from './model.js';
import { filterProperties } from './row-routes.js';
import { countTableRows, readTableRows } from './rows.js';
import { getTargetTable, listTargetTables } from './store.js';

const PAGE_SIZE = 50;
const RowsQuery = Type.Object({ filter: Type.Optional(Type.String()), page: Type.Optional(Type.String()) });

export function tablePages(db: Database): ConsolePages {
  return (router) => {
    router.section({ label: 'Target Tables', href: '/tables', permission: 'read', order: 50 });

    router.get('/tables', 'read', async (_request, ctx) => {
      const tables = await listTargetTables(db.kysely);
      return ctx.page(
        'Target Tables',
        table({
          rows: tables,
          empty: 'No target tables yet.',
          columns: [
            { header: 'Table', cell: (t) => html`<a href="${path(['tables', t.name])}">${t.name}</a>` },
            { header: 'Fields', cell: (t) => t.fields.map((f) => f.name).join(', ') },
            { header: 'Primary key', cell: (t) => t.primaryKey.join(', ') },
          ],
        }),
      );
    });

    router.get(
      '/tables/:name',
      'read',
      async (request, ctx) => {
        const { name } = request.params;
        const target = await getTargetTable(db.kysely, name);
        if (target === undefined) throw new AppError(404, 'notFound', `No target table '${name}'.`);
        const q = request.query;
        const page = Math.max(1, Math.min(1_000_000, Number.parseInt(q.page ?? '1', 10) || 1));
        const filterText = (q.filter ?? '').trim();
        let error: string | undefined;
        let filter: ReturnType<typeof parseFilter> = [];
        try {
          filter = filterText === '' ? [] : parseFilter(filterText, filterProperties(target));
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          error = err.message;
        }
        const [rows, total] =
          error === undefined
            ? await Promise.all([
                readTableRows(db.kysely, target, { filter, orderBy: [], skip: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE }),
                countTableRows(db.kysely, target, filter),
              ])
            : [[], 0];
        const link = (p: number) => path(['tables', target.name], { filter: filterText, page: p === 1 ? undefined : p });
        return ctx.page(
          `Target table ${target.name}`,
          html`<h2>Fields</h2>
            ${table<TargetField>({
              rows: target.fields,
              columns: [
                { header: 'Field', cell: (f) => f.name },
                { header: 'Type', cell: (f) => `${f.type}${f.options === undefined ? '' : ` (${f.options.join(', ')})`}` },
                { header: 'Max length', cell: (f) => fieldMaxLength(f) ?? '—' },
                { header: 'Required', cell: (f) => (isFieldRequired(target, f) ? 'Yes' : 'No') },
                { header: 'Key', cell: (f) => (target.primaryKey.includes(f.name) ? 'Yes' : '') },
                { header: 'Relation', cell: (f) => (f.relation === undefined ? '' : `${f.relation.table}.${f.relation.field}`) },
              ],
            })}
            <h2>Rows (${total.toLocaleString('en')})</h2>
            <form class="filters" method="get" action="${path(['tables', target.name])}" role="search" aria-label="Filter rows">
              ${field({
                name: 'filter',
                id: 'f-filter',
                label: 'Filter',
                value: filterText,
                size: 50,
                placeholder: "city eq 'Oslo' and no ge 'C100'",
                help: 'As the API\'s $filter: eq, ne, gt, ge, lt, le joined by "and"; text in single quotes.',
                className: '',
              })}
              <button type="submit">Filter</button> <a href="${path(['tables', target.name])}">Clear</a>
            </form>
            ${formError(error)}
            ${table({
              rows,
              empty: 'No rows.',
              columns: target.fields.map((f) => ({
                header: f.name,
                cell: (r: (typeof rows)[number]) =>
                  r[f.name] === null || r[f.name] === undefined ? html`<span class="muted">null</span>` : String(r[f.name]),
              })),
            })}
            ${pager({
              ...(page > 1 ? { previous: { href: link(page - 1), label: 'Previous page' } } : {}),
              position: `Page ${page} of ${Math.max(1, Math.ceil(total / PAGE_SIZE))}`,
              ...(page * PAGE_SIZE < total ? { next: { href: link(page + 1), label: 'Next page' } } : {}),
            })}`,
        );
      },
      { params: PathKey('name'), query: RowsQuery },
    );
  };
}
