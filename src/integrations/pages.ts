/**
 * The console's Integrations: the list, a new integration, and the card: its settings, the Bulk Import
 * section (Accept Bulk Import Requests, Max Payload Size (KB)), write mode, on-record-error, and its
 * fields and mappings edited on the card and saved together under the API's rules and messages.
 */
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../core/clock.js';
import { isStorableInteger } from '../core/bounds.js';
import { AppError } from '../core/errors.js';
import { redirect, type ConsoleContext, type ConsolePages } from '../console/console.js';
import { html, path, type Html } from '../console/html.js';
import { fields as fieldList } from '../console/widgets.js';
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
const blankRow = (): Record<string, string> => ({});

function sortingOrderOf(request: FastifyRequest): number {
  const raw = (request.params as { no: string }).no;
  const n = Number(raw);
  if (!/^-?\d{1,10}$/.test(raw) || !isStorableInteger(n)) throw new AppError(404, 'notFound', `No integration ${raw}.`);
  return n;
}

const options = (values: readonly string[], selected: string | undefined): Html[] =>
  values.map((v) => html`<option value="${v}" ${v === selected ? html` selected` : ''}>${v}</option>`);

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

function integer(value: string, what: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isSafeInteger(n))
    throw new AppError(400, 'invalidRequest', `${what} must be a whole number; got '${value}'.`);
  return n;
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
    maxPayloadSizeKb: (s.maxPayloadSizeKb ?? '').trim() === '' ? null : integer(s.maxPayloadSizeKb ?? '', 'Max Payload Size (KB)'),
    writeMode: s.writeMode ?? '',
    onRecordError: s.onRecordError ?? '',
    fields: kept(state.fields).map((f) => ({
      fieldNo: integer(f.fieldNo ?? '', 'A field number'),
      title: f.title ?? '',
      sourcePath: f.sourcePath ?? '',
      columnType: f.columnType ?? 'standard',
      constantValue: (f.columnType ?? '') === 'constant' ? (f.constantValue ?? '') : null,
    })),
    mappings: kept(state.mappings).map((m) => ({
      fieldNo: integer(m.fieldNo ?? '', 'A mapping field number'),
      targetField: m.targetField ?? '',
      required: m.required === 'on',
    })),
  };
}

