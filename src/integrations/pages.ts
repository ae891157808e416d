/**
 * The console's Integrations: the list, a new integration, and the card: its settings, the Bulk Import
 * section (Accept Bulk Import Requests, Max Payload Size (KB)), write mode, on-record-error, and its
 * fields and mappings edited on the card and saved together under the API's rules and messages.
 */
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';
import { sortingOrderOf, formInteger, PathKey, redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { control, field, fields as fieldList, formError, table, type Column, type Input } from '../console/widgets.js';
import type { Database } from '../storage/database.js';
import { listTargetTables } from '../tables/store.js';
import { COLUMN_TYPES, INTEGRATION_TYPES, ON_RECORD_ERROR, WRITE_MODES, type Integration } from './model.js';
import { createIntegration, updateIntegration, type IntegrationChange } from './service.js';
import { getIntegrationPlan, listIntegrations } from './store.js';

export interface IntegrationPagesDeps {
  readonly db: Database;
  readonly clock: Clock;
}

/** The card as shown: from the database, or as the user sent it when it was refused. */
interface CardState {
  readonly settings: Record<string, string>;
  readonly fields: Record<string, string>[];
  readonly mappings: Record<string, string>[];
}

const BLANK_ROWS = 2;
const NoParams = { params: PathKey('no') };
const blankRow = (): Record<string, string> => ({});

function stateOf(integration: Integration, fields: CardState['fields'], mappings: CardState['mappings']): CardState {
  return {
    settings: {
      name: integration.name,
      type: integration.type,
      targetTable: integration.targetTable,
      recordsPath: integration.recordsPath,
      acceptBulkImportRequests: integration.acceptBulkImportRequests ? 'on' : '',
      maxPayloadSizeKb: integration.maxPayloadSizeKb === null ? '' : String(integration.maxPayloadSizeKb),
      writeMode: integration.writeMode,
      onRecordError: integration.onRecordError,
    },
    fields,
    mappings,
  };
}

/** Rows of a repeated group in the form: `field.0.title`, `field.1.title`, … */
function rowsOf(form: URLSearchParams, group: string, names: readonly string[]): Record<string, string>[] {
  const rows: Record<string, string>[] = [];
  for (let i = 0; i < 1000; i++) {
    if (!form.has(`${group}.${i}.fieldNo`)) break;
    const row: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const name of names) row[name] = form.get(`${group}.${i}.${name}`) ?? '';
    rows.push(row);
  }
  return rows;
}

/** The change the card's form asks for; rows marked for removal, and blank rows, are left out. */
function changeFrom(state: CardState): IntegrationChange {
  const s = state.settings;
  const kept = (rows: Record<string, string>[]) => rows.filter((r) => r.remove !== 'on' && (r.fieldNo ?? '').trim() !== '');
  return {
    name: s.name ?? '',
    type: s.type ?? '',
    recordsPath: s.recordsPath ?? '',
    acceptBulkImportRequests: s.acceptBulkImportRequests === 'on',
    maxPayloadSizeKb: (s.maxPayloadSizeKb ?? '').trim() === '' ? null : formInteger(s.maxPayloadSizeKb ?? '', 'Max Payload Size (KB)'),
    writeMode: s.writeMode ?? '',
    onRecordError: s.onRecordError ?? '',
    fields: kept(state.fields).map((f) => ({
      fieldNo: formInteger(f.fieldNo ?? '', 'A field number'),
      title: f.title ?? '',
      sourcePath: f.sourcePath ?? '',
      columnType: f.columnType ?? 'standard',
      constantValue: (f.columnType ?? '') === 'constant' ? (f.constantValue ?? '') : null,
    })),
    mappings: kept(state.mappings).map((m) => ({
      fieldNo: formInteger(m.fieldNo ?? '', 'A mapping field number'),
      targetField: m.targetField ?? '',
      required: m.required === 'on',
    })),
  };
}

type Row = Record<string, string>;

/** A cell's control in a row of the fields or mappings table, named by its column and row for screen readers. */
const cell = (input: Input, label: string, i: number): Html => control(input, { ariaLabel: `${label} (row ${i + 1})` });

