/**
 * The target table form of the console, for a new table and for an existing one: the form's rows as
 * typed (kept whole across every re-render), the declaration they make for the API's rules
 * (`validate.ts`, `service.ts`), and the form with a refusal shown under the input it concerns.
 * Nothing here decides what a declaration may be: the form only turns text into the API's shape.
 */
import { formError, control, field, table, type Input } from '../console/widgets.js';
import { wholeNumber } from '../console/console.js';
import { html, type Html } from '../console/html.js';
import { FIELD_TYPES, type TargetTable } from './model.js';
import { placeError, type FormShape, type PlacedError } from './error-places.js';
import type { TargetFieldInput, TargetTableInput } from './validate.js';

/** One row of the Fields table, as typed. */
export interface FieldRow {
  readonly name: string;
  readonly type: string;
  readonly length: string;
  readonly required: boolean;
  readonly key: boolean;
  /** One value per line. */
  readonly options: string;
  readonly relationTable: string;
  readonly relationField: string;
  /** Ticked "Remove": left out of the declaration and of the next rendering. */
  readonly remove: boolean;
}

export interface TableFormState {
  readonly name: string;
  readonly rows: readonly FieldRow[];
}

/** The row inputs, by the name they have in the form (`fields.<row>.<input>`). */
export const ROW_INPUTS = ['name', 'type', 'length', 'required', 'key', 'options', 'relationTable', 'relationField', 'remove'] as const;
/** The form body's rows, for its `FormBody` pattern. */
export const ROW_PATTERN = `^fields\\.\\d{1,3}\\.(${ROW_INPUTS.join('|')})$`;
export const MAX_ROWS = 200;

const BLANK: FieldRow = {
  name: '',
  type: 'text',
  length: '',
  required: false,
  key: false,
  options: '',
  relationTable: '',
  relationField: '',
  remove: false,
};
export const blankRow = (): FieldRow => ({ ...BLANK });

/** The API's paths and the form's inputs: what `placeError` reads a refusal against. */
export const TABLE_FORM_SHAPE: FormShape = {
  inputs: { name: { input: 'name', label: 'Table name' } },
  groups: {
    fields: {
      label: 'Fields',
      prefix: 'fields',
      row: 'name',
      inputs: {
        name: { input: 'name', label: 'Name' },
        type: { input: 'type', label: 'Type' },
        maxLength: { input: 'length', label: 'Length' },
        required: { input: 'required', label: 'Required' },
        primaryKey: { input: 'key', label: 'Primary key' },
        options: { input: 'options', label: 'Option values' },
        relation: { input: 'relationTable', label: 'Relation' },
        'relation.table': { input: 'relationTable', label: 'Relation table' },
        'relation.field': { input: 'relationField', label: 'Relation field' },
      },
    },
    // The primary key as a whole (`primaryKey: name at least one field`) has no input of its own.
    primaryKey: { label: 'Primary key', prefix: 'fields', row: 'key', inputs: {} },
  },
};

export function stateFromForm(form: URLSearchParams, name: string): TableFormState {
  const rows: FieldRow[] = [];
  for (let i = 0; i < MAX_ROWS && form.has(`fields.${i}.name`); i++) {
    const text = (input: string) => form.get(`fields.${i}.${input}`) ?? '';
    const on = (input: string) => form.get(`fields.${i}.${input}`) === 'on';
    rows.push({
      name: text('name'),
      type: text('type') || 'text',
      length: text('length'),
      required: on('required'),
      key: on('key'),
      options: text('options'),
      relationTable: text('relationTable'),
      relationField: text('relationField'),
      remove: on('remove'),
    });
  }
  return { name, rows };
}

export function stateFromTable(t: TargetTable): TableFormState {
  return {
    name: t.name,
    rows: t.fields.map((f) => ({
      name: f.name,
      type: f.type,
      length: f.maxLength === undefined ? '' : String(f.maxLength),
      required: f.required === true || t.primaryKey.includes(f.name),
      key: t.primaryKey.includes(f.name),
      options: (f.options ?? []).join('\n'),
      relationTable: f.relation?.table ?? '',
      relationField: f.relation?.field ?? '',
      remove: false,
    })),
  };
}

const isBlank = (r: FieldRow): boolean =>
  r.name.trim() === '' &&
  r.length.trim() === '' &&
  r.options.trim() === '' &&
  r.relationTable.trim() === '' &&
  r.relationField.trim() === '' &&
  !r.required &&
  !r.key;

