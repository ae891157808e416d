/** The console's Target tables: each table's fields and a paged view of its rows, filtered as the API filters them. */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../core/errors.js';
import type { ConsolePages } from '../console/console.js';
import { html, path } from '../console/html.js';
import { parseFilter } from '../http/odata.js';
import type { Database } from '../storage/database.js';
import { fieldMaxLength, isFieldRequired } from './model.js';
import { filterProperties } from './row-routes.js';
import { countTableRows, readTableRows } from './rows.js';
import { getTargetTable, listTargetTables } from './store.js';

const PAGE_SIZE = 50;

export function tablePages(db: Database): ConsolePages {
  const nameOf = (request: FastifyRequest) => (request.params as { name: string }).name;
  return (router) => {
    router.section({ label: 'Target Tables', href: '/tables', permission: 'read', order: 50 });

    router.get('/tables', 'read', async (_request, ctx) => {
      const tables = await listTargetTables(db.kysely);
      return ctx.page(
        'Target Tables',
        html`<table>
          <thead>
            <tr>
              <th scope="col">Table</th>
              <th scope="col">Fields</th>
              <th scope="col">Primary key</th>
            </tr>
          </thead>
          <tbody>
            ${tables.map(
              (t) =>
                html`<tr>
                  <td><a href="${path(['tables', t.name])}">${t.name}</a></td>
                  <td>${t.fields.map((f) => f.name).join(', ')}</td>
                  <td>${t.primaryKey.join(', ')}</td>
                </tr>`,
            )}
            ${
              tables.length === 0
                ? html`<tr>
                    <td colspan="3" class="muted">No target tables yet.</td>
                  </tr>`
                : ''
            }
          </tbody>
        </table>`,
      );
    });

    router.get('/tables/:name', 'read', async (request, ctx) => {
      const table = await getTargetTable(db.kysely, nameOf(request));
      if (table === undefined) throw new AppError(404, 'notFound', `No target table '${nameOf(request)}'.`);
      const q = request.query as { filter?: string; page?: string };
      const page = Math.max(1, Math.min(1_000_000, Number.parseInt(q.page ?? '1', 10) || 1));
      const filterText = (q.filter ?? '').trim();
      let error: string | undefined;
      let filter: ReturnType<typeof parseFilter> = [];
      try {
        filter = filterText === '' ? [] : parseFilter(filterText, filterProperties(table));
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        error = err.message;
      }
      const [rows, total] =
        error === undefined
          ? await Promise.all([
              readTableRows(db.kysely, table, { filter, orderBy: [], skip: (page - 1) * PAGE_SIZE, limit: PAGE_SIZE }),
              countTableRows(db.kysely, table, filter),
            ])
          : [[], 0];
      const names = table.fields.map((f) => f.name);
      const link = (p: number) => path(['tables', table.name], { filter: filterText, page: p === 1 ? undefined : p });
      return ctx.page(
        `Target table ${table.name}`,
        html`<h2>Fields</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">Type</th>
                <th scope="col">Max length</th>
                <th scope="col">Required</th>
                <th scope="col">Key</th>
                <th scope="col">Relation</th>
              </tr>
            </thead>
            <tbody>
              ${table.fields.map(
                (f) =>
                  html`<tr>
                    <td>${f.name}</td>
                    <td>${f.type}${f.options === undefined ? '' : ` (${f.options.join(', ')})`}</td>
                    <td>${fieldMaxLength(f) ?? '—'}</td>
                    <td>${isFieldRequired(table, f) ? 'Yes' : 'No'}</td>
                    <td>${table.primaryKey.includes(f.name) ? 'Yes' : ''}</td>
                    <td>${f.relation === undefined ? '' : `${f.relation.table}.${f.relation.field}`}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
          <h2>Rows (${total.toLocaleString('en')})</h2>
          <form class="filters" method="get" action="${path(['tables', table.name])}" role="search" aria-label="Filter rows">
            <div>
              <label for="f-filter">Filter</label
              ><input
                id="f-filter"
                name="filter"
                size="50"
                value="${filterText}"
                placeholder="city eq 'Oslo' and no ge 'C100'"
                aria-describedby="f-filter-hint"
              />
              <p class="hint" id="f-filter-hint">As the API's $filter: eq, ne, gt, ge, lt, le joined by "and"; text in single quotes.</p>
            </div>
            <button type="submit">Filter</button> <a href="${path(['tables', table.name])}">Clear</a>
          </form>
          ${error === undefined ? '' : html`<div class="flash error" role="alert">${error}</div>`}
          <table>
            <thead>
              <tr>
                ${names.map((n) => html`<th scope="col">${n}</th>`)}
              </tr>
            </thead>
            <tbody>
              ${rows.map(
                (r) =>
                  html`<tr>
                    ${names.map((n) => html`<td>${r[n] === null || r[n] === undefined ? html`<span class="muted">null</span>` : String(r[n] as string | number | boolean)}</td>`)}
                  </tr>`,
              )}
              ${
                rows.length === 0
                  ? html`<tr>
                      <td colspan="${names.length}" class="muted">No rows.</td>
                    </tr>`
                  : ''
              }
            </tbody>
          </table>
          <nav class="pager" aria-label="Pages">
            ${page > 1 ? html`<a href="${link(page - 1)}">Previous page</a>` : ''}
            <span>Page ${page} of ${Math.max(1, Math.ceil(total / PAGE_SIZE))}</span>
            ${page * PAGE_SIZE < total ? html`<a href="${link(page + 1)}" rel="next">Next page</a>` : ''}
          </nav>`,
      );
    });
  };
}
