/**
 * The tables the importer's cases write (test/table-writer/importer.test.ts on SQLite and
 * importer-postgres.test.ts on every backend): customers with a relation to countries and to
 * themselves, and order lines with a composite key; the customer plan built from options.
 */
import type { IntegrationPlan } from '../../src/integrations/model.js';
import type { TargetTable } from '../../src/tables/model.js';
import { optionsPlan, type PlanOptions } from './plans.js';

export const country: TargetTable = {
  name: 'country',
  primaryKey: ['code'],
  fields: [
    { name: 'code', type: 'code', maxLength: 10 },
    { name: 'name', type: 'text' },
  ],
};

export const customer: TargetTable = {
  name: 'customer',
  primaryKey: ['no'],
  fields: [
    { name: 'no', type: 'code' },
    { name: 'name', type: 'text', maxLength: 30, required: true },
    { name: 'balance', type: 'decimal' },
    { name: 'country', type: 'code', relation: { table: 'country', field: 'code' } },
    { name: 'parentNo', type: 'code', relation: { table: 'customer', field: 'no' } },
  ],
};

export const orderLine: TargetTable = {
  name: 'orderLine',
  primaryKey: ['orderNo', 'lineNo'],
  fields: [
    { name: 'orderNo', type: 'code' },
    { name: 'lineNo', type: 'integer' },
    { name: 'qty', type: 'decimal' },
  ],
};

export const customerTables = new Map([
  ['customer', customer],
  ['country', country],
  ['orderLine', orderLine],
]);

export const customerColumns = [
  ['no', 'no'],
  ['name', 'name'],
  ['balance', 'balance'],
  ['country', 'country'],
  ['parentNo', 'parent.no'],
] as const;

/** The customer integration's plan; options change its write mode, record errors, records path, table and columns. */
export const customerPlan = (options: PlanOptions = {}): IntegrationPlan => optionsPlan(options, 'customer', customerColumns);

/** The two countries the customers may refer to. */
export const SEED_COUNTRIES = `INSERT INTO country (code, name) VALUES ('DE', 'Germany'), ('FR', 'France')`;