/** The rows a re-rendering keeps: those not ticked Remove. */
export const keptRows = (state: TableFormState): TableFormState => ({ ...state, rows: state.rows.filter((r) => !r.remove) });

export interface Declaration {
  readonly input: TargetTableInput;
  /** The form row (from 0) of each of the declaration's fields. */
  readonly rowOf: (group: string, index: number) => number;
}

/**
 * The declaration the form makes, for the API's rules to judge; or, when a text cannot be put into the
 * API's shape at all (a length that is not a whole number), that refusal in the form's words.
 * `tables` are the declared tables: a relation that names a table but no field means its key.
 * `currentKey`: an existing table's primary key, whose order ticking the same fields keeps.
 */
export function declarationOf(
  state: TableFormState,
  tables: readonly TargetTable[],
  currentKey: readonly string[] = [],
): Declaration | { readonly refused: PlacedError } {
  const rows = state.rows.map((row, index) => ({ row, index })).filter(({ row }) => !row.remove && !isBlank(row));
  const fields: TargetFieldInput[] = [];
  for (const [i, { row }] of rows.entries()) {
    const length = row.length.trim();
    const maxLength = length === '' ? undefined : wholeNumber(length);
    if (maxLength === null) {
      return {
        refused: placeError(`fields[${i}].maxLength: must be a whole number, got "${length}"`, TABLE_FORM_SHAPE, (_g, n) => rows[n]!.index),
      };
    }
    const options = row.options
      .split(/\r?\n/)
      .map((o) => o.trim())
      .filter((o) => o !== '');
    const relationTable = row.relationTable.trim();
    const relationField = row.relationField.trim();
    fields.push({
      name: row.name.trim(),
      type: row.type,
      ...(maxLength === undefined ? {} : { maxLength }),
      ...(row.required ? { required: true } : {}),
      ...(options.length === 0 ? {} : { options }),
      ...(relationTable === '' && relationField === ''
        ? {}
        : { relation: { table: relationTable, field: relationField === '' ? keyOf(relationTable, state, tables) : relationField } }),
    });
  }
  const ticked = rows.filter(({ row }) => row.key).map(({ row }) => row.name.trim());
  const primaryKey = [...currentKey.filter((k) => ticked.includes(k)), ...ticked.filter((k) => !currentKey.includes(k))];
  const rowOf = (group: string, n: number): number => {
    if (group === 'primaryKey') return rows.find(({ row }) => row.key && row.name.trim() === primaryKey[n])?.index ?? 0;
    return rows[n]?.index ?? n;
  };
  return { input: { name: state.name.trim(), primaryKey, fields }, rowOf };
}

/** A relation that names only a table means that table's key, when it has a single-field one. */
function keyOf(table: string, state: TableFormState, tables: readonly TargetTable[]): string {
  if (table === state.name.trim()) {
    const keys = state.rows.filter((r) => r.key && !r.remove);
    return keys.length === 1 ? keys[0]!.name.trim() : '';
  }
  const related = tables.find((t) => t.name === table);
  return related?.primaryKey.length === 1 ? related.primaryKey[0]! : '';
}

/** `primaryKey[1]: …` names the key's second field: the row where it is ticked. */
export function placeDeclarationError(message: string, declaration: Declaration): PlacedError {
  return placeError(message, TABLE_FORM_SHAPE, declaration.rowOf);
}

export interface TableFormOptions {
  readonly action: string;
  readonly csrfToken: string;
  /** A new table names itself; an existing one's name is fixed. */
  readonly isNew: boolean;
  readonly state: TableFormState;
  readonly tableNames: readonly string[];
  readonly error?: PlacedError;
  /** What the change would do, shown above the buttons (Check changes). */
  readonly outcome?: Html;
  /** The input to put the focus on when there is no error (the new row's name after Add a field). */
  readonly focus?: string;
}

const LIST_ID = 'target-table-names';

