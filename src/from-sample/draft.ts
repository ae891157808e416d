/**
 * The proposal as a form: the draft the page shows (from a proposal, or as the administrator sent
 * it), read back into a choice, and a refusal's message placed under the input it is about, with the
 * label and row in the administrator's words ("Fields, row 3, Source path", rows counted from 1).
 */
import { wholeNumber } from '../console/console.js';
import { FIELD_TYPES, type FieldType } from '../tables/model.js';
import { INTEGRATION_TYPES, WRITE_MODES, type IntegrationType, type WriteMode } from '../integrations/model.js';
import type { SampleChoice } from './declarations.js';
import type { Proposal, ProposedField } from './infer.js';

/** The types offered: an option field needs its values, which a sample cannot tell. */
export const OFFERED_TYPES: readonly FieldType[] = FIELD_TYPES.filter((t) => t !== 'option');

export type Row = Record<string, string>;
export const ROW_INPUTS = ['include', 'name', 'type', 'maxLength', 'required', 'primaryKey', 'sourcePath', 'example'] as const;
export const SETTINGS = [
  'tableName',
  'sortingOrder',
  'integrationName',
  'integrationType',
  'recordsPath',
  'writeMode',
  'acceptBulkImportRequests',
] as const;

export interface Draft {
  readonly settings: Record<(typeof SETTINGS)[number], string>;
  readonly rows: readonly Row[];
}

/** What went wrong where: a setting's name, or a row and its input; `text` is the reason alone. */
export interface Problem {
  readonly setting?: string;
  readonly row?: number;
  readonly input?: string;
  readonly text: string;
}

export const LABELS: Readonly<Record<string, string>> = {
  tableName: 'Table name',
  sortingOrder: 'Sorting Order',
  integrationName: 'Integration name',
  integrationType: 'Type',
  recordsPath: 'Records path',
  writeMode: 'Write mode',
  acceptBulkImportRequests: 'Accept Bulk Import Requests',
  include: 'Include',
  name: 'Name',
  type: 'Type',
  maxLength: 'Length',
  required: 'Required',
  primaryKey: 'Primary key',
  sourcePath: 'Source path',
};

const on = (b: boolean): string => (b ? 'on' : '');

export function draftOf(
  proposal: Proposal,
  settings: Pick<Draft['settings'], 'sortingOrder' | 'integrationName' | 'integrationType'>,
): Draft {
  return {
    settings: {
      tableName: proposal.tableName,
      recordsPath: proposal.recordsPath,
      writeMode: 'insert',
      acceptBulkImportRequests: '',
      ...settings,
    },
    rows: proposal.fields.map((f) => ({
      include: on(f.include),
      name: f.name,
      type: f.type,
      maxLength: f.maxLength === undefined ? '' : String(f.maxLength),
      required: on(f.required),
      primaryKey: on(f.primaryKey),
      sourcePath: f.sourcePath,
      example: f.example,
    })),
  };
}

/** The draft a form sent: its settings and its rows `field.0.name`, `field.1.name`, … in order. */
export function draftFrom(form: URLSearchParams): Draft {
  const settings = Object.fromEntries(SETTINGS.map((name) => [name, form.get(name) ?? ''])) as Draft['settings'];
  const rows: Row[] = [];
  for (let i = 0; form.has(`field.${i}.name`); i++)
    rows.push(Object.fromEntries(ROW_INPUTS.map((n) => [n, form.get(`field.${i}.${n}`) ?? ''])));
  return { settings, rows };
}

const oneOf = <T extends string>(values: readonly T[], value: string, fallback: T): T =>
  (values as readonly string[]).includes(value) ? (value as T) : fallback;

