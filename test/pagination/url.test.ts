import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { queryParamsTemplate, setQueryParams } from '../../src/pagination/url.js';

const BASES = [
  'https://api.example.com/v1/items',
  'https://api.example.com/v1/items?limit=20',
  'https://api.example.com/v1/items?cursor=old&limit=20&cursor=older',
  'https://api.example.com/v1/items?q=a+b%20c&tag=%7E~!*()%27#section',
  'https://api.example.com/search?q=IfwQueryValue0Mark',
  'http://127.0.0.1:8080/?a=1&a=2&b=',
];

describe('queryParamsTemplate', () => {
  it('builds exactly the URL setQueryParams builds, whatever the values', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...BASES),
        fc.uniqueArray(fc.constantFrom('cursor', 'limit', 'page', 'q', 'a', 'b', 'IfwQueryValue1Mark'), { minLength: 1, maxLength: 3 }),
        fc.array(fc.string({ unit: 'grapheme' }), { minLength: 3, maxLength: 3 }),
        (base, names, values) => {
          const build = queryParamsTemplate(base, names);
          const expected = setQueryParams(base, Object.fromEntries(names.map((name, i) => [name, values[i]!])));
          expect(build(values)).toBe(expected);
          // Built again with other values: nothing of the first call stays behind.
          const other = values.map((value) => `${value}/x y`);
          expect(build(other)).toBe(setQueryParams(base, Object.fromEntries(names.map((name, i) => [name, other[i]!]))));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('encodes the characters URLSearchParams encodes and encodeURIComponent does not', () => {
    const build = queryParamsTemplate('https://api.example.com/items?limit=20', ['cursor']);
    expect(build(["a b!'()~*-._=&+/é"])).toBe('https://api.example.com/items?limit=20&cursor=a+b%21%27%28%29%7E*-._%3D%26%2B%2F%C3%A9');
  });

  it('repairs a lone surrogate as URLSearchParams does, instead of throwing', () => {
    const build = queryParamsTemplate('https://api.example.com/items', ['cursor']);
    expect(build(['a\uD800b'])).toBe(setQueryParams('https://api.example.com/items', { cursor: 'a\uD800b' }));
  });
});
