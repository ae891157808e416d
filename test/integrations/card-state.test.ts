/**
 * The integration card's pure core: the last segment of a source path, the next free Field No., the
 * target fields suggested from source paths, and which card row sent each item of the API's lists.
 */
import { describe, expect, it } from 'vitest';
import {
  addRow,
  lastSegment,
  nextFieldNo,
  sentRows,
  suggestTargets,
  type CardRow,
  type CardState,
} from '../../src/integrations/card-state.js';

const row = (r: Partial<CardRow>): CardRow => ({
  fieldNo: '',
  title: '',
  sourcePath: '',
  columnType: 'standard',
  constantValue: '',
  targetField: '',
  required: '',
  ...r,
});
const card = (rows: CardRow[]): CardState => ({
  settings: {
    name: 'n',
    type: 'file',
    recordsPath: '',
    acceptBulkImportRequests: '',
    maxPayloadSizeKb: '',
    writeMode: 'insert',
    onRecordError: 'fail',
  },
  rows,
});

describe('the integration card', () => {
  it.each([
    ['email', 'email'],
    ['contact.email', 'email'],
    ['$.contact.address.city', 'city'],
    ["$.items[0]['zip']", 'zip'],
    ['$', undefined],
    ['', undefined],
  ])('reads the last segment of %j as %j', (path, segment) => {
    expect(lastSegment(path)).toBe(segment);
  });

  it('numbers a new row one past the highest Field No. typed, 1 on an empty card', () => {
    expect(nextFieldNo([])).toBe(1);
    expect(nextFieldNo([row({ fieldNo: '3' }), row({ fieldNo: '10' }), row({ fieldNo: 'x' })])).toBe(11);
    expect(addRow(card([row({ fieldNo: '4' })])).rows.map((r) => r.fieldNo)).toEqual(['4', '5']);
  });

  it('suggests a target field its source path names, case aside, once, never over a choice or for a constant', () => {
    const { state, suggested } = suggestTargets(
      card([
        row({ sourcePath: 'contact.EMAIL' }),
        row({ sourcePath: 'name', targetField: 'city' }),
        row({ sourcePath: 'other.email' }),
        row({ sourcePath: 'city' }),
        row({ columnType: 'constant', constantValue: 'DE', sourcePath: 'country' }),
        row({ sourcePath: 'nothing.like.it' }),
      ]),
      ['no', 'name', 'email', 'city', 'country'],
    );
    expect(state.rows.map((r) => [r.targetField, r.title])).toEqual([
      ['email', 'EMAIL'],
      ['city', ''],
      ['', ''],
      ['', ''],
      ['', ''],
      ['', ''],
    ]);
    expect(suggested).toBe(1);
  });

  it('sends each row that is not blank as a field, and as a mapping when it has a target field', () => {
    const rows = [
      row({ fieldNo: '1', title: 'A', sourcePath: 'a', targetField: 'a' }),
      row({ fieldNo: '2' }),
      row({ fieldNo: '3', title: 'C', sourcePath: 'c' }),
      row({ fieldNo: '4', columnType: 'constant', constantValue: 'x', targetField: 'd' }),
    ];
    expect(sentRows(card(rows))).toEqual({ fieldRows: [0, 2, 3], mappingRows: [0, 3] });
  });
});
