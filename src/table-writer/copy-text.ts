/**
 * Mapped rows in PostgreSQL's COPY text format (one line per row, values separated by tabs, `\N` for
 * null, backslash escapes), and back. Written where the rows are mapped (the mapping thread, or the
 * PostgreSQL importer), read back only when a chunk cannot go in by COPY alone (postgres/chunk.ts).
 *
 * A mapped value's JavaScript type follows its field's type (integer, decimal and boolean fields map to
 * numbers, the others to texts: mapping/convert.ts), so the text reads back to the same values: a
 * number is written as `'' + n`, the shortest text that reads back as the same double (also the text
 * pg writes for an array parameter), and a text is unescaped to the same UTF-16 code units, lone
 * surrogates included (the text stays a JavaScript string until it is sent).
 */
import type { SqlValue } from '../mapping/convert.js';
import type { FieldType } from '../tables/model.js';

// eslint-disable-next-line no-control-regex -- NUL is what COPY cannot carry: it is looked for.
const NEEDS_ESCAPE = /[\\\n\r\t\u0000]/;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const UNESCAPES: Readonly<Record<string, string>> = { '\\': '\\', n: '\n', r: '\r', t: '\t' };

/** COPY text as a string, or as its UTF-8 bytes (json-copy.ts writes those). */
export type CopyText = string | Uint8Array;

/** The text of COPY text bytes (to read them back, or to number their lines for staging). */
export const copyString = (text: CopyText): string =>
  typeof text === 'string' ? text : Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('utf8');

/** One value in COPY text; undefined: it cannot be written (a NUL character, which PostgreSQL text cannot hold). */
export function copyPart(value: SqlValue): string | undefined {
  if (typeof value !== 'string') return value === null ? '\\N' : '' + value;
  if (!NEEDS_ESCAPE.test(value)) return value;
  if (value.includes('\u0000')) return undefined;
  return value.replace(/[\\\n\r\t]/g, (c) => ESCAPES[c]!);
}

/** One row's line of COPY text: `width` values of `values` from `from`; null when a value cannot be written. */
export function copyLine(values: readonly SqlValue[], from: number, width: number): string | null {
  let line = '';
  for (let c = 0; c < width; c++) {
    const part = copyPart(values[from + c]!);
    if (part === undefined) return null;
    line += c === 0 ? part : '\t' + part;
  }
  return line + '\n';
}

/** The COPY text of rows, one string; null when a value cannot be written. */
export function copyRows(rows: readonly (readonly SqlValue[])[]): string | null {
  let text = '';
  for (const row of rows) {
    const line = copyLine(row, 0, row.length);
    if (line === null) return null;
    text += line;
  }
  return text;
}

/** The same for `values` holding `width` values per row, row after row (mapped-batches.ts MappedBatch). */
export function copyFlat(values: readonly SqlValue[], width: number): string | null {
  let text = '';
  for (let at = 0; at < values.length; at += width) {
    const line = copyLine(values, at, width);
    if (line === null) return null;
    text += line;
  }
  return text;
}

/** Whether a field's mapped values are numbers (see the module comment). */
export const mapsToNumber = (type: FieldType): boolean => type === 'integer' || type === 'decimal' || type === 'boolean';

/** The rows of COPY text written by copyRows or copyFlat, as they were: `numeric[c]` says column c holds numbers. */
export function readCopyRows(text: string, numeric: readonly boolean[]): SqlValue[][] {
  const lines = text.split('\n');
  lines.pop();
  return lines.map((line) =>
    line.split('\t').map((part, c): SqlValue => {
      if (part === '\\N') return null;
      if (numeric[c] === true) return Number(part);
      return part.includes('\\') ? part.replace(/\\([\\nrt])/g, (_, c: string) => UNESCAPES[c]!) : part;
    }),
  );
}
