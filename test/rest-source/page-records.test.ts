/**
 * Where a page's records are (src/rest-source/page-records.ts): the integration's records path and the
 * endpoint's Response Data Path, each used for both when the other is blank. The sentences are the
 * ones docs/pagination.md quotes.
 */
import { describe, expect, it } from 'vitest';
import { findRecords, pageRecordsLocator, recordsFoundBy } from '../../src/rest-source/page-records.js';

const page = { data: [{ id: 1 }, { id: 2 }], values: [{ id: 3 }] };

describe('pageRecordsLocator', () => {
  it.each([
    // records path, Response Data Path, imported, counted, found by
    ['values', '', [{ id: 3 }], [{ id: 3 }], `the integration's records path "values" (Response Data Path is blank)`],
    ['', 'data', [{ id: 1 }, { id: 2 }], [{ id: 1 }, { id: 2 }], `Response Data Path "data" (the integration's records path is blank)`],
    [
      'values',
      'data',
      [{ id: 3 }],
      [{ id: 1 }, { id: 2 }],
      `the integration's records path "values"; Response Data Path "data" counts them for pagination`,
    ],
    ['', '', null, null, "the response root (the integration's records path and Response Data Path are blank)"],
  ] as const)('records path "%s", Response Data Path "%s"', (recordsPath, responseDataPath, imported, counted, foundBy) => {
    const locator = pageRecordsLocator(responseDataPath, recordsPath);
    expect(findRecords(locator, page)).toEqual({ records: imported, counted });
    expect(locator.foundBy).toBe(foundBy);
    expect(recordsFoundBy(responseDataPath, recordsPath)).toBe(foundBy);
  });

  it('uses one setting for both when the other is blank, so a page is read once', () => {
    expect(pageRecordsLocator('', 'values').shared).toBe(true);
    expect(pageRecordsLocator('data', 'values').shared).toBe(false);
    expect(findRecords(pageRecordsLocator('', ''), [{ id: 1 }])).toEqual({ records: [{ id: 1 }], counted: [{ id: 1 }] });
  });

  it('says which setting found nothing, and why that one was read', () => {
    expect(pageRecordsLocator('', '').imported.explain(page)).toBe(
      "the integration's records path and the endpoint's Response Data Path are both blank, so the response root must be the record array, " +
        'but it is an object with properties "data", "values"; set either of them to the path of the records',
    );
    expect(pageRecordsLocator('', 'items').imported.explain(page)).toBe(
      `the integration's records path "items" finds nothing in the response (the response has properties "data", "values")`,
    );
    expect(pageRecordsLocator('', 'data.0').imported.explain(page)).toBe(
      `the integration's records path "data.0" points to an object, not to the record array`,
    );
    expect(pageRecordsLocator('items', '').imported.explain(page)).toBe(
      'Response Data Path "items" finds nothing in the response (the response has properties "data", "values"); ' +
        "the records are read there because the integration's records path is blank",
    );
    // Counting: the message pagination adds "records cannot be counted" to.
    expect(pageRecordsLocator('items', '').counted.explain(page)).toBe(
      'Response Data Path "items" finds nothing in the response (the response has properties "data", "values")',
    );
    expect(pageRecordsLocator('items', 'values').counted.explain(page)).toBe(
      'Response Data Path "items" finds nothing in the response (the response has properties "data", "values")',
    );
  });
});
