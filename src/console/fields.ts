/**
 * Form fields: a control of a kind (text, number, password, url, date and time, text area, select,
 * checkbox), and a field around it with its label (`for`/`id`), help text, a notice and inline error,
 * all named by `aria-describedby`, the error also by `aria-invalid`; `cell` is a control in a table
 * cell with its own error under it. A form's error banner is `formError`.
 */
import { html, type Html, type Interpolation } from './html.js';

type Value = string | number | null | undefined;
/** An option of a select: its value, or its value and its text. */
export type Option = string | readonly [value: string, text: string];

interface Common {
  readonly name: string;
  /** Default: the name. */
  readonly id?: string;
  readonly required?: boolean;
  readonly disabled?: boolean;
  readonly autocomplete?: string;
  readonly placeholder?: string;
  readonly maxlength?: number;
  readonly min?: number;
  readonly size?: number;
  readonly autofocus?: boolean;
  /** Further attributes written by the page (`hx-get="…"`, …). */
  readonly attributes?: Html;
}

export type Input = Common &
  (
    | { readonly kind?: 'text' | 'number' | 'password' | 'url' | 'datetime-local'; readonly value?: Value }
    | { readonly kind: 'textarea'; readonly value?: Value; readonly rows?: number }
    | { readonly kind: 'select'; readonly options: readonly Option[]; readonly value?: Value; readonly blank?: string }
    | { readonly kind: 'checkbox'; readonly checked: boolean; readonly value?: string }
  );

export type FieldSpec = Input & {
  readonly label: Interpolation;
  readonly help?: Interpolation;
  /** What is wrong with the value, shown under it and announced with it. */
  readonly error?: string;
  /** Something the user must know about the value as shown (a secret that was not sent back). */
  readonly notice?: Interpolation;
  /** When the value is needed only in some cases, which: shown in the label, "(required for …)". */
  readonly requiredFor?: string;
  /** The wrapper's class: `field` by default; `check` for a checkbox in a list; '' for a filter form's plain div. */
  readonly className?: string;
};

/** How a bare control is named and described when it has no field around it (a cell of a table). */
export interface Described {
  readonly ariaLabel?: string;
  readonly describedBy?: string;
  readonly invalid?: boolean;
}

const text = (v: Value): string => (v === null || v === undefined ? '' : String(v));
const flag = (on: boolean | undefined, name: string): Html | string => (on === true ? html` ${name}` : '');
const optionOf = (o: Option): readonly [string, string] => (typeof o === 'string' ? [o, o] : o);

/** A control alone: an input, a text area, a select or a checkbox. */
export function control(input: Input, described: Described = {}): Html {
  const id = input.id ?? input.name;
  const attrs = html`${described.ariaLabel === undefined ? '' : html` aria-label="${described.ariaLabel}"`}${
    described.describedBy === undefined || described.describedBy === '' ? '' : html` aria-describedby="${described.describedBy}"`
  }${described.invalid === true ? html` aria-invalid="true"` : ''}${flag(input.required, 'required')}${flag(input.disabled, 'disabled')}${flag(
    input.autofocus,
    'autofocus',
  )}${input.autocomplete === undefined ? '' : html` autocomplete="${input.autocomplete}"`}${
    input.placeholder === undefined ? '' : html` placeholder="${input.placeholder}"`
  }${input.maxlength === undefined ? '' : html` maxlength="${input.maxlength}"`}${input.min === undefined ? '' : html` min="${input.min}"`}${
    input.size === undefined ? '' : html` size="${input.size}"`
  }${input.attributes ?? ''}`;
  switch (input.kind) {
    case 'textarea':
      return html`<textarea id="${id}" name="${input.name}" rows="${input.rows ?? 3}" ${attrs}>${text(input.value)}</textarea>`;
    case 'select': {
      const selected = text(input.value);
      return html`<select id="${id}" name="${input.name}" ${attrs}>
        ${input.blank === undefined ? '' : html`<option value="">${input.blank}</option>`}
        ${input.options.map(optionOf).map(([value, label]) => html`<option value="${value}" ${value === selected ? html` selected` : ''}>${label}</option>`)}
      </select>`;
    }
    case 'checkbox':
      return html`<input
        type="checkbox"
        id="${id}"
        name="${input.name}"
        ${input.value === undefined ? '' : html` value="${input.value}"`}${input.checked ? html` checked` : ''}${attrs}
      />`;
    case undefined:
    case 'text':
      return html`<input id="${id}" name="${input.name}" value="${text(input.value)}" ${attrs} />`;
    case 'number':
    case 'password':
    case 'url':
    case 'datetime-local':
      return html`<input id="${id}" name="${input.name}" type="${input.kind}" value="${text(input.value)}" ${attrs} />`;
    default: {
      const never: never = input;
      return never;
    }
  }
}

/** A labelled field: label, control, help, notice and inline error, tied together by ids. */
export function field(spec: FieldSpec): Html {
  const id = spec.id ?? spec.name;
  const helpId = spec.help === undefined ? undefined : `${id}-hint`;
  const noticeId = spec.notice === undefined ? undefined : `${id}-notice`;
  const errorId = spec.error === undefined ? undefined : `${id}-error`;
  const describedBy = [helpId, noticeId, errorId].filter((x) => x !== undefined).join(' ');
  const input = control({ ...spec, id }, { describedBy, invalid: spec.error !== undefined });
  const className = spec.className ?? 'field';
  const inline = spec.kind === 'checkbox';
  const help =
    helpId === undefined
      ? ''
      : className === 'check'
        ? html`<span class="hint" id="${helpId}">${spec.help}</span>`
        : html`<p class="hint" id="${helpId}">${spec.help}</p>`;
  const notice = noticeId === undefined ? '' : html`<p class="warning" id="${noticeId}">${spec.notice}</p>`;
  const error = errorId === undefined ? '' : html`<p class="field-error" id="${errorId}">${spec.error}</p>`;
  const requiredFor = spec.requiredFor === undefined ? '' : html` <span class="hint">(required for ${spec.requiredFor})</span>`;
  const label = html`<label for="${id}" ${inline && className !== 'check' ? html` class="inline"` : ''}
    >${spec.label}${requiredFor}</label
  >`;
  return html`<div ${className === '' ? '' : html` class="${className}"`}>
    ${inline ? html`${input} ${label}` : html`${label}${input}`} ${help} ${notice} ${error}
  </div>`;
}

/**
 * A control in a table cell, named for screen readers by `ariaLabel` (its column and row), with its
 * error under it when it has one: `aria-invalid`, described by the error.
 */
export function cell(input: Input, described: { readonly ariaLabel: string; readonly error?: string | undefined }): Html {
  const id = input.id ?? input.name;
  if (described.error === undefined) return control(input, { ariaLabel: described.ariaLabel });
  const errorId = `${id}-error`;
  return html`${control({ ...input, id }, { ariaLabel: described.ariaLabel, describedBy: errorId, invalid: true })}
    <p class="field-error" id="${errorId}">${described.error}</p>`;
}

/** The banner above a form that was refused (or an action that failed): the reason, announced at once. */
export function formError(error: Html | string | undefined, id?: string): Html | string {
  return error === undefined ? '' : html`<div class="flash error" role="alert" ${id === undefined ? '' : html` id="${id}"`}>${error}</div>`;
}
