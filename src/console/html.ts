/**
 * HTML by tagged template with escaping by default: every interpolated value is escaped unless it is
 * already `Html` (the result of another `html` template or of `trusted`). A page can therefore only
 * put markup on the wire that a template of ours wrote; a payload value, a remote API's record or an
 * error message is always text.
 */
const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** Markup that is safe to send as is. Only `html` and `trusted` make one. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

/** Values a template accepts: nothing renders for null, undefined and false; arrays render each item. */
export type Interpolation = Html | string | number | bigint | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return (value as readonly Interpolation[]).map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** Markup written by the service itself (an inline SVG it computed, a vendored asset's tag). Never for input. */
export const trusted = (markup: string): Html => new Html(markup);

/** A URL path with each segment's values percent-encoded: `href(['requests', id])` → `/requests/<id>`. */
export function path(segments: readonly (string | number)[], query?: Readonly<Record<string, string | number | undefined>>): string {
  const base = '/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
  if (query === undefined) return base;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs === '' ? base : `${base}?${qs}`;
}
