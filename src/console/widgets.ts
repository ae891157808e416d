/** Small pieces most pages use: a status badge, times in UTC, definition lists, a confirmation form. */
import { html, type Html, type Interpolation } from './html.js';

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
  readonly csrfToken: string;
  /** Asked before the action runs; undefined: no question. */
  readonly confirm?: string;
  readonly enabled?: boolean;
  /** Why the button is disabled, shown beside it. */
  readonly disabledReason?: string;
  readonly danger?: boolean;
}

/**
 * A button that posts a form. With htmx it asks `confirm` first; without script it is a plain form
 * post (the CSRF token is a field either way). A disabled button says why.
 */
export function actionButton(b: ActionButton): Html {
  const enabled = b.enabled ?? true;
  return html`<form
    class="inline"
    method="post"
    action="${b.action}"
    ${enabled ? html` hx-post="${b.action}"` : ''}${b.confirm !== undefined && enabled ? html` hx-confirm="${b.confirm}"` : ''}
  >
    <input type="hidden" name="_csrf" value="${b.csrfToken}" /><button
      type="submit"
      ${b.danger === true ? html` class="danger"` : ''}${enabled ? '' : html` disabled`}
    >
      ${b.label}</button
    >${!enabled && b.disabledReason !== undefined ? html` <span class="hint">${b.disabledReason}</span>` : ''}
  </form>`;
}

/** A select of options with one selected; the first option is "any" with an empty value. */
export function select(
  name: string,
  label: string,
  options: readonly (readonly [string, string])[],
  selected: string | undefined,
  any = 'Any',
): Html {
  return html`<div>
    <label for="f-${name}">${label}</label
    ><select id="f-${name}" name="${name}">
      <option value="">${any}</option>
      ${options.map(([value, text]) => html`<option value="${value}" ${value === selected ? html` selected` : ''}>${text}</option>`)}
    </select>
  </div>`;
}
