/**
 * The body the OpenAPI document shows for a submit: the README's walkthrough, for integration 10 of
 * examples/customers.yaml. test/http/openapi-examples.test.ts checks it against its schema and submits it.
 */
import type { BodyExamples } from '../http/openapi.js';

const customers = [
  { no: 'C001', name: 'Contoso', email: 'info@contoso.example', address: { city: 'Oslo' } },
  { no: 'C002', name: 'Fabrikam', address: { city: 'Lyon' } },
];

export const SUBMIT_EXAMPLES: BodyExamples = {
  customers: {
    summary: 'Two customers for integration 10; the payload is a JSON text inside a string',
    value: { integrationSortingOrder: 10, payload: JSON.stringify(customers) },
  },
};