/** The choice a draft makes, or the problems that keep it from being one (a number that is none). */
export function choiceOf(draft: Draft): SampleChoice | Problem[] {
  const s = draft.settings;
  const problems: Problem[] = [];
  const sortingOrder = wholeNumber(s.sortingOrder);
  if (sortingOrder === null) problems.push({ setting: 'sortingOrder', text: `must be a whole number, got '${s.sortingOrder}'` });
  const fields: ProposedField[] = draft.rows.map((r, i) => {
    const raw = (r.maxLength ?? '').trim();
    const maxLength = raw === '' ? undefined : wholeNumber(raw);
    if (maxLength === null) problems.push({ row: i, input: 'maxLength', text: `must be a whole number, got '${raw}'` });
    const type = r.type ?? '';
    if (!(OFFERED_TYPES as readonly string[]).includes(type))
      problems.push({ row: i, input: 'type', text: `"${type}" is not a field type; use one of ${OFFERED_TYPES.join(', ')}` });
    return {
      include: r.include === 'on',
      name: (r.name ?? '').trim(),
      type: type as FieldType,
      ...(maxLength === undefined || maxLength === null ? {} : { maxLength }),
      required: r.required === 'on' || r.primaryKey === 'on',
      primaryKey: r.primaryKey === 'on',
      sourcePath: (r.sourcePath ?? '').trim(),
      example: r.example ?? '',
    };
  });
  if (problems.length > 0 || sortingOrder === null) return problems;
  return {
    tableName: s.tableName.trim(),
    recordsPath: s.recordsPath.trim(),
    sortingOrder,
    integrationName: s.integrationName,
    integrationType: oneOf<IntegrationType>(INTEGRATION_TYPES, s.integrationType, 'file'),
    acceptBulkImportRequests: s.acceptBulkImportRequests === 'on',
    writeMode: oneOf<WriteMode>(WRITE_MODES, s.writeMode, 'insert'),
    fields,
  };
}

const SETTING_OF: Readonly<Record<string, string>> = {
  'table.name': 'tableName',
  'integration.sortingOrder': 'sortingOrder',
  'integration.name': 'integrationName',
  'integration.type': 'integrationType',
  'integration.recordsPath': 'recordsPath',
  'integration.writeMode': 'writeMode',
  'integration.acceptBulkImportRequests': 'acceptBulkImportRequests',
};
/** The row input a declared field's property is about; `.` alone: the row as a whole. */
const ROW_INPUT_OF: Readonly<Record<string, string>> = {
  'table.fields.type': 'type',
  'table.fields.options': 'type',
  'table.fields.maxLength': 'maxLength',
  'table.fields.required': 'required',
  'integration.fields.sourcePath': 'sourcePath',
  'integration.fields.': 'sourcePath',
};

/**
 * Where a refusal's message (`table.fields[2].name: …`, `integration.sortingOrder: …`) belongs.
 * `rows` maps a declared field's index to its row in the form; other references to declared fields
 * in the reason (`also fields[0]`) are rewritten as rows too.
 */
export function problemOf(message: string, rows: readonly number[], draft: Draft): Problem {
  const m = /^(table|integration|endpoint)((?:\.[A-Za-z]+|\[\d+\])*): (.*)$/s.exec(message);
  const inWords = (text: string) => text.replace(/\bfields\[(\d+)\]/g, (_, k: string) => `row ${(rows[Number(k)] ?? Number(k)) + 1}`);
  if (m === null) return { text: inWords(message) };
  const [, part, where, reason] = m as unknown as [string, string, string, string];
  const text = inWords(reason);
  const indexed = /^\.(fields|mappings)\[(\d+)\](?:\.([A-Za-z]+))?$/.exec(where);
  if (indexed !== null) {
    const input = ROW_INPUT_OF[`${part}.${indexed[1]}.${indexed[3] ?? ''}`] ?? 'name';
    return { row: rows[Number(indexed[2])] ?? 0, input, text };
  }
  const key = /^\.primaryKey\[(\d+)\]$/.exec(where);
  if (part === 'table' && key !== null) {
    const name = /^"([^"]*)"/.exec(reason)?.[1];
    const row = draft.rows.findIndex((r) => r.include === 'on' && r.primaryKey === 'on' && r.name?.trim() === name);
    if (row >= 0) return { row, input: 'primaryKey', text };
  }
  const setting = SETTING_OF[`${part}${where}`];
  if (setting !== undefined) return { setting, text };
  if (part === 'table' && where === '.primaryKey') return { text: `Primary key: ${text}` };
  if (part === 'table' && where === '.fields') return { text: `Fields: ${text}` };
  if (part === 'endpoint') return { text: `Endpoint${where === '' ? '' : `, ${where.slice(1)}`}: ${text}` };
  return { text: `${where === '' ? '' : `${where.slice(1)}: `}${text}` };
}

/** The problem in the administrator's words, for the banner: "Fields, row 3, Source path: …". */
export function problemInWords(p: Problem): string {
  if (p.setting !== undefined) return `${LABELS[p.setting] ?? p.setting}: ${p.text}`;
  if (p.row !== undefined) return `Fields, row ${p.row + 1}, ${LABELS[p.input ?? 'name'] ?? p.input}: ${p.text}`;
  return p.text;
}
