/**
 * The integration card as a person edits it: its settings and one row per field with its mapping
 * (Field No. typed once). Pure: the card from the stored integration or from a sent form, a row added
 * (numbered with the next free Field No.) or removed, target fields suggested where a source path's
 * last segment names one, and the change the API takes, with which row sent each item of its lists so
 * that an error the API places at `fields[2]` is shown on the row the person sees.
 */
import { invalidAt } from '../core/validation.js';
import { numberAt, type FormPlaces } from '../console/form-errors.js';
import type { IntegrationPlan } from './model.js';
import type { IntegrationChange } from './service.js';

export const ROW_PROPERTIES = ['fieldNo', 'title', 'sourcePath', 'columnType', 'constantValue', 'targetField', 'required'] as const;
export type RowProperty = (typeof ROW_PROPERTIES)[number];
export type CardRow = Readonly<Record<RowProperty, string>>;

export const SETTINGS = [
  'name',
  'type',
  'recordsPath',
  'acceptBulkImportRequests',
  'maxPayloadSizeKb',
  'writeMode',
  'onRecordError',
] as const;
export type SettingName = (typeof SETTINGS)[number];

export interface CardState {
  readonly settings: Readonly<Record<SettingName, string>>;
  readonly rows: readonly CardRow[];
}

/** The most rows a card sends (the form body's pattern allows row numbers up to 999). */
export const MAX_ROWS = 1000;
/** `row.<n>.<property>`: the names of a row's inputs. */
export const ROW_PATTERN = `^row\\.\\d{1,3}\\.(${ROW_PROPERTIES.join('|')})$`;
export const rowInput = (row: number, property: RowProperty): string => `row.${row}.${property}`;

const blankRow = (fieldNo: number): CardRow => ({
  fieldNo: String(fieldNo),
  title: '',
  sourcePath: '',
  columnType: 'standard',
  constantValue: '',
  targetField: '',
  required: '',
});

/** A row with nothing typed but its number: not saved. */
const isBlank = (r: CardRow): boolean =>
  r.title.trim() === '' && r.sourcePath.trim() === '' && r.constantValue === '' && r.targetField === '';

/** The card of a stored integration: one row per field, with its mapping when it has one; one blank row when it has none. */
export function stateOfPlan(plan: IntegrationPlan): CardState {
  const i = plan.integration;
  const rows = plan.fields.map((f): CardRow => {
    const m = plan.mappings.find((x) => x.fieldNo === f.fieldNo);
    return {
      fieldNo: String(f.fieldNo),
      title: f.title,
      sourcePath: f.sourcePath,
      columnType: f.columnType,
      constantValue: f.constantValue ?? '',
      targetField: m?.targetField ?? '',
      required: m?.required === true ? 'on' : '',
    };
  });
  return {
    settings: {
      name: i.name,
      type: i.type,
      recordsPath: i.recordsPath,
      acceptBulkImportRequests: i.acceptBulkImportRequests ? 'on' : '',
      maxPayloadSizeKb: i.maxPayloadSizeKb === null ? '' : String(i.maxPayloadSizeKb),
      writeMode: i.writeMode,
      onRecordError: i.onRecordError,
    },
    rows: rows.length === 0 ? [blankRow(1)] : rows,
  };
}

/** The card as the form sent it: its settings, and its rows in the order of their numbers. */
export function stateOfForm(form: URLSearchParams): CardState {
  const settings = Object.fromEntries(SETTINGS.map((name) => [name, form.get(name) ?? ''])) as Record<SettingName, string>;
  const byRow = new Map<number, Record<RowProperty, string>>();
  for (const [name, value] of form) {
    const match = /^row\.(\d{1,3})\.([A-Za-z]+)$/.exec(name);
    if (match === null || !(ROW_PROPERTIES as readonly string[]).includes(match[2]!)) continue;
    const n = Number(match[1]);
    const row = byRow.get(n) ?? { ...blankRow(0), fieldNo: '', columnType: '' };
    row[match[2] as RowProperty] = value;
    byRow.set(n, row);
  }
  const rows = [...byRow.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, r]) => ({ ...r, columnType: r.columnType === '' ? 'standard' : r.columnType }))
    .slice(0, MAX_ROWS);
  return { settings, rows };
}

/** The next free Field No.: one more than the highest typed. */
export function nextFieldNo(rows: readonly CardRow[]): number {
  const numbers = rows.map((r) => Number(r.fieldNo.trim())).filter((n) => Number.isSafeInteger(n) && n > 0);
  return numbers.length === 0 ? 1 : Math.max(...numbers) + 1;
}

export const addRow = (state: CardState): CardState =>
  state.rows.length >= MAX_ROWS ? state : { ...state, rows: [...state.rows, blankRow(nextFieldNo(state.rows))] };

export const removeRow = (state: CardState, row: number): CardState => ({ ...state, rows: state.rows.filter((_, i) => i !== row) });

