/** Source paths that match no record tried (src/mapping/source-paths.ts): the path, and the keys the records do have. */
import { describe, expect, it } from 'vitest';
import type { IntegrationPlan } from '../../src/integrations/model.js';
import { unmatchedSourcePaths } from '../../src/mapping/source-paths.js';

function plan(paths: readonly string[], constant?: string): IntegrationPlan {
  const fields = paths.map((sourcePath, i) => ({
    integrationSortingOrder: 1,
    fieldNo: i + 1,
    title: `F${i + 1}`,
    sourcePath,
    columnType: 'standard' as const,
    constantValue: null,
  }));
  if (constant !== undefined)
    fields.push({
      integrationSortingOrder: 1,
      fieldNo: 99,
      title: 'K',
      sourcePath: '',
      columnType: 'constant' as never,
      constantValue: constant as never,
    });
  return {
    integration: {
      sortingOrder: 1,
      name: 'I',
      type: 'file',
      targetTable: 't',
      recordsPath: '',
      acceptBulkImportRequests: false,
      maxPayloadSizeKb: null,
      writeMode: 'insert',
      onRecordError: 'fail',
    },
    fields,
    mappings: fields.map((f, i) => ({ integrationSortingOrder: 1, fieldNo: f.fieldNo, targetField: `field${i + 1}`, required: false })),
  };
}

const contacts = [
  { no: 1, contact: { email: 'a@x', name: 'A' } },
  { no: 2, contact: { email: 'b@x', name: 'B' } },
  { no: 3, contact: { name: 'C' } },
];

describe('unmatchedSourcePaths', () => {
  it('names a path that matches nothing and lists the keys where it stops matching', () => {
    expect(unmatchedSourcePaths(plan(['no', 'contact.emial']), contacts)).toEqual([
      'Source path "contact.emial" (field "field2") matches nothing in the 3 records; they have contact.email, contact.name.',
    ]);
  });

  it("lists the records' own keys when even the first step matches nothing, and speaks of one record in the singular", () => {
    expect(unmatchedSourcePaths(plan(['kontakt.email']), [contacts[0]])).toEqual([
      'Source path "kontakt.email" (field "field1") matches nothing in the record; it has no, contact.',
    ]);
  });

  it('is quiet when a path matches at least one record, for constants, and when there are no records', () => {
    expect(unmatchedSourcePaths(plan(['no', 'contact.email'], 'X'), contacts)).toEqual([]);
    expect(unmatchedSourcePaths(plan(['missing']), [])).toEqual([]);
  });

  it('writes keys that are not plain names so that they can be pasted as a path', () => {
    expect(unmatchedSourcePaths(plan(['x']), [{ 'odd key': 1, '@odata.id': 2 }])).toEqual([
      'Source path "x" (field "field1") matches nothing in the record; it has $["odd key"], $["@odata.id"].',
    ]);
  });
});