function card(no: number, state: CardState, targetFields: readonly string[], ctx: ConsoleContext, error?: string): Html {
  const s = state.settings;
  const editable = ctx.can('configure');
  const disabled = !editable;
  const fieldRows = [...state.fields, ...(editable ? Array.from({ length: BLANK_ROWS }, blankRow) : [])];
  const mappingRows = [...state.mappings, ...(editable ? Array.from({ length: BLANK_ROWS }, blankRow) : [])];
  const remove = (group: string, noun: string): Column<Row> => ({
    header: 'Remove',
    show: editable,
    cell: (r, i) =>
      control({ kind: 'checkbox', name: `${group}.${i}.remove`, checked: r.remove === 'on' }, { ariaLabel: `Remove ${noun} row ${i + 1}` }),
  });
  return html`${formError(error)}
    <form method="post" action="${path(['integrations', no])}" class="card-form">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      <fieldset>
        <legend>General</legend>
        ${fieldList([
          ['Sorting Order', String(no)],
          ['Target table', html`<a href="${path(['tables', s.targetTable ?? ''])}">${s.targetTable}</a>`],
        ])}
        ${field({ name: 'name', label: 'Name', value: s.name, required: true, disabled })}
        ${field({
          kind: 'select',
          name: 'type',
          label: 'Type',
          options: INTEGRATION_TYPES,
          value: s.type,
          disabled,
          help: 'A label: where the records come from. Any integration can receive bulk import requests and be fed by a REST endpoint.',
        })}
        ${field({
          name: 'recordsPath',
          label: 'Records path',
          value: s.recordsPath,
          disabled,
          help: 'Where the record array sits in a payload (dot path or JSONPath). Blank: the payload itself is the array.',
        })}
        ${field({
          kind: 'select',
          name: 'writeMode',
          label: 'Write mode',
          options: WRITE_MODES,
          value: s.writeMode,
          disabled,
          help: 'insert: new rows only; update: existing rows by primary key; upsert: both.',
        })}
        ${field({
          kind: 'select',
          name: 'onRecordError',
          label: 'On record error',
          options: ON_RECORD_ERROR,
          value: s.onRecordError,
          disabled,
          help: 'fail: one bad record fails the whole request and nothing is written; skip: bad records are skipped and reported.',
        })}
      </fieldset>
      <fieldset>
        <legend>Bulk Import</legend>
        ${field({
          kind: 'checkbox',
          name: 'acceptBulkImportRequests',
          label: 'Accept Bulk Import Requests',
          checked: s.acceptBulkImportRequests === 'on',
          disabled,
          help: 'When off, submissions for this integration are refused with 400. Needs at least one mapping.',
        })}
        ${field({
          kind: 'number',
          name: 'maxPayloadSizeKb',
          label: 'Max Payload Size (KB)',
          min: 1,
          value: s.maxPayloadSizeKb,
          disabled,
          help: "Larger payloads are refused with 413. Blank: only the service's body limit applies.",
        })}
      </fieldset>
      <h2>Fields</h2>
      ${table<Row>({
        rows: fieldRows,
        columns: [
          {
            header: 'Field No.',
            cell: (f, i) => cell({ kind: 'number', name: `field.${i}.fieldNo`, value: f.fieldNo, size: 4, disabled }, 'Field No.', i),
          },
          { header: 'Title', cell: (f, i) => cell({ name: `field.${i}.title`, value: f.title, disabled }, 'Title', i) },
          {
            header: 'Source path',
            cell: (f, i) => cell({ name: `field.${i}.sourcePath`, value: f.sourcePath, disabled }, 'Source path', i),
          },
          {
            header: 'Column type',
            cell: (f, i) =>
              cell(
                { kind: 'select', name: `field.${i}.columnType`, options: COLUMN_TYPES, value: f.columnType ?? 'standard', disabled },
                'Column type',
                i,
              ),
          },
          {
            header: 'Constant value',
            cell: (f, i) => cell({ name: `field.${i}.constantValue`, value: f.constantValue, disabled }, 'Constant value', i),
          },
          remove('field', 'field'),
        ],
      })}
      <h2>Mappings</h2>
      ${table<Row>({
        rows: mappingRows,
        columns: [
          {
            header: 'Field No.',
            cell: (m, i) =>
              cell({ kind: 'number', name: `mapping.${i}.fieldNo`, value: m.fieldNo, size: 4, disabled }, 'Mapped field No.', i),
          },
          {
            header: 'Target field',
            cell: (m, i) =>
              cell(
                { kind: 'select', name: `mapping.${i}.targetField`, options: targetFields, blank: '', value: m.targetField, disabled },
                'Target field',
                i,
              ),
          },
          {
            header: 'Required',
            cell: (m, i) =>
              cell({ kind: 'checkbox', name: `mapping.${i}.required`, checked: m.required === 'on', disabled }, 'Required', i),
          },
          remove('mapping', 'mapping'),
        ],
      })}
      ${editable ? html`<p><button type="submit">Save integration</button> <span class="hint">Fields and mappings are saved together; a list replaces the one stored.</span></p>` : ''}
    </form>
    ${ctx.can('configure') ? html`<p><a href="${path(['integrations', no, 'try'])}">Try a payload</a>: map a pasted payload through this integration without writing anything.</p>` : ''}`;
}

