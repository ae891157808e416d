/**
 * The reader of records at the root of a payload (src/mapping/root-array-stream.ts) leaps over most
 * of a write: the text up to the last `,{"<first property>":` is parsed in one JSON.parse, and only
 * where that parse fails is the write scanned. Whatever the records and wherever the text is cut,
 * the answer is the whole text's (test/bulk-import/submit-body-scanner.test.ts holds the general
 * property); these tests are about the leaps: that they happen, and that the texts that mislead them
 * still read right.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NumberText, parseJsonExact } from '../../src/core/exact-json.js';
import { NotJson, RootArrayReader } from '../../src/mapping/root-array-stream.js';

/** The records of `text` read in writes of `step` bytes, the reader's scanned bytes, or the error's message. */
function read(text: string | Buffer, step: number): { records: unknown[]; scanned: number } | { error: string } {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const reader = new RootArrayReader();
  const records: unknown[] = [];
  try {
    for (let i = 0; i < bytes.length; i += step) {
      if (reader.write(bytes.subarray(i, i + step)) >= 0) return { error: 'not an array' };
      records.push(...reader.take());
    }
    reader.end();
  } catch (err) {
    if (err instanceof NotJson) return { error: 'not JSON' };
    throw err;
  }
  if (reader.count !== records.length) throw new Error(`count ${reader.count} for ${records.length} records`);
  return { records, scanned: reader.scanned };
}

const customers = (n: number): object[] =>
  Array.from({ length: n }, (_, i) => ({
    no: `C${i}`,
    name: `Customer ${i}`,
    address: { city: 'Berlin', zip: `${10000 + i}` },
    balance: i / 4,
  }));

describe('records at the root, read by leaps', () => {
  it('scans only the first write and the record under way at each cut, and reads every record', () => {
    const text = JSON.stringify(customers(5_000));
    for (const step of [4_096, 65_536, 1 << 20]) {
      const answer = read(text, step);
      if ('error' in answer) throw new Error(answer.error);
      expect(answer.records).toEqual(JSON.parse(text));
      // Without leaps every byte is scanned: here under a tenth of them.
      expect(answer.scanned).toBeLessThan(text.length / 10);
    }
  });

  it('learns the records’ opening when the first writes hold only part of it', () => {
    const text = ` \n[${JSON.stringify(customers(2_000)).slice(1)}`;
    const answer = read(text, 3);
    if ('error' in answer) throw new Error(answer.error);
    expect(answer.records).toHaveLength(2_000);
    const cut = Buffer.from(text);
    // Three bytes, then the rest in large writes: the opening is learnt from the first record scanned.
    const reader = new RootArrayReader();
    reader.write(cut.subarray(0, 3));
    for (let i = 3; i < cut.length; i += 8_192) reader.write(cut.subarray(i, i + 8_192));
    reader.end();
    expect(reader.take()).toEqual(JSON.parse(text));
    expect(reader.scanned).toBeLessThan(cut.length / 10);
  });

  it('reads right what misleads a leap: the opening inside strings and nested values, exact numbers, a broken text', () => {
    const opening = ',{"no":';
    const records = [
      { no: 1, note: `a string holding ${opening}2} and more` },
      { no: 2, lines: [{ no: 'x' }, { no: 'y' }] },
      { no: 3, big: new NumberText('12345678901234567') },
      { no: 4, deep: { list: [{ no: { no: 1 } }, { no: 2 }] } },
    ];
    const text = `[${Array.from({ length: 400 }, (_, i) => JSON.stringify({ ...records[i % 4], at: i })).join(',')}]`;
    for (const step of [7, 100, 1_000, 10_000]) {
      const answer = read(text, step);
      if ('error' in answer) throw new Error(answer.error);
      expect(answer.records).toEqual(parseJsonExact(text));
    }
    // A record broken after the leaps began: the scanner says so, as without leaps.
    const broken = `${text.slice(0, 30_000)}}${text.slice(30_000)}`;
    for (const step of [1_000, 65_536]) expect(read(broken, step)).toEqual({ error: 'not JSON' });
    expect(read(`${text.slice(0, -1)}, 1 x]`, 1_000)).toEqual({ error: 'not JSON' });
    expect(read(`${text} ,`, 1_000)).toEqual({ error: 'not JSON' });
  });

  it('answers as the whole text does, for records alike and unlike, cut anywhere', () => {
    const name = fc.constantFrom('no', 'id', 'a"b', 'n\\u006f');
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom('x,{"no":1}', '},{"no":', '12345678901234567', '1e400'),
      fc.array(fc.dictionary(name, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }), { maxLength: 3 }),
    );
    // Records whose first property is mostly the same one, as a payload's are.
    const record = fc
      .tuple(fc.constantFrom('no', 'no', 'no', 'id'), value, fc.dictionary(name, value, { maxKeys: 3 }))
      .map(([first, v, rest]) => {
        const body = JSON.stringify(rest).slice(1, -1);
        return `{${JSON.stringify(first)}:${v === '12345678901234567' || v === '1e400' ? v : JSON.stringify(v)}${body === '' ? '' : `,${body}`}}`;
      });
    const payload = fc
      .tuple(fc.array(record, { maxLength: 30 }), fc.constantFrom('', ' ', '\n'), fc.nat(), fc.constantFrom('', 'x', '}', ',', '"', '{'))
      .map(([items, space, at, edit]) => {
        const text = `${space}[${items.join(',')}]`;
        if (edit === '') return text;
        // After the `[`: a text that does not open an array goes to another reader.
        const i = space.length + 1 + (at % (text.length - space.length));
        return text.slice(0, i) + edit + text.slice(i);
      });
    fc.assert(
      fc.property(payload, fc.integer({ min: 1, max: 600 }), (text, step) => {
        let whole: unknown;
        try {
          whole = parseJsonExact(text);
        } catch {
          whole = 'not JSON';
        }
        const answer = read(text, step);
        expect('error' in answer ? answer.error : answer.records).toEqual(whole);
      }),
      { numRuns: 3000, seed: 20261127 },
    );
  });
});