/** The last name in a source path: `contact.email` → `email`, `$.items[0]['zip']` → `zip`. */
export function lastSegment(sourcePath: string): string | undefined {
  const names = sourcePath.split(/[.[\]$'"*]+/).filter((s) => s.trim() !== '' && !/^\d+$/.test(s));
  return names.at(-1);
}

/**
 * Rows with a source path and no target field get the target field its last segment names (case
 * aside), unless another row maps to it; a blank title gets that segment too. Returns the rows and
 * how many were filled in, for the card to say so.
 */
export function suggestTargets(
  state: CardState,
  targetFields: readonly string[],
): { readonly state: CardState; readonly suggested: number } {
  const taken = new Set(state.rows.map((r) => r.targetField).filter((t) => t !== ''));
  let suggested = 0;
  const rows = state.rows.map((r): CardRow => {
    if (r.targetField !== '' || r.columnType !== 'standard') return r;
    const segment = lastSegment(r.sourcePath);
    if (segment === undefined) return r;
    const target = targetFields.find((t) => t === segment) ?? targetFields.find((t) => t.toLowerCase() === segment.toLowerCase());
    if (target === undefined || taken.has(target)) return r;
    taken.add(target);
    suggested++;
    return { ...r, targetField: target, title: r.title.trim() === '' ? segment : r.title };
  });
  return { state: { ...state, rows }, suggested };
}

/** Which card row sent each item of the lists the API takes (rows left blank send none). */
export interface SentRows {
  readonly fieldRows: readonly number[];
  readonly mappingRows: readonly number[];
}

export function sentRows(state: CardState): SentRows {
  const fieldRows: number[] = [];
  const mappingRows: number[] = [];
  state.rows.forEach((r, i) => {
    if (isBlank(r)) return;
    fieldRows.push(i);
    if (r.targetField !== '') mappingRows.push(i);
  });
  return { fieldRows, mappingRows };
}

/** The change the card asks for, in the API's terms; a number that is none is refused where the API would place it. */
export function changeOf(state: CardState, sent: SentRows): IntegrationChange {
  const s = state.settings;
  const fieldNoAt = (row: number, path: string): number => {
    const n = numberAt(state.rows[row]!.fieldNo, path);
    if (n === null) throw invalidAt(path, 'must not be empty: give the field a number');
    return n;
  };
  return {
    name: s.name,
    type: s.type,
    recordsPath: s.recordsPath,
    acceptBulkImportRequests: s.acceptBulkImportRequests === 'on',
    maxPayloadSizeKb: numberAt(s.maxPayloadSizeKb, 'maxPayloadSizeKb'),
    writeMode: s.writeMode,
    onRecordError: s.onRecordError,
    fields: sent.fieldRows.map((row, k) => {
      const r = state.rows[row]!;
      return {
        fieldNo: fieldNoAt(row, `fields[${k}].fieldNo`),
        title: r.title,
        sourcePath: r.sourcePath,
        columnType: r.columnType,
        constantValue: r.columnType === 'constant' ? r.constantValue : null,
      };
    }),
    mappings: sent.mappingRows.map((row, k) => {
      const r = state.rows[row]!;
      return { fieldNo: fieldNoAt(row, `mappings[${k}].fieldNo`), targetField: r.targetField, required: r.required === 'on' };
    }),
  };
}

const ROW_LABELS: Readonly<Record<RowProperty, string>> = {
  fieldNo: 'Field No.',
  title: 'Title',
  sourcePath: 'Source path',
  columnType: 'Column type',
  constantValue: 'Constant value',
  targetField: 'Target field',
  required: 'Required',
};
export const rowLabel = (property: RowProperty): string => ROW_LABELS[property];

const rowPlace = (property: RowProperty) => ({ name: (row: number) => rowInput(row, property), label: ROW_LABELS[property] });

/** Where the card shows each property the API's messages may name. */
export function cardPlaces(sent: SentRows): FormPlaces {
  return {
    inputs: {
      name: { name: 'name', label: 'Name' },
      type: { name: 'type', label: 'Type' },
      recordsPath: { name: 'recordsPath', label: 'Records path' },
      acceptBulkImportRequests: { name: 'acceptBulkImportRequests', label: 'Accept Bulk Import Requests' },
      maxPayloadSizeKb: { name: 'maxPayloadSizeKb', label: 'Max Payload Size (KB)' },
      writeMode: { name: 'writeMode', label: 'Write mode' },
      onRecordError: { name: 'onRecordError', label: 'On record error' },
    },
    groups: {
      fields: {
        label: 'Fields',
        row: (k) => sent.fieldRows[k],
        inputs: {
          fieldNo: rowPlace('fieldNo'),
          title: rowPlace('title'),
          sourcePath: rowPlace('sourcePath'),
          columnType: rowPlace('columnType'),
          constantValue: rowPlace('constantValue'),
        },
      },
      mappings: {
        label: 'Fields',
        row: (k) => sent.mappingRows[k],
        inputs: { fieldNo: rowPlace('fieldNo'), targetField: rowPlace('targetField'), required: rowPlace('required') },
      },
    },
  };
}