function card(no: number, state: CardState, targetFields: readonly string[], ctx: ConsoleContext, error?: string): Html {
  const s = state.settings;
  const editable = ctx.can('configure');
  const dis = editable ? '' : html` disabled`;
  const fieldRows = [...state.fields, ...(editable ? Array.from({ length: BLANK_ROWS }, blankRow) : [])];
  const mappingRows = [...state.mappings, ...(editable ? Array.from({ length: BLANK_ROWS }, blankRow) : [])];
  return html`${error === undefined ? '' : html`<div class="flash error" role="alert">${error}</div>`}
    <form method="post" action="${path(['integrations', no])}" class="card-form">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      <fieldset>
        <legend>General</legend>
        ${fieldList([
          ['Sorting Order', String(no)],
          ['Target table', html`<a href="${path(['tables', s.targetTable ?? ''])}">${s.targetTable}</a>`],
        ])}
        <div class="field"><label for="name">Name</label><input id="name" name="name" value="${s.name}" required${dis} /></div>
        <div class="field">
          <label for="type">Type</label
          ><select id="type" name="type" ${dis}>
            ${options(INTEGRATION_TYPES, s.type)}
          </select>
          <p class="hint">
            A label: where the records come from. Any integration can receive bulk import requests and be fed by a REST endpoint.
          </p>
        </div>
        <div class="field">
          <label for="recordsPath">Records path</label
          ><input id="recordsPath" name="recordsPath" value="${s.recordsPath}" ${dis} aria-describedby="recordsPath-hint" />
          <p class="hint" id="recordsPath-hint">
            Where the record array sits in a payload (dot path or JSONPath). Blank: the payload itself is the array.
          </p>
        </div>
        <div class="field">
          <label for="writeMode">Write mode</label
          ><select id="writeMode" name="writeMode" ${dis}>
            ${options(WRITE_MODES, s.writeMode)}
          </select>
          <p class="hint">insert: new rows only; update: existing rows by primary key; upsert: both.</p>
        </div>
        <div class="field">
          <label for="onRecordError">On record error</label
          ><select id="onRecordError" name="onRecordError" ${dis}>
            ${options(ON_RECORD_ERROR, s.onRecordError)}
          </select>
          <p class="hint">
            fail: one bad record fails the whole request and nothing is written; skip: bad records are skipped and reported.
          </p>
        </div>
      </fieldset>
      <fieldset>
        <legend>Bulk Import</legend>
        <div class="field">
          <input
            type="checkbox"
            id="acceptBulkImportRequests"
            name="acceptBulkImportRequests"
            ${s.acceptBulkImportRequests === 'on' ? html` checked` : ''}${dis}
          />
          <label for="acceptBulkImportRequests" class="inline">Accept Bulk Import Requests</label>
          <p class="hint">When off, submissions for this integration are refused with 400. Needs at least one mapping.</p>
        </div>
        <div class="field">
          <label for="maxPayloadSizeKb">Max Payload Size (KB)</label
          ><input
            id="maxPayloadSizeKb"
            name="maxPayloadSizeKb"
            type="number"
            min="1"
            value="${s.maxPayloadSizeKb}"
            ${dis}
            aria-describedby="maxPayload-hint"
          />
          <p class="hint" id="maxPayload-hint">Larger payloads are refused with 413. Blank: only the service's body limit applies.</p>
        </div>
      </fieldset>
      <h2>Fields</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Field No.</th>
            <th scope="col">Title</th>
            <th scope="col">Source path</th>
            <th scope="col">Column type</th>
            <th scope="col">Constant value</th>
            ${editable ? html`<th scope="col">Remove</th>` : ''}
          </tr>
        </thead>
        <tbody>
          ${fieldRows.map(
            (f, i) =>
              html`<tr>
                <td>
                  <input
                    aria-label="Field No. (row ${i + 1})"
                    name="field.${i}.fieldNo"
                    type="number"
                    value="${f.fieldNo ?? ''}"
                    size="4"
                    ${dis}
                  />
                </td>
                <td><input aria-label="Title (row ${i + 1})" name="field.${i}.title" value="${f.title ?? ''}" ${dis} /></td>
                <td><input aria-label="Source path (row ${i + 1})" name="field.${i}.sourcePath" value="${f.sourcePath ?? ''}" ${dis} /></td>
                <td>
                  <select aria-label="Column type (row ${i + 1})" name="field.${i}.columnType" ${dis}>
                    ${options(COLUMN_TYPES, f.columnType ?? 'standard')}
                  </select>
                </td>
                <td>
                  <input
                    aria-label="Constant value (row ${i + 1})"
                    name="field.${i}.constantValue"
                    value="${f.constantValue ?? ''}"
                    ${dis}
                  />
                </td>
                ${editable ? html`<td><input type="checkbox" aria-label="Remove field row ${i + 1}" name="field.${i}.remove" ${f.remove === 'on' ? html` checked` : ''} /></td>` : ''}
              </tr>`,
          )}
        </tbody>
      </table>
      <h2>Mappings</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Field No.</th>
            <th scope="col">Target field</th>
            <th scope="col">Required</th>
            ${editable ? html`<th scope="col">Remove</th>` : ''}
          </tr>
        </thead>
        <tbody>
          ${mappingRows.map(
            (m, i) =>
              html`<tr>
                <td>
                  <input
                    aria-label="Mapped field No. (row ${i + 1})"
                    name="mapping.${i}.fieldNo"
                    type="number"
                    value="${m.fieldNo ?? ''}"
                    size="4"
                    ${dis}
                  />
                </td>
                <td>
                  <select aria-label="Target field (row ${i + 1})" name="mapping.${i}.targetField" ${dis}>
                    <option value=""></option>
                    ${options(targetFields, m.targetField)}
                  </select>
                </td>
                <td>
                  <input
                    type="checkbox"
                    aria-label="Required (row ${i + 1})"
                    name="mapping.${i}.required"
                    ${m.required === 'on' ? html` checked` : ''}${dis}
                  />
                </td>
                ${editable ? html`<td><input type="checkbox" aria-label="Remove mapping row ${i + 1}" name="mapping.${i}.remove" ${m.remove === 'on' ? html` checked` : ''} /></td>` : ''}
              </tr>`,
          )}
        </tbody>
      </table>
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
          <table>
            <thead>
              <tr>
                <th scope="col" class="num">Sorting Order</th>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Target table</th>
                <th scope="col">Accepts bulk import</th>
                <th scope="col">Write mode</th>
                <th scope="col">On record error</th>
              </tr>
            </thead>
            <tbody>
              ${list.map(
                (i) =>
                  html`<tr>
                    <td class="num">${i.sortingOrder}</td>
                    <td><a href="${path(['integrations', i.sortingOrder])}">${i.name}</a></td>
                    <td>${i.type}</td>
                    <td>${i.targetTable}</td>
                    <td>
                      ${i.acceptBulkImportRequests ? 'Yes' : 'No'}${i.maxPayloadSizeKb === null ? '' : ` (max ${i.maxPayloadSizeKb} KB)`}
                    </td>
                    <td>${i.writeMode}</td>
                    <td>${i.onRecordError}</td>
                  </tr>`,
              )}
              ${
                list.length === 0
                  ? html`<tr>
                      <td colspan="7" class="muted">No integrations yet.</td>
                    </tr>`
                  : ''
              }
            </tbody>
          </table>`,
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
        const sortingOrder = integer(form.get('sortingOrder') ?? '', 'Sorting Order');
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

    router.get('/integrations/:no', 'read', async (request, ctx) => {
      const no = sortingOrderOf(request);
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
    });

    router.post('/integrations/:no', 'configure', async (request, ctx, form) => {
      const no = sortingOrderOf(request);
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
    });
  };
}

function newForm(ctx: ConsoleContext, tables: readonly string[], form?: URLSearchParams, error?: string): Html {
  const v = (name: string) => form?.get(name) ?? '';
  return html`${error === undefined ? '' : html`<div class="flash error" role="alert">${error}</div>`}
    <form method="post" action="/integrations/new">
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      <div class="field">
        <label for="sortingOrder">Sorting Order</label
        ><input id="sortingOrder" name="sortingOrder" type="number" required value="${v('sortingOrder')}" />
        <p class="hint">Identifies the integration; bulk import callers send it as integrationSortingOrder.</p>
      </div>
      <div class="field"><label for="name">Name</label><input id="name" name="name" required value="${v('name')}" /></div>
      <div class="field">
        <label for="targetTable">Target table</label
        ><select id="targetTable" name="targetTable" required>
          ${options(tables, v('targetTable'))}
        </select>
      </div>
      <div class="field">
        <label for="recordsPath">Records path</label><input id="recordsPath" name="recordsPath" value="${v('recordsPath')}" />
        <p class="hint">Blank: the payload itself is the array of records.</p>
      </div>
      <button type="submit">Create integration</button>
    </form>`;
}