function rowCells(rows: readonly FieldRow[], error: PlacedError | undefined, focus: string | undefined): Html {
  const invalid = (name: string) => error?.input === name;
  const cell = (input: Input, label: string, i: number): Html => {
    const id = input.id ?? input.name;
    const wrong = invalid(input.name);
    return html`${control(
      { ...input, ...(wrong || (error === undefined && focus === input.name) ? { autofocus: true } : {}) },
      { ariaLabel: `${label} (row ${i + 1})`, ...(wrong ? { describedBy: `${id}-error`, invalid: true } : {}) },
    )}${wrong ? html`<p class="field-error" id="${id}-error">${error?.text}</p>` : ''}`;
  };
  const n = (i: number, input: string) => `fields.${i}.${input}`;
  return table<FieldRow>({
    caption: 'Fields, one row each',
    rows,
    columns: [
      { header: 'Row', cell: (_r, i) => String(i + 1), numeric: true },
      { header: 'Name', cell: (r, i) => cell({ name: n(i, 'name'), value: r.name, size: 16 }, 'Name', i) },
      {
        header: 'Type',
        cell: (r, i) => cell({ kind: 'select', name: n(i, 'type'), options: FIELD_TYPES, value: r.type }, 'Type', i),
      },
      {
        header: 'Length',
        cell: (r, i) => cell({ name: n(i, 'length'), value: r.length, size: 5, attributes: html` inputmode="numeric"` }, 'Length', i),
      },
      { header: 'Required', cell: (r, i) => cell({ kind: 'checkbox', name: n(i, 'required'), checked: r.required }, 'Required', i) },
      { header: 'Key', cell: (r, i) => cell({ kind: 'checkbox', name: n(i, 'key'), checked: r.key }, 'Primary key', i) },
      {
        header: 'Option values',
        cell: (r, i) => cell({ kind: 'textarea', name: n(i, 'options'), value: r.options, rows: 3 }, 'Option values', i),
      },
      {
        header: 'Relation table',
        cell: (r, i) =>
          cell(
            { name: n(i, 'relationTable'), value: r.relationTable, size: 12, attributes: html` list="${LIST_ID}"` },
            'Relation table',
            i,
          ),
      },
      {
        header: 'Relation field',
        cell: (r, i) => cell({ name: n(i, 'relationField'), value: r.relationField, size: 12 }, 'Relation field', i),
      },
      { header: 'Remove', cell: (r, i) => cell({ kind: 'checkbox', name: n(i, 'remove'), checked: r.remove }, 'Remove field', i) },
    ],
  });
}

/** The form: the table's name (new tables), the Fields rows, Add a field, and the form's own buttons. */
export function tableForm(o: TableFormOptions): Html {
  const error = o.error;
  const groupError = error !== undefined && error.input === undefined && error.group !== undefined ? error.text : undefined;
  return html`${formError(error === undefined ? undefined : `Not ${o.isNew ? 'created' : 'saved'}: ${error.text}`)}
    <form method="post" action="${o.action}" class="card-form" novalidate>
      <input type="hidden" name="_csrf" value="${o.csrfToken}" />
      ${
        o.isNew
          ? field({
              name: 'name',
              label: 'Table name',
              value: o.state.name,
              autofocus: error === undefined ? o.focus === 'name' : error.input === 'name',
              help: 'Also the name of the SQL table: lowercase letters, digits and "_", starting with a letter. It cannot change later.',
              ...(error?.input === 'name' ? { error: error.text } : {}),
            })
          : ''
      }
      <fieldset ${groupError === undefined ? '' : html` aria-describedby="fields-error"`}>
        <legend>Fields</legend>
        <p class="hint" id="fields-hint">
          Length: text and code only (blank: text 250, code 20). Option values: option only, one per line. Key: the primary key, in the
          order of the rows; key fields are always required. Relation: another table (or this one) and its key field; a blank field means
          the table's key. Rows left blank are ignored; ticked Remove, they are left out.
        </p>
        ${groupError === undefined ? '' : html`<p class="field-error" id="fields-error">${groupError}</p>`}
        ${rowCells(o.state.rows, error, o.focus)}
        <datalist id="${LIST_ID}">${o.tableNames.map((t) => html`<option value="${t}"></option>`)}</datalist>
        <button type="submit" name="action" value="add" class="secondary">Add a field</button>
      </fieldset>
      ${o.outcome ?? ''}
      <p>
        ${
          o.isNew
            ? html`<button type="submit" name="action" value="save">Create table</button>`
            : html`<button type="submit" name="action" value="check" class="secondary">Check changes</button>
                <button type="submit" name="action" value="save">Save changes</button>`
        }
      </p>
    </form>`;
}
