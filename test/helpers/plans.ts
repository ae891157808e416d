/**
 * An integration plan for the importer tests: integration 1 into `targetTable`, one standard field
 * and one mapping per `[target field, source path]` column, insert mode, fail on a record error,
 * records at the root; `integration` overrides any of these.
 */
import type { Integration, IntegrationPlan } from '../../src/integrations/model.js';

export type PlanColumns = readonly (readonly [target: string, sourcePath: string])[];

/** A plan's table and columns with the integration settings tests vary (see `optionsPlan`). */
export interface PlanOptions extends Partial<Pick<Integration, 'writeMode' | 'onRecordError' | 'recordsPath'>> {
  readonly table?: string;
  readonly columns?: PlanColumns;
}

/** `columnsPlan` of `options`, into `table` and `columns` unless they say otherwise. */
export function optionsPlan(options: PlanOptions, table: string, columns: PlanColumns): IntegrationPlan {
  const { table: target = table, columns: mapped = columns, ...integration } = options;
  return columnsPlan(target, mapped, integration);
}

export function columnsPlan(targetTable: string, columns: PlanColumns, integration: Partial<Integration> = {}): IntegrationPlan {
  return {
    integration: {
      sortingOrder: 1,
      name: targetTable,
      type: 'restApi',
      targetTable,
      recordsPath: '',
      acceptBulkImportRequests: true,
      maxPayloadSizeKb: null,
      writeMode: 'insert',
      onRecordError: 'fail',
      ...integration,
    },
    fields: columns.map(([target, sourcePath], i) => ({
      integrationSortingOrder: 1,
      fieldNo: i + 1,
      title: target,
      sourcePath,
      columnType: 'standard' as const,
      constantValue: null,
    })),
    mappings: columns.map(([target], i) => ({ integrationSortingOrder: 1, fieldNo: i + 1, targetField: target, required: false })),
  };
}
