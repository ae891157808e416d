/**
 * The console's one table: columns declared once (header, cell, numeric alignment, whether shown),
 * rows rendered through them, and the empty state in words when there are no rows. Every table sits
 * in its own horizontal scroll area, so that a wide table scrolls by itself on a narrow screen instead
 * of widening the page; the area takes the keyboard focus (arrow keys scroll it) and is named.
 */
import { html, type Html, type Interpolation } from './html.js';

export interface Column<Row> {
  readonly header: Interpolation;
  readonly cell: (row: Row, index: number) => Interpolation;
  /** Numbers are right-aligned, header and cells alike. */
  readonly numeric?: boolean;
  /** false: the column is left out (a column only some users get). */
  readonly show?: boolean;
}

export interface TableOptions<Row> {
  readonly columns: readonly Column<Row>[];
  readonly rows: readonly Row[];
  /** Shown in one row across the table when there are no rows; undefined: an empty body. */
  readonly empty?: string;
  /** Read by screen readers only; also the name of the table's scroll area. */
  readonly caption?: string;
  /** The scroll area's name when there is no caption; default: the first column headers. */
  readonly label?: string;
  /** Attributes of a row's `<tr>`, such as `data-request="…"`. */
  readonly rowAttributes?: (row: Row) => Html;
}

/** A name for the scroll area from the headers that are text: "Table: Entry, Status, Last run". */
function headersLabel<Row>(columns: readonly Column<Row>[]): string {
  const names = columns.map((c) => c.header).filter((h): h is string => typeof h === 'string' && h !== '');
  return names.length === 0 ? 'Table' : `Table: ${names.slice(0, 3).join(', ')}`;
}

export function table<Row>(options: TableOptions<Row>): Html {
  const columns = options.columns.filter((c) => c.show !== false);
  const num = (c: Column<Row>) => (c.numeric === true ? html` class="num"` : '');
  const label = options.caption ?? options.label ?? headersLabel(columns);
  return html`<div class="table-scroll" role="region" tabindex="0" aria-label="${label}">
    <table>
      ${
        options.caption === undefined
          ? ''
          : html`<caption class="visually-hidden">
              ${options.caption}
            </caption>`
      }
      <thead>
        <tr>
          ${columns.map((c) => html`<th scope="col" ${num(c)}>${c.header}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${options.rows.map(
          (row, i) =>
            html`<tr ${options.rowAttributes?.(row) ?? ''}>
              ${columns.map((c) => html`<td ${num(c)}>${c.cell(row, i)}</td>`)}
            </tr>`,
        )}
        ${
          options.rows.length === 0 && options.empty !== undefined
            ? html`<tr>
                <td colspan="${Math.max(1, columns.length)}" class="muted">${options.empty}</td>
              </tr>`
            : ''
        }
      </tbody>
    </table>
  </div>`;
}
