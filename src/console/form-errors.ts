/**
 * A refused form's error where it happened. The API's rules name the property at fault at the start
 * of their message (`fields[2].sourcePath: must not be empty`, items counted from 0); a page says once
 * which input shows each property, in its own words, and `formErrors` finds the input, says the path
 * as the user sees it ("Fields, row 3, Source path: must not be empty"), and hands that input its
 * error and the focus (`autofocus`, which needs no script). The rules and their reasons stay the
 * API's: only the path is placed and reworded. A message that names no input of the form (a conflict
 * with another record, a header the form does not show) stays in the banner above the form as it is.
 */
import { INTEGER_MAX, INTEGER_MIN } from '../core/bounds.js';
import { invalidAt } from '../core/validation.js';
import { wholeNumber } from './route-input.js';

/** An input of the form: its `name`, and the words for it. */
export interface InputPlace {
  readonly name: string;
  readonly label: string;
}

/** A list property of the API shown as rows of the form (`fields[2]` as the card's third row). */
export interface GroupPlace {
  /** The group in words: "Fields". */
  readonly label: string;
  /** The form's row (from 0) that sent the list's item `index`; undefined when no row did. */
  readonly row: (index: number) => number | undefined;
  /** Each property of an item: the name of its input in a row, and the words for it. */
  readonly inputs: Readonly<Record<string, { readonly name: (row: number) => string; readonly label: string }>>;
}

/** Where a form shows each property the API's messages may name. */
export interface FormPlaces {
  readonly inputs?: Readonly<Record<string, InputPlace>>;
  readonly groups?: Readonly<Record<string, GroupPlace>>;
}

export interface FormErrors {
  /** The message in the user's words, for the banner above the form; undefined when none. */
  readonly summary: string | undefined;
  /** The name of the input that shows it (and takes the focus), when one does. */
  readonly input: string | undefined;
  /** What a field of this name shows: spread it into the field, `field({ name, label, ...errors.on(name) })`. */
  on(name: string): { readonly error?: string; readonly autofocus?: boolean };
}

export const NO_ERRORS: FormErrors = { summary: undefined, input: undefined, on: () => ({}) };

/** `name: reason`, `name[3]: reason` or `name[3].property: reason`; anything else names no input. */
const PATH = /^([A-Za-z][A-Za-z0-9]*)(?:\[(\d{1,6})\](?:\.([A-Za-z][A-Za-z0-9]*))?)?: ([\s\S]*)$/;

/** Where the API's message belongs on the form, and the message in the form's words. */
export function placeError(message: string, places: FormPlaces): { readonly input?: string; readonly words: string } {
  const match = PATH.exec(message);
  if (match === null) return { words: message };
  const [, property = '', index, itemProperty, reason = ''] = match;
  if (index === undefined) {
    const place = places.inputs?.[property];
    return place === undefined ? { words: message } : { input: place.name, words: `${place.label}: ${reason}` };
  }
  const group = places.groups?.[property];
  const row = group?.row(Number(index));
  if (group === undefined || row === undefined) return { words: message };
  // "(also [1])" in a reason is another item of the same list: the user knows it by its row too.
  const said = reason.replace(/\[(\d{1,6})\]/g, (text, other: string) => {
    const otherRow = group.row(Number(other));
    return otherRow === undefined ? text : `row ${otherRow + 1}`;
  });
  const inputOf = itemProperty === undefined ? undefined : group.inputs[itemProperty];
  const where = `${group.label}, row ${row + 1}${inputOf === undefined ? '' : `, ${inputOf.label}`}`;
  return inputOf === undefined ? { words: `${where}: ${said}` } : { input: inputOf.name(row), words: `${where}: ${said}` };
}

/** The errors of a form shown again after `message` refused it (none when undefined). */
export function formErrors(message: string | undefined, places: FormPlaces): FormErrors {
  if (message === undefined) return NO_ERRORS;
  const { input, words } = placeError(message, places);
  return {
    summary: words,
    input,
    on: (name) => (name === input ? { error: words, autofocus: true } : {}),
  };
}

/**
 * A form's whole number at the API path `path`: null when blank, else the number, or a 400 placed at
 * that path as the API's own rules place theirs.
 */
export function numberAt(raw: string | undefined, path: string): number | null {
  const text = (raw ?? '').trim();
  if (text === '') return null;
  const n = wholeNumber(text);
  if (n === null) throw invalidAt(path, `must be a whole number from ${INTEGER_MIN} to ${INTEGER_MAX}, got "${text}"`);
  return n;
}
