/**
 * The integration card's markup: its settings, the Bulk Import section, and one table row per field
 * with its mapping. Rows are added and removed by submit buttons that show the card again with
 * everything typed kept (no script: the console's CSP runs none inline); Save sends the whole card.
 * A refused card shows each error under its input, in the user's words, and focuses that input.
 */
import type { ConsoleContext } from '../console/console.js';
import { cell } from '../console/fields.js';
import type { FormErrors } from '../console/form-errors.js';
import { html, path, type Html } from '../console/html.js';
import { field, fields as fieldList, formError, table, type Column, type Input } from '../console/widgets.js';
import { rowInput, rowLabel, type CardRow, type CardState, type RowProperty } from './card-state.js';
import { COLUMN_TYPES, INTEGRATION_TYPES, ON_RECORD_ERROR, WRITE_MODES } from './model.js';

export interface CardView {
  readonly no: number;
  readonly targetTable: string;
  /** The target table's fields: what a row may map to. */
  readonly targetFields: readonly string[];
  readonly state: CardState;
  readonly errors: FormErrors;
  /** How many target fields were just filled in from source paths. */
  readonly suggested?: number;
  /** The row to focus (a row just added). */
  readonly focusRow?: number;
}

/** The card's form and the way to the dry run. */
export function integrationCard(view: CardView, ctx: ConsoleContext): Html {
  const { no, state, errors } = view;
  const s = state.settings;
  const editable = ctx.can('configure');
  const disabled = !editable;
  const at = (name: string) => errors.on(name);
  const rowCell = (property: RowProperty, input: Input, i: number): Html => {
    const e = at(rowInput(i, property));
    const focus = e.autofocus === true || (view.focusRow === i && property === 'title');
    return cell({ ...input, autofocus: focus }, { ariaLabel: `${rowLabel(property)} (row ${i + 1})`, error: e.error });
  };
  const columns: Column<CardRow>[] = [
    {
      header: 'Field No.',
      cell: (r, i) => rowCell('fieldNo', { kind: 'number', name: rowInput(i, 'fieldNo'), value: r.fieldNo, size: 4, min: 1, disabled }, i),
    },
    { header: 'Title', cell: (r, i) => rowCell('title', { name: rowInput(i, 'title'), value: r.title, size: 14, disabled }, i) },
    {
      header: 'Source path',
      cell: (r, i) => rowCell('sourcePath', { name: rowInput(i, 'sourcePath'), value: r.sourcePath, size: 16, disabled }, i),
    },
    {
      header: 'Column type',
      cell: (r, i) =>
        rowCell('columnType', { kind: 'select', name: rowInput(i, 'columnType'), options: COLUMN_TYPES, value: r.columnType, disabled }, i),
    },
    {
      header: 'Constant value',
      cell: (r, i) => rowCell('constantValue', { name: rowInput(i, 'constantValue'), value: r.constantValue, size: 10, disabled }, i),
    },
    {
      header: html`→ Target field`,
      cell: (r, i) =>
        rowCell(
          'targetField',
          {
            kind: 'select',
            name: rowInput(i, 'targetField'),
            options: view.targetFields,
            blank: '(not mapped)',
            value: r.targetField,
            disabled,
          },
          i,
        ),
    },
    {
      header: 'Required',
      cell: (r, i) => rowCell('required', { kind: 'checkbox', name: rowInput(i, 'required'), checked: r.required === 'on', disabled }, i),
    },
    {
      // No visually hidden text in the table: positioned absolutely, it would escape the table's scroll area and widen the page.
      header: 'Remove',
      show: editable,
      cell: (_r, i) =>
        html`<button type="submit" name="remove" value="${i}" class="secondary" formnovalidate aria-label="Remove row ${i + 1}">
          Remove
        </button>`,
    },
  ];
  return html`${formError(errors.summary === undefined ? undefined : `Not saved: ${errors.summary}`)}
    <form
      method="post"
      action="${path(['integrations', no])}"
      class="card-form"
      ${editable ? html` hx-post="${path(['integrations', no, 'validate'])}" hx-trigger="change delay:300ms" hx-target="#validation" hx-swap="innerHTML"` : ''}
    >
      <input type="hidden" name="_csrf" value="${ctx.csrfToken}" />
      ${
        // The form's default button, first in it: Enter in a field saves the card rather than removing row 1.
        // An input, not a button: the stylesheet shows every button, but leaves [hidden] inputs hidden.
        editable ? html`<input type="submit" value="Save integration" hidden />` : ''
      }
      <fieldset>
        <legend>General</legend>
        ${fieldList([
          ['Sorting Order', String(no)],
          ['Target table', html`<a href="${path(['tables', view.targetTable])}">${view.targetTable}</a>`],
        ])}
        ${field({ name: 'name', label: 'Name', value: s.name, required: true, disabled, ...at('name') })}
        ${field({
          kind: 'select',
          name: 'type',
          label: 'Type',
          options: INTEGRATION_TYPES,
          value: s.type,
          disabled,
          help: 'A label: where the records come from. Any integration can receive bulk import requests and be fed by a REST endpoint.',
          ...at('type'),
        })}
        ${field({
          name: 'recordsPath',
          label: 'Records path',
          value: s.recordsPath,
          disabled,
          help: 'Where the record array sits in a payload (dot path or JSONPath). Blank: the payload itself is the array.',
          ...at('recordsPath'),
        })}
        ${field({
          kind: 'select',
          name: 'writeMode',
          label: 'Write mode',
          options: WRITE_MODES,
          value: s.writeMode,
          disabled,
          help: 'insert: new rows only; update: existing rows by primary key; upsert: both.',
          ...at('writeMode'),
        })}
        ${field({
          kind: 'select',
          name: 'onRecordError',
          label: 'On record error',
          options: ON_RECORD_ERROR,
          value: s.onRecordError,
          disabled,
          help: 'fail: one bad record fails the whole request and nothing is written; skip: bad records are skipped and reported.',
          ...at('onRecordError'),
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
          help: 'When off, submissions for this integration are refused with 400. Needs at least one mapped field.',
          ...at('acceptBulkImportRequests'),
        })}
        ${field({
          kind: 'number',
          name: 'maxPayloadSizeKb',
          label: 'Max Payload Size (KB)',
          min: 1,
          value: s.maxPayloadSizeKb,
          disabled,
          help: "Larger payloads are refused with 413. Blank: only the service's body limit applies.",
          ...at('maxPayloadSizeKb'),
        })}
      </fieldset>
      <h2 id="fields-heading">Fields</h2>
      <p class="hint" id="fields-hint">
        Each row is a field of the integration (where its value sits in a record) and, with a target field, its mapping. Source path is
        required for standard columns, Constant value for constant ones. Rows left blank are not saved.
      </p>
      ${
        view.suggested === undefined || view.suggested === 0
          ? ''
          : html`<p class="warning" role="status">
              ${view.suggested === 1 ? 'A target field was' : `${view.suggested} target fields were`} filled in where a source path's last
              segment names one: check before saving.
            </p>`
      }
      ${table<CardRow>({ rows: state.rows, columns, caption: 'Fields and their mappings' })}
      ${
        editable
          ? html`<p>
                <button type="submit" name="add" value="row" class="secondary" formnovalidate>Add a row</button>
              </p>
              <div id="validation" aria-live="polite"></div>
              <p>
                <button type="submit">Save integration</button>
                <span class="hint">Settings, fields and mappings are saved together; a row removed is deleted on save.</span>
              </p>`
          : ''
      }
    </form>
    ${editable ? html`<p><a href="${path(['integrations', no, 'try'])}">Try a payload</a>: map a pasted payload through this integration without writing anything.</p>` : ''}
    <p>
      <a href="${path(['webhooks'], { integration: no })}">Webhooks</a>: who is told when a request or import run of this integration ends.
    </p>`;
}
