/**
 * The partials every page is made of: a status badge, times in UTC, definition lists, a button that
 * posts (asking first when it is destructive), a pager, a live region, and, from their own files, the
 * table (table.ts) and form fields (fields.ts). A page writes its own markup only for what is its own.
 */
import { field } from './fields.js';
import { html, type Html, type Interpolation } from './html.js';

export { table, type Column, type TableOptions } from './table.js';
export { control, field, formError, type FieldSpec, type Input, type Option } from './fields.js';

export const statusBadge = (status: string): Html => html`<span class="status status-${status.replace(/\s+/g, '')}">${status}</span>`;

/** `2026-11-24T10:00:00.123Z` → `2026-11-24 10:00:00 UTC`, in a <time> element that keeps the exact value. */
export function time(iso: string | null | undefined): Html | string {
  if (iso === null || iso === undefined || iso === '') return '—';
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')} UTC</time>`;
}

export function fields(rows: readonly (readonly [string, Interpolation])[]): Html {
  return html`<dl class="fields">
    ${rows.map(
      ([label, value]) =>
        html`<dt>${label}</dt>
          <dd>${value === '' || value === null || value === undefined ? '—' : value}</dd>`,
    )}
  </dl>`;
}

export interface ActionButton {
  readonly action: string;
  readonly label: string;
  /**
   * The button's accessible name where the label alone repeats on the page (a button per row):
   * `Set On Hold: Bulk Import Processor`. It starts with the label, so that speech input finds it.
   */
  readonly accessibleName?: string;
  readonly csrfToken: string;
  /** Asked before the action runs; undefined: no question. */
  readonly confirm?: string;
  readonly enabled?: boolean;
  /** Why the button is disabled, shown beside it. */
  readonly disabledReason?: string;
  readonly danger?: boolean;
  /** A secondary action's look. */
  readonly secondary?: boolean;
  /**
   * The answer is a page to show (a test result), not a redirect: the form posts as a plain form, without
   * htmx (which would swap the page into the form). Such a button cannot ask first.
   */
  readonly showsPage?: boolean;
}

/**
 * A button that posts a form. With htmx it asks `confirm` first; without script it is a plain form
 * post (the CSRF token is a field either way). A disabled button says why.
 */
export function actionButton(b: ActionButton): Html {
  const enabled = b.enabled ?? true;
  const htmx = enabled && b.showsPage !== true;
  const look = b.danger === true ? 'danger' : b.secondary === true ? 'secondary' : undefined;
  return html`<form
    class="inline"
    method="post"
    action="${b.action}"
    ${htmx ? html` hx-post="${b.action}"` : ''}${b.confirm !== undefined && htmx ? html` hx-confirm="${b.confirm}"` : ''}
  >
    <input type="hidden" name="_csrf" value="${b.csrfToken}" /><button
      type="submit"
      ${look === undefined ? '' : html` class="${look}"`}${enabled ? '' : html` disabled`}${
        b.accessibleName === undefined ? '' : html` aria-label="${b.accessibleName}"`
      }
    >
      ${b.label}</button
    >${!enabled && b.disabledReason !== undefined ? html` <span class="hint">${b.disabledReason}</span>` : ''}
  </form>`;
}

/** A filter form's select of options with one selected; the first option is "any" with an empty value. */
export function select(
  name: string,
  label: string,
  options: readonly (readonly [string, string])[],
  selected: string | undefined,
  any = 'Any',
): Html {
  return field({ kind: 'select', name, id: `f-${name}`, label, options, value: selected, blank: any, className: '' });
}

export interface PagerLink {
  readonly href: string;
  readonly label: string;
}

/** Links to the previous (or first) and next page of a list, and where the reader is. */
export function pager(p: { readonly previous?: PagerLink; readonly next?: PagerLink; readonly position?: Interpolation }): Html {
  return html`<nav class="pager" aria-label="Pages">
    ${p.previous === undefined ? '' : html`<a href="${p.previous.href}">${p.previous.label}</a>`}
    ${p.position === undefined ? '' : html`<span>${p.position}</span>`}
    ${p.next === undefined ? '' : html`<a href="${p.next.href}" rel="next">${p.next.label}</a>`}
  </nav>`;
}

/** How often a live region asks for itself again: one interval for the whole console. */
export const LIVE_REFRESH = '2s';

export interface LiveRegion {
  /** The element's id: what a refresh replaces. */
  readonly id: string;
  /** Where the region's fresh markup comes from (the page's own URL, answered as a fragment to htmx). */
  readonly url: string;
  /** false: the region has settled and stops asking (a run that ended). Default true. */
  readonly live?: boolean;
  readonly interval?: string;
}

/**
 * A region of a page that refreshes itself with htmx while it is live: every LIVE_REFRESH it asks its
 * URL (which answers the region alone when `ctx.partial`) and replaces itself. Announced politely.
 */
export function liveRegion(region: LiveRegion, body: Interpolation): Html {
  const live = region.live ?? true;
  return html`<div
    id="${region.id}"
    ${live ? html` hx-get="${region.url}" hx-trigger="every ${region.interval ?? LIVE_REFRESH}" hx-swap="outerHTML"` : ''}
    aria-live="polite"
  >
    ${body}
  </div>`;
}
