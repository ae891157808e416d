/**
 * The pieces of the streamed submit path on their own: the body scanner (escapes, \u escapes and
 * surrogate pairs cut at every position), the JSON text check against JSON.parse, and the record
 * stream at a records path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NumberText, parseJsonExact } from '../../src/core/exact-json.js';
import { JsonTextCheck } from '../../src/bulk-import/json-text-check.js';
import { SubmitBodyScanner } from '../../src/bulk-import/submit-body.js';
import { PayloadProblem, recordBatches } from '../../src/mapping/payload-stream.js';

function scan(body: Buffer, cuts: readonly number[]): { payload: string; members: Record<string, unknown> } {
  const out: Buffer[] = [];
  const members: Record<string, unknown> = {};
  const scanner = new SubmitBodyScanner(
    {
      onMember: (key, value) => (members[key] = value),
      onPayloadStart: () => undefined,
      onPayload: (bytes) => out.push(Buffer.from(bytes)),
      onPayloadEnd: () => undefined,
    },
    1024,
  );
  let from = 0;
  for (const cut of [...cuts, body.length]) {
    scanner.write(body.subarray(from, cut));
    from = cut;
  }
  expect(scanner.end()).toEqual({ object: true });
  return { payload: Buffer.concat(out).toString('utf8'), members };
}

describe('the submit body scanner', () => {
  const payload = 'q " b \\ s / \b \f \n \r \t é 中 😀 \u0001 end';
  const escaped = JSON.stringify(payload).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const body = Buffer.from(`{"@odata.type":"#x","payload":${escaped} , "integrationSortingOrder" : 10}`);

  it('unescapes the payload cut in two at every position, and in three at many', () => {
    for (let cut = 0; cut <= body.length; cut++) {
      expect(scan(body, [cut])).toEqual({ payload, members: { '@odata.type': '#x', integrationSortingOrder: 10 } });
    }
    for (let a = 0; a < body.length; a += 3) for (let b = a; b <= body.length; b += 7) expect(scan(body, [a, b]).payload).toBe(payload);
  });

  it('keeps raw UTF-8 cut inside a character, and writes a lone surrogate as its escape (the same to JSON, never U+FFFD)', () => {
    const raw = Buffer.from('{"payload":"é😀\\ud83d x\\ude00"}');
    for (let cut = 0; cut <= raw.length; cut++) expect(scan(raw, [cut]).payload).toBe('é😀\\ud83d x\\ude00');
  });

  it('refuses what is not JSON with malformedBody, and a property sent twice', () => {
    const scanner = () =>
      new SubmitBodyScanner(
        { onMember: () => undefined, onPayloadStart: () => undefined, onPayload: () => undefined, onPayloadEnd: () => undefined },
        1024,
      );
    expect(() => scanner().write(Buffer.from('{"payload":"a\\x"}'))).toThrow(/not valid JSON/);
    expect(() => scanner().write(Buffer.from('{"payload":"a"} x'))).toThrow(/not valid JSON/);
    expect(() => scanner().write(Buffer.from('{"payload":"a","payload":"b"}'))).toThrow(/twice/);
    const cut = scanner();
    cut.write(Buffer.from('{"payload":"abc'));
    expect(() => cut.end()).toThrow(/unexpected end/);
  });

  it('keeps a body that is not an object for the schema to judge', () => {
    const scanner = new SubmitBodyScanner(
      { onMember: () => undefined, onPayloadStart: () => undefined, onPayload: () => undefined, onPayloadEnd: () => undefined },
      1024,
    );
    scanner.write(Buffer.from('[1, 2]'));
    expect(scanner.end()).toEqual({ object: false, value: [1, 2] });
  });
});

describe('the JSON text check', () => {
  const texts = [
    '1',
    '-0',
    '-0.5e+10',
    '01',
    '1.',
    '"a\\u00e9"',
    '"\\x"',
    '[1,2,]',
    '{"a":1,"b":[true,false,null]}',
    '{"a" 1}',
    '{}',
    '[]',
    ' [ ] ',
    '[1 2]',
    'tru',
    'nul',
    '"\t"',
    '{"a":1}}',
    '1 2',
    '-',
    '[-]',
    '"ab',
    '[{"a":{"b":[1e5,2E-3,"x\\"y"]}}]',
    '{,}',
    '[,1]',
    '{"a":1,}',
    '',
    '"😀"',
    '[1e]',
    '[.5]',
    '{"a":[{}]}',
  ];
  it('agrees with JSON.parse whatever the pieces', () => {
    for (const text of texts) {
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      for (const step of [1, 2, 3, 100]) {
        const check = new JsonTextCheck();
        const bytes = Buffer.from(text);
        let ok = true;
        for (let i = 0; i < bytes.length; i += step) ok = check.write(bytes.subarray(i, i + step)) && ok;
        ok = ok && check.end();
        expect({ text, step, ok }).toEqual({ text, step, ok: valid });
        if (!valid) expect(check.failure).toMatch(/unexpected/);
      }
    }
  });
});

describe('records read from chunks', () => {
  const read = (text: string, path: string, step: number): unknown[] | string => {
    const bytes = Buffer.from(text);
    const open = function* () {
      for (let i = 0; i < bytes.length; i += step) yield bytes.subarray(i, i + step);
    };
    try {
      return [...recordBatches(open, path, 2, (t) => JSON.parse(t) as unknown[])].flat();
    } catch (err) {
      if (err instanceof PayloadProblem) return err.error.message;
      throw err;
    }
  };

  it('finds records at the root and deep inside, cut anywhere', () => {
    for (const step of [1, 5, 1000]) {
      expect(read('[1,{"a":"é😀"},[3]]', '', step)).toEqual([1, { a: 'é😀' }, [3]]);
      expect(read('{"x":{"big":[1,2]},"d":{"items":[{"n":1},{"n":2}]},"y":3}', 'd.items', step)).toEqual([{ n: 1 }, { n: 2 }]);
      expect(read('{"d":{"items":[]}}', '$.d.items', step)).toEqual([]);
    }
  });

  it('says what extractRecords says when the path is no array or the text no JSON', () => {
    expect(read('{"d":{"items":{"a":1}}}', 'd.items', 3)).toBe('payload: records path "d.items" does not point to an array');
    expect(read('{"d":{}}', 'd.items', 3)).toBe('payload: records path "d.items" does not point to an array');
    expect(read('{"a":1}', '', 3)).toBe("payload: the root is not an array (set the integration's records path)");
    expect(read('[1,2', '', 3)).toMatch(/^payload is not valid JSON: /);
    expect(read('[1,2] x', '', 3)).toMatch(/^payload is not valid JSON: /);
  });

  // The records at the root are read by a scanner and JSON.parse (root-array-stream.ts); whatever the
  // text and wherever it is cut, the answer is the whole text's: its records, or the same kind of error.
  it('reads the records at the root exactly as the whole text reads, however the text is cut', () => {
    const wholeAnswer = (text: string): unknown[] | string => {
      let value: unknown;
      try {
        value = parseJsonExact(text);
      } catch {
        return 'not JSON';
      }
      return Array.isArray(value) ? value : 'not an array';
    };
    const kind = (answer: unknown[] | string): unknown[] | string =>
      typeof answer !== 'string'
        ? answer
        : answer.startsWith('payload is not valid JSON')
          ? 'not JSON'
          : answer.includes('root is not an array')
            ? 'not an array'
            : answer;
    const record = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v));
    // Valid arrays, laid out with odd whitespace and escapes, and then often damaged by one edit.
    const spaces = fc.constantFrom('', ' ', '\n', '\t ', '\r\n');
    const arrayText = fc
      .tuple(
        fc.array(
          fc.tuple(
            spaces,
            fc.oneof(record, fc.constantFrom('"a\\"b"', '"\\\\"', '"\\ud83d\\ude00"', '12345678901234567', '1e400', '"é😀"')),
          ),
          { maxLength: 8 },
        ),
        spaces,
        spaces,
      )
      .map(([items, before, after]) => `${before}[${items.map(([sp, item]) => sp + item + sp).join(',')}]${after}`);
    const damaged = fc
      .tuple(arrayText, fc.nat(), fc.constantFrom('', ',', ']', '[', '}', '"', '\\', 'x', '1', ' '))
      .map(([text, at, edit]) => {
        const i = text.length === 0 ? 0 : at % text.length;
        return text.slice(0, i) + edit + text.slice(i + 1);
      });
    fc.assert(
      fc.property(fc.oneof(arrayText, damaged, record), fc.integer({ min: 1, max: 40 }), (edited, step) => {
        // As UTF-8 bytes (an edit may have split a surrogate pair, which UTF-8 cannot hold).
        const text = Buffer.from(edited).toString('utf8');
        expect(kind(read(text, '', step))).toEqual(wholeAnswer(text));
      }),
      { numRuns: 3000, seed: 20261125 },
    );
    expect(read('[12345678901234567]', '', 4)).toEqual([new NumberText('12345678901234567')]);
    expect(read(' [ ] ', '', 1)).toEqual([]);
  });
});
