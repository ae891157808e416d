/**
 * HTML by tagged template with escaping by default: every interpolated value is escaped unless it is
 * already `Html`. The boundary is closed: an `Html` is made only by the `html` tag and by `trusted`
 * (which lint allows inside src/console/ only); its constructor refuses any caller without this
 * module's private token, and a look-alike object (`Object.create(Html.prototype)`) lacks the private
 * field the templates check. A page can therefore only put markup on the wire that a template of ours
 * wrote; a payload value, a remote API's record or an error message is always text.
 *
 * A value in a URL attribute (`href`, `src`, `action`, `formaction`, `hx-get`, `hx-post`, …) must
 * also be a relative URL on this origin or an http(s) URL: anything else (`javascript:`, `data:`,
 * `vbscript:`, `//other.host`, `/\other.host`) renders as `#`.
 */
const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '\0': '\uFFFD' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'\0]/g, (c) => ESCAPES[c] ?? c);
}

const UNESCAPES: Readonly<Record<string, string>> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescapeHtml = (markup: string): string => markup.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => UNESCAPES[e] ?? e);

/** Only this module holds it: the one key to Html's constructor. */
const MINT: unique symbol = Symbol('Html');

/** Markup that is safe to send as is. Only `html` and `trusted` make one. */
export class Html {
  readonly #markup: string;
  constructor(token: typeof MINT, markup: string) {
    if (token !== MINT) throw new TypeError('Html is made by the html template tag or trusted(), not by new Html()');
    this.#markup = markup;
  }
  get markup(): string {
    return this.#markup;
  }
  toString(): string {
    return this.#markup;
  }
  /** Whether a value is an Html this module made (the private field, not the prototype, decides). */
  static is(value: unknown): value is Html {
    return typeof value === 'object' && value !== null && #markup in value;
  }
}

/** Values a template accepts: nothing renders for null, undefined and false; arrays render each item. */
export type Interpolation = Html | string | number | bigint | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (Html.is(value)) return value.markup;
  if (Array.isArray(value)) return (value as readonly Interpolation[]).map(render).join('');
  if (typeof value === 'object') throw new TypeError('an html template takes Html, text, numbers or arrays of them');
  return escapeHtml(String(value));
}

/** Attributes whose value the browser follows as a URL, right before the interpolated value. */
const URL_ATTRIBUTE =
  /[\s"'](?:href|src|action|formaction|poster|cite|background|xlink:href|hx-(?:get|post|put|patch|delete))\s*=\s*["']?$/i;

/** Where a URL may point: http(s), or a relative reference that stays on this origin. */
const ALLOWED_SCHEME = /^https?:/i;
const ANY_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * The URL as given when a browser would follow it to this origin or to an http(s) URL; otherwise `#`.
 * Read as a browser reads it: tab, CR and LF removed anywhere, leading spaces and control characters
 * ignored, and a backslash taken as a slash (so `/\host` is `//host`, another host).
 */
export function safeUrl(url: string): string {
  // eslint-disable-next-line no-control-regex
  const read = url.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+/, '');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(read)) return '#';
  if (ANY_SCHEME.test(read)) return ALLOWED_SCHEME.test(read) && /^https?:\/\/[^/\\]/i.test(read.replace(/\\/g, '/')) ? url : '#';
  if (/^[/\\]{2}/.test(read)) return '#';
  return url;
}

/** The text of a value in a URL attribute, as the browser will read it, checked. */
function renderUrl(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  const text = Html.is(value) || Array.isArray(value) ? unescapeHtml(render(value)) : String(value);
  return escapeHtml(safeUrl(text));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) {
    const before = strings[i] ?? '';
    out += (URL_ATTRIBUTE.test(before) ? renderUrl(values[i]) : render(values[i])) + (strings[i + 1] ?? '');
  }
  return new Html(MINT, out);
}

/**
 * Markup written by the service itself (a vendored asset's tag). Never for input. Lint allows it
 * inside src/console/ only: a feature's page is written with `html` and the partials.
 */
export const trusted = (markup: string): Html => new Html(MINT, markup);

/** A URL path with each segment's values percent-encoded: `path(['requests', id])` → `/requests/<id>`. */
export function path(segments: readonly (string | number)[], query?: Readonly<Record<string, string | number | undefined>>): string {
  const base = '/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
  if (query === undefined) return base;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs === '' ? base : `${base}?${qs}`;
}