export function integrationPages(deps: IntegrationPagesDeps): ConsolePages {
  const { db, clock } = deps;

  async function targetFieldsOf(table: string): Promise<string[]> {
    const tables = await listTargetTables(db.kysely);
    return tables.find((t) => t.name === table)?.fields.map((f) => f.name) ?? [];
  }

  return (router) => {
    router.section({ label: 'Integrations', href: '/integrations', permission: 'read', order: 30 });

    router.get('/integrations', 'read', async (_request, ctx) => {
      const list = await listIntegrations(db.kysely);
      return ctx.page(
        'Integrations',
        html`${ctx.can('configure') ? html`<p><a class="button" href="/integrations/new">New integration</a></p>` : ''}
        ${table({
          rows: list,
          empty: 'No integrations yet.',
          columns: [
            { header: 'Sorting Order', numeric: true, cell: (i) => i.sortingOrder },
            { header: 'Name', cell: (i) => html`<a href="${path(['integrations', i.sortingOrder])}">${i.name}</a>` },
            { header: 'Type', cell: (i) => i.type },
            { header: 'Target table', cell: (i) => i.targetTable },
            {
              header: 'Accepts bulk import',
              cell: (i) =>
                `${i.acceptBulkImportRequests ? 'Yes' : 'No'}${i.maxPayloadSizeKb === null ? '' : ` (max ${i.maxPayloadSizeKb} KB)`}`,
            },
            { header: 'Write mode', cell: (i) => i.writeMode },
            { header: 'On record error', cell: (i) => i.onRecordError },
          ],
        })}`,
      );
    });

    router.get('/integrations/new', 'configure', async (_request, ctx) => {
      const tables = await listTargetTables(db.kysely);
      return ctx.page(
        'New integration',
        newForm(
          ctx,
          tables.map((t) => t.name),
        ),
      );
    });

    router.post('/integrations/new', 'configure', async (_request, ctx, form) => {
      const tables = (await listTargetTables(db.kysely)).map((t) => t.name);
      try {
        const sortingOrder = formInteger(form.get('sortingOrder') ?? '', 'Sorting Order');
        await createIntegration(
          db,
          {
            sortingOrder,
            name: form.get('name') ?? '',
            targetTable: form.get('targetTable') ?? '',
            recordsPath: form.get('recordsPath') ?? '',
          },
          clock,
        );
        return redirect(path(['integrations', sortingOrder]), {
          kind: 'info',
          text: `Integration ${sortingOrder} was created; add its fields and mappings.`,
        });
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        return ctx.page('New integration', newForm(ctx, tables, form, err.message));
      }
    });

    router.get(
      '/integrations/:no',
      'read',
      async (request, ctx) => {
        const no = sortingOrderOf(request.params.no);
        const plan = await getIntegrationPlan(db.kysely, no);
        if (plan === undefined) throw new AppError(404, 'notFound', `No integration ${no}.`);
        const state = stateOf(
          plan.integration,
          plan.fields.map((f) => ({
            fieldNo: String(f.fieldNo),
            title: f.title,
            sourcePath: f.sourcePath,
            columnType: f.columnType,
            constantValue: f.constantValue ?? '',
          })),
          plan.mappings.map((m) => ({ fieldNo: String(m.fieldNo), targetField: m.targetField, required: m.required ? 'on' : '' })),
        );
        return ctx.page(
          `Integration ${no} ${plan.integration.name}`,
          card(no, state, await targetFieldsOf(plan.integration.targetTable), ctx),
        );
      },
      NoParams,
    );

    router.post(
      '/integrations/:no',
      'configure',
      async (request, ctx, form) => {
        const no = sortingOrderOf(request.params.no);
        const plan = await getIntegrationPlan(db.kysely, no);
        if (plan === undefined) throw new AppError(404, 'notFound', `No integration ${no}.`);
        const settings: Record<string, string> = { targetTable: plan.integration.targetTable };
        for (const name of ['name', 'type', 'recordsPath', 'acceptBulkImportRequests', 'maxPayloadSizeKb', 'writeMode', 'onRecordError'])
          settings[name] = form.get(name) ?? '';
        const state: CardState = {
          settings,
          fields: rowsOf(form, 'field', ['fieldNo', 'title', 'sourcePath', 'columnType', 'constantValue', 'remove']),
          mappings: rowsOf(form, 'mapping', ['fieldNo', 'targetField', 'required', 'remove']),
        };
        try {
          await updateIntegration(db, no, changeFrom(state), clock);
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          const fields = await targetFieldsOf(plan.integration.targetTable);
          return ctx.page(`Integration ${no} ${plan.integration.name}`, card(no, state, fields, ctx, `Not saved: ${err.message}`));
        }
        return redirect(path(['integrations', no]), { kind: 'info', text: `Integration ${no} was saved.` });
      },
      NoParams,
    );
  };
}

function newForm(ctx: ConsoleContext, tables: readonly string[], form?: URLSearchParams, error?: string): Html {
  const v = (name: string) => form?.get(name) ?? '';
  return html`${formError(error)}
    <form method="post" action="/integrations/new">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${field({
        kind: 'number',
        name: 'sortingOrder',
        label: 'Sorting Order',
        required: true,
        value: v('sortingOrder'),
        help: 'Identifies the integration; bulk import callers send it as integrationSortingOrder.',
      })}
      ${field({ name: 'name', label: 'Name', required: true, value: v('name') })}
      ${field({ kind: 'select', name: 'targetTable', label: 'Target table', required: true, options: tables, value: v('targetTable') })}
      ${field({ name: 'recordsPath', label: 'Records path', value: v('recordsPath'), help: 'Blank: the payload itself is the array of records.' })}
      <button type="submit">Create integration</button>
    </form>
    <p><a href="/integrations/from-sample">Create table and mappings from a sample</a></p>`;
}
