/**
 * The console's Target tables: the list, a new table, a table's fields with its rows (paged, filtered
 * by column and value or with the API's `$filter`), and changing a table's fields: add a field, change
 * one where the API allows it, and see what a change would do, or the refusal it would meet, before
 * saving. The rules, the messages and the permission (`configure`) are the API's.
 */
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import { FormBody, FormText, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { field, formError, pager, table } from '../console/widgets.js';
import { parseFilter } from '../http/odata.js';
import type { Database } from '../storage/database.js';
import type { PlacedError } from './error-places.js';
import { fieldMaxLength, isFieldRequired, type TargetField, type TargetTable } from './model.js';
import { PLAIN_OPERATORS, plainFilter, type PlainFilterError } from './row-filter.js';
import { filterProperties } from './row-routes.js';
import { countTableRows, readTableRows, type TextMatch } from './rows.js';
import { createTargetTable, declareTargetTable, previewTargetTable, type TablePreview } from './service.js';
import { getTargetTable, listTargetTables } from './store.js';
import {
  blankRow,
  declarationOf,
  keptRows,
  placeDeclarationError,
  ROW_PATTERN,
  stateFromForm,
  stateFromTable,
  tableForm,
  type TableFormState,
} from './table-form.js';

const PAGE_SIZE = 50;
const RowsQuery = Type.Object({
  filter: Type.Optional(Type.String()),
  page: Type.Optional(Type.String()),
  column: Type.Optional(Type.String()),
  op: Type.Optional(Type.String()),
  value: Type.Optional(Type.String()),
});
const NameParams = { params: PathKey('name') };
const Action = Type.Optional(Type.Union([Type.Literal('add'), Type.Literal('check'), Type.Literal('save')]));
// Option values are one text per row: room for many of them (the form's byte limit still holds).
const RowFields = { pattern: ROW_PATTERN, value: FormText(64 * 1024) };
const NewTableBody = FormBody({ name: FormText(), action: Action }, RowFields);
const ChangeFieldsBody = FormBody({ action: Action }, RowFields);

export interface TablePagesDeps {
  readonly db: Database;
  readonly clock: Clock;
}

/** What saving the change would do, in words (Check changes). */
function outcome(preview: TablePreview): Html {
  const added = preview.table.fields.filter((f) => preview.addedFields.includes(f.name));
  const items = [
    ...added.map((f) => `Field "${f.name}" is added as a new ${f.required === true ? 'required' : 'optional'} column.`),
    ...preview.requiredChanges.map((c) => `Field "${c.field}" becomes ${c.required ? 'required' : 'optional'}.`),
    ...(preview.rebuild ? ['The table has rows and its NOT NULL constraints change, so it is copied into a new table.'] : []),
  ];
  const body =
    preview.result === 'unchanged'
      ? html`<p>Nothing would change: the fields are as stored.</p>`
      : html`<p>The change is allowed. Saving would do this:</p>
          <ul>
            ${items.map((i) => html`<li>${i}</li>`)}
            ${items.length === 0 ? html`<li>Only the declaration changes (a longer length, new option values); the rows stay as they are.</li>` : ''}
          </ul>`;
  return html`<section id="outcome" role="status" aria-labelledby="outcome-title">
    <h2 id="outcome-title">What saving would do</h2>
    ${body}
  </section>`;
}

/** A refusal from the rules (4xx) as the message it carries; anything else is not the user's. */
function refusal(err: unknown): string {
  if (err instanceof AppError && err.status < 500) return err.message;
  throw err;
}

export function tablePages(deps: TablePagesDeps): ConsolePages {
  const { db, clock } = deps;

  async function newTablePage(ctx: ConsoleContext, state: TableFormState, error?: PlacedError, focus?: string): Promise<Html> {
    const tables = await listTargetTables(db);
    return ctx.page(
      'New target table',
      tableForm({
        action: '/tables/new',
        csrfToken: ctx.csrfToken,
        isNew: true,
        state,
        tableNames: tables.map((t) => t.name),
        ...(error === undefined ? {} : { error }),
        ...(focus === undefined ? {} : { focus }),
      }),
    );
  }

  async function fieldsPage(
    ctx: ConsoleContext,
    target: TargetTable,
    state: TableFormState,
    more: { error?: PlacedError; outcome?: Html; focus?: string } = {},
  ): Promise<Html> {
    const tables = await listTargetTables(db);
    return ctx.page(
      `Fields of ${target.name}`,
      html`<p><a href="${path(['tables', target.name])}">Back to table ${target.name}</a></p>
        <p class="hint">
          New fields add columns. An existing field may get a longer length, more option values, or change required; renaming, removing,
          changing a type, the primary key or a relation, a shorter length or fewer option values are refused, as the API refuses them.
          Check changes shows what saving would do, or why it would be refused, without saving.
        </p>
        ${tableForm({
          action: path(['tables', target.name, 'fields']),
          csrfToken: ctx.csrfToken,
          isNew: false,
          state,
          tableNames: tables.map((t) => t.name),
          ...more,
        })}`,
    );
  }

  async function tableOf(name: string): Promise<TargetTable> {
    const target = await getTargetTable(db, name);
    if (target === undefined) throw new AppError(404, 'notFound', `No target table '${name}'.`);
    return target;
  }

  /** The form again with one more row, without those ticked Remove: focus on the new row. */
  const withNewRow = (state: TableFormState): [TableFormState, string] => {
    const kept = keptRows(state);
    return [{ ...kept, rows: [...kept.rows, blankRow()] }, `fields.${kept.rows.length}.name`];
  };

  return (router) => {
    router.section({ label: 'Target Tables', href: '/tables', permission: 'read', order: 50 });

    router.get('/tables', 'read', async (_request, ctx) => {
      const tables = await listTargetTables(db);
      return ctx.page(
        'Target Tables',
        html`${ctx.can('configure') ? html`<p><a class="button" href="/tables/new">New target table</a></p>` : ''}
        ${table({
          rows: tables,
          empty: 'No target tables yet.',
          columns: [
            { header: 'Table', cell: (t) => html`<a href="${path(['tables', t.name])}">${t.name}</a>` },
            { header: 'Fields', cell: (t) => t.fields.map((f) => f.name).join(', ') },
            { header: 'Primary key', cell: (t) => t.primaryKey.join(', ') },
          ],
        })}`,
      );
    });

    router.get('/tables/new', 'configure', async (_request, ctx) =>
      newTablePage(ctx, { name: '', rows: [blankRow(), blankRow(), blankRow()] }, undefined, 'name'),
    );

    router.post(
      '/tables/new',
      'configure',
      async (request, ctx, form) => {
        const state = stateFromForm(form, request.body.name);
        if (request.body.action === 'add') {
          const [next, focus] = withNewRow(state);
          return newTablePage(ctx, next, undefined, focus);
        }
        const declaration = declarationOf(state, await listTargetTables(db));
        if ('refused' in declaration) return newTablePage(ctx, state, declaration.refused);
        try {
          await createTargetTable(db, declaration.input, clock);
        } catch (err) {
          const placed = placeDeclarationError(refusal(err), declaration);
          // "already exists", which names no path, is about the name.
          const error =
            placed.input === undefined && placed.group === undefined ? { input: 'name', text: `Table name: ${placed.text}` } : placed;
          return newTablePage(ctx, state, error);
        }
        const name = declaration.input.name;
        return redirect(path(['tables', name]), { kind: 'info', text: `Target table ${name} created.` });
      },
      { body: NewTableBody },
    );

    router.get(
      '/tables/:name/fields',
      'configure',
      async (request, ctx) => {
        const target = await tableOf(request.params.name);
        const [state, focus] = withNewRow(stateFromTable(target));
        return fieldsPage(ctx, target, state, { focus });
      },
      NameParams,
    );

    router.post(
      '/tables/:name/fields',
      'configure',
      async (request, ctx, form) => {
        const target = await tableOf(request.params.name);
        const state = stateFromForm(form, target.name);
        if (request.body.action === 'add') {
          const [next, focus] = withNewRow(state);
          return fieldsPage(ctx, target, next, { focus });
        }
        const declaration = declarationOf(state, await listTargetTables(db), target.primaryKey);
        if ('refused' in declaration) return fieldsPage(ctx, target, state, { error: declaration.refused });
        if (request.body.action === 'check') {
          try {
            return await fieldsPage(ctx, target, state, { outcome: outcome(await previewTargetTable(db, declaration.input)) });
          } catch (err) {
            return fieldsPage(ctx, target, state, { error: placeDeclarationError(refusal(err), declaration) });
          }
        }
        let declared: Awaited<ReturnType<typeof declareTargetTable>>;
        try {
          declared = await declareTargetTable(db, declaration.input, clock);
        } catch (err) {
          return fieldsPage(ctx, target, state, { error: placeDeclarationError(refusal(err), declaration) });
        }
        const added = declared.addedFields;
        const text =
          declared.result === 'unchanged'
            ? `Target table ${target.name}: nothing changed, the fields are as stored.`
            : added.length === 0
              ? `Target table ${target.name} saved.`
              : `Target table ${target.name} saved; added ${added.join(', ')}.`;
        return redirect(path(['tables', target.name]), { kind: 'info', text });
      },
      { ...NameParams, body: ChangeFieldsBody },
    );

    router.get(
      '/tables/:name',
      'read',
      async (request, ctx) => {
        const target = await tableOf(request.params.name);
        const q = request.query;
        const page = Math.max(1, Math.min(1_000_000, Number.parseInt(q.page ?? '1', 10) || 1));
        const filterText = (q.filter ?? '').trim();
        let error: string | undefined;
        let filter: ReturnType<typeof parseFilter> = [];
        try {
          filter = filterText === '' ? [] : parseFilter(filterText, filterProperties(target));
        } catch (err) {
          error = refusal(err);
        }
        const plain = plainFilter(target, q);
        const plainError: PlainFilterError | undefined = 'input' in plain ? plain : undefined;
        const clauses = 'input' in plain ? [] : plain.clauses;
        const text: readonly TextMatch[] = 'input' in plain ? [] : plain.text;
        const refused = error !== undefined || plainError !== undefined;
        const [rows, total] = refused
          ? [[], 0]
          : await Promise.all([
              readTableRows(db, target, {
                filter: [...filter, ...clauses],
                text,
                orderBy: [],
                skip: (page - 1) * PAGE_SIZE,
                limit: PAGE_SIZE,
              }),
              countTableRows(db, target, [...filter, ...clauses], text),
            ]);
        const query = {
          column: q.column,
          op: q.column === undefined || q.column === '' ? undefined : q.op,
          value: q.value,
          filter: filterText,
        };
        const link = (p: number) => path(['tables', target.name], { ...query, page: p === 1 ? undefined : p });
        const plainAt = (input: PlainFilterError['input']) => (plainError?.input === input ? { error: plainError.message } : {});
        return ctx.page(
          `Target table ${target.name}`,
          html`<h2>Fields</h2>
            ${
              ctx.can('configure')
                ? html`<p><a class="button" href="${path(['tables', target.name, 'fields'])}">Add a field or change fields</a></p>`
                : ''
            }
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
                kind: 'select',
                name: 'column',
                id: 'f-column',
                label: 'Column',
                options: target.fields.map((f) => [f.name, `${f.name} (${f.type})`] as const),
                value: q.column,
                blank: 'Any',
                className: '',
                ...plainAt('column'),
              })}
              ${field({
                kind: 'select',
                name: 'op',
                id: 'f-op',
                label: 'Operator',
                options: PLAIN_OPERATORS,
                value: q.op ?? 'eq',
                className: '',
                ...plainAt('op'),
              })}
              ${field({ name: 'value', id: 'f-value', label: 'Value', value: q.value, className: '', ...plainAt('value') })}
              ${field({
                name: 'filter',
                id: 'f-filter',
                label: 'Filter',
                value: filterText,
                size: 40,
                placeholder: "city eq 'Oslo' and no ge 'C100'",
                help: 'Optional, as the API\'s $filter: eq, ne, gt, ge, lt, le joined by "and"; text in single quotes.',
                className: '',
                ...(error === undefined ? {} : { error }),
              })}
              <button type="submit">Filter</button> <a href="${path(['tables', target.name])}">Clear</a>
            </form>
            <p class="hint">
              Contains and starts with compare text as typed, capitals included; greater and less than compare numbers and dates. Both
              filters apply together.
            </p>
            ${formError(plainError?.message ?? error)}
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
      { ...NameParams, query: RowsQuery },
    );
  };
}
