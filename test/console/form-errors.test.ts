/**
 * Placing the API's messages on a form's inputs: the path at the start of a message says which
 * input, a list item is the row the form sent it from (counted from 1 as the user counts), other
 * items named in the reason are rows too, and a message that names no input stays as it is.
 */
import { describe, expect, it } from 'vitest';
import { formErrors, numberAt, placeError, type FormPlaces } from '../../src/console/form-errors.js';
import { AppError } from '../../src/core/errors.js';

// The form sent rows 0, 2 and 3 as fields[0..2] (row 1 was blank) and rows 2 and 3 as mappings[0..1].
const fieldRows = [0, 2, 3];
const mappingRows = [2, 3];
const places: FormPlaces = {
  inputs: { name: { name: 'name', label: 'Name' } },
  groups: {
    fields: {
      label: 'Fields',
      row: (k) => fieldRows[k],
      inputs: {
        sourcePath: { name: (r) => `row.${r}.sourcePath`, label: 'Source path' },
        fieldNo: { name: (r) => `row.${r}.fieldNo`, label: 'Field No.' },
      },
    },
    mappings: {
      label: 'Fields',
      row: (k) => mappingRows[k],
      inputs: { targetField: { name: (r) => `row.${r}.targetField`, label: 'Target field' } },
    },
  },
};

describe('placeError', () => {
  it.each([
    ['name: must not be empty', 'name', 'Name: must not be empty'],
    ['fields[1].sourcePath: must not be empty', 'row.2.sourcePath', 'Fields, row 3, Source path: must not be empty'],
    [
      'fields[2].fieldNo: field 4 is listed twice (also [0])',
      'row.3.fieldNo',
      'Fields, row 4, Field No.: field 4 is listed twice (also row 1)',
    ],
    [
      'mappings[1].targetField: "a" already receives field 1 (also [0])',
      'row.3.targetField',
      'Fields, row 4, Target field: "a" already receives field 1 (also row 3)',
    ],
  ])("places %j on its input in the form's words", (message, input, words) => {
    expect(placeError(message, places)).toEqual({ input, words });
  });

  it.each([
    'Integration 3 accepts bulk import requests and the mapping of field 2 is its last mapping.',
    'headers.X-Key: must not contain line breaks',
    'recordsPath: not an input of this form',
    'fields[9].sourcePath: no row sent this item',
    "REST API endpoint 'a' would no longer be valid with this connection: path: is on another origin",
  ])('leaves %j as it is, on no input', (message) => {
    expect(placeError(message, places)).toEqual({ words: message });
  });

  it('names the row of an item whose property is not on the form', () => {
    expect(placeError('fields[0].title: must not be empty', places)).toEqual({ words: 'Fields, row 1: must not be empty' });
  });
});

describe('formErrors', () => {
  it('gives the one input its error and the focus, and nothing to the others', () => {
    const errors = formErrors('fields[1].sourcePath: must not be empty', places);
    expect(errors.summary).toBe('Fields, row 3, Source path: must not be empty');
    expect(errors.on('row.2.sourcePath')).toEqual({ error: 'Fields, row 3, Source path: must not be empty', autofocus: true });
    expect(errors.on('row.0.sourcePath')).toEqual({});
    expect(formErrors(undefined, places).on('name')).toEqual({});
  });
});

describe('numberAt', () => {
  it('reads a whole number, blank as none, and refuses anything else at its path', () => {
    expect(numberAt(' 42 ', 'timeoutMs')).toBe(42);
    expect(numberAt('', 'timeoutMs')).toBeNull();
    expect(() => numberAt('4.2', 'fields[3].fieldNo')).toThrow(
      new AppError(400, 'invalidRequest', 'fields[3].fieldNo: must be a whole number from -2147483648 to 2147483647, got "4.2"'),
    );
  });
});
