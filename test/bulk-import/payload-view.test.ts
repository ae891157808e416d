/** The console's payload view (payload-view.ts): pretty-printing that survives a cut text, and which record each piece belongs to. */
import { describe, expect, it } from 'vitest';
import { prettyPayload, recordsPathKeys } from '../../src/bulk-import/payload-view.js';

const records = (text: string, path = '$') =>
  prettyPayload(text, path)
    .filter((p) => p.record !== null)
    .map((p) => [p.record, p.text]);

describe('prettyPayload', () => {
  it('indents a root array of records two spaces a level and tags each record', () => {
    const pieces = prettyPayload('[{"a":1,"b":[1,2]},{"a":"x,y:{"}]', '$');
    expect(pieces.map((p) => p.text).join('')).toBe(
      '[\n  {\n    "a": 1,\n    "b": [\n      1,\n      2\n    ]\n  },\n  {\n    "a": "x,y:{"\n  }\n]',
    );
    expect(records('[{"a":1,"b":[1,2]},{"a":"x,y:{"}]')).toEqual([
      [1, '{\n    "a": 1,\n    "b": [\n      1,\n      2\n    ]\n  }'],
      [2, '{\n    "a": "x,y:{"\n  }'],
    ]);
  });

  it('finds the records under a plain Records Path, not in other arrays', () => {
    const text = '{"meta":{"tags":["t1","t2"]},"data":{"items":[{"n":1},{"n":2},{"n":3}]}}';
    expect(records(text, '$.data.items[*]').map(([n]) => n)).toEqual([1, 2, 3]);
    expect(records(text, '$.data.items[*]')[2]).toEqual([3, '{\n        "n": 3\n      }']);
    expect(records('[1,"two",null]').map(([n, t]) => `${String(n)}=${String(t)}`)).toEqual(['1=1', '2="two"', '3=null']);
  });

  it('prints a text cut in the middle of a string or a record without failing, the cut record still tagged', () => {
    const cut = '[{"no":"A"},{"no":"B","name":"Bé\\"';
    const pieces = prettyPayload(cut, '$');
    expect(pieces.map((p) => p.text).join('')).toBe('[\n  {\n    "no": "A"\n  },\n  {\n    "no": "B",\n    "name": "Bé\\"');
    expect(pieces.at(-1)?.record).toBe(2);
    expect(
      prettyPayload('{}', '$')
        .map((p) => p.text)
        .join(''),
    ).toBe('{\n}');
  });

  it('reads plain Records Paths only', () => {
    expect(recordsPathKeys('$')).toEqual([]);
    expect(recordsPathKeys('$[*]')).toEqual([]);
    expect(recordsPathKeys('$.data.items[*]')).toEqual(['data', 'items']);
    expect(recordsPathKeys('$..items[?(@.a)]')).toBeNull();
  });
});
