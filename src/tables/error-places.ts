/**
 * Where a refusal belongs in a form. The API's messages start with the path of what they refuse
 * (`fields[2].maxLength: must be between 1 and 2048, got 0`, see core/validation.ts); a form that
 * sends the same declaration names its inputs differently and counts rows from 1. `placeError` reads
 * the path against the form's shape and answers the input to mark and the message in the form's words
 * (`Fields, row 3, Length: must be between 1 and 2048, got 0`). It knows no feature: each form
 * declares its shape.
 */

/** An input of the form: its name (and id) and its label. */
export interface InputPlace {
  readonly input: string;
  readonly label: string;
}

/** A repeated group of rows: the API's array becomes inputs named `<prefix>.<row>.<input>`. */
export interface GroupPlace {
  readonly label: string;
  readonly prefix: string;
  /** The row's inputs by the API's property path within an item (`maxLength`, `relation.table`). */
  readonly inputs: Readonly<Record<string, InputPlace>>;
  /** The input that stands for a whole row (a refusal of the item itself, `fields[2]: …`). */
  readonly row: string;
}

export interface FormShape {
  /** Inputs outside the groups, by the API's property path. */
  readonly inputs: Readonly<Record<string, InputPlace>>;
  /** Groups by the API's array name. */
  readonly groups: Readonly<Record<string, GroupPlace>>;
}

export interface PlacedError {
  /** The name of the input to mark; undefined for the form as a whole. */
  readonly input?: string;
  /** With a group, the group it concerns (a refusal of the group as a whole, when `input` is undefined). */
  readonly group?: string;
  /** The message in the form's words. */
  readonly text: string;
}

const PATH = /^([A-Za-z_]\w*(?:\[\d+\]|\.[A-Za-z_]\w*)*): ([\s\S]*)$/;

/** `fields[2].options[1]` → ['fields', 2, 'options', 1]. */
function segments(path: string): (string | number)[] {
  return [...path.matchAll(/([A-Za-z_]\w*)|\[(\d+)\]/g)].map((m) => (m[1] !== undefined ? m[1] : Number(m[2])));
}

/** The longest leading run of property names that the map knows (`relation.table`, else `relation`). */
function known(rest: readonly (string | number)[], inputs: Readonly<Record<string, InputPlace>>): InputPlace | undefined {
  const names: string[] = [];
  for (const s of rest) {
    if (typeof s === 'number') break;
    names.push(s);
  }
  for (let n = names.length; n > 0; n--) {
    const key = names.slice(0, n).join('.');
    if (Object.hasOwn(inputs, key)) return inputs[key];
  }
  return undefined;
}

/**
 * `rowOf(group, index)`: the form's row (from 0) that sent the API's item `index` (a form leaves blank
 * rows out, so the two can differ); by default the same.
 */
export function placeError(
  message: string,
  shape: FormShape,
  rowOf: (group: string, index: number) => number = (_group, index) => index,
): PlacedError {
  const m = PATH.exec(message);
  if (m === null) return { text: message };
  const [, path = '', reason = ''] = m;
  const [first, ...rest] = segments(path);
  if (typeof first !== 'string') return { text: message };
  const group = Object.hasOwn(shape.groups, first) ? shape.groups[first] : undefined;
  if (group !== undefined) {
    const [index, ...inner] = rest;
    if (typeof index !== 'number') return { group: first, text: `${group.label}: ${reason}` };
    const row = rowOf(first, index);
    const place = known(inner, group.inputs);
    const input = `${group.prefix}.${row}.${place?.input ?? group.row}`;
    return { input, group: first, text: `${group.label}, row ${row + 1}${place === undefined ? '' : `, ${place.label}`}: ${reason}` };
  }
  const place = known([first, ...rest], shape.inputs);
  if (place === undefined) return { text: message };
  return { input: place.input, text: `${place.label}: ${reason}` };
}
