/**
 * The body the OpenAPI document shows for creating an integration with its fields and mappings inline
 * (docs/integrations.md). test/http/openapi-examples.test.ts checks it against its schema and creates it
 * on a service that has the `customer` table of examples/customers.yaml, so it stays valid.
 */
import type { BodyExamples } from '../http/openapi.js';

export const INTEGRATION_EXAMPLES: BodyExamples = {
  withFieldsAndMappings: {
    summary: 'An integration with its fields and mappings, created in one transaction',
    value: {
      sortingOrder: 20,
      name: 'Customers from the CRM',
      type: 'restApi',
      targetTable: 'customer',
      recordsPath: 'data',
      acceptBulkImportRequests: true,
      writeMode: 'upsert',
      onRecordError: 'fail',
      fields: [
        { fieldNo: 1, title: 'No.', sourcePath: 'id' },
        { fieldNo: 2, title: 'Name', sourcePath: 'displayName' },
        { fieldNo: 3, title: 'E-Mail', sourcePath: '$.contact.email' },
        { fieldNo: 4, title: 'Country', columnType: 'constant', constantValue: 'NO' },
      ],
      mappings: [
        { fieldNo: 1, targetField: 'no', required: true },
        { fieldNo: 2, targetField: 'name', required: true },
        { fieldNo: 3, targetField: 'email' },
        { fieldNo: 4, targetField: 'country' },
      ],
    },
  },
};
