/**
 * What "Create" saves, from the proposal as the administrator left it: the target table's declaration
 * and the integration's, with one integration field and one mapping per included field, in the
 * shapes the API and `ifw apply` take (so the same rules and messages apply). Pure.
 */
import type { IntegrationType, WriteMode } from '../integrations/model.js';
import type { IntegrationDeclaration } from '../integrations/service.js';
import type { TargetTableInput } from '../tables/validate.js';
import type { ProposedField } from './infer.js';

export interface SampleChoice {
  readonly tableName: string;
  readonly recordsPath: string;
  readonly sortingOrder: number;
  readonly integrationName: string;
  readonly integrationType: IntegrationType;
  readonly acceptBulkImportRequests: boolean;
  readonly writeMode: WriteMode;
  readonly fields: readonly ProposedField[];
}

export interface SampleDeclarations {
  readonly table: TargetTableInput;
  readonly integration: IntegrationDeclaration & Required<Pick<IntegrationDeclaration, 'fields' | 'mappings'>>;
  /** For each declared field (and its integration field and mapping), its row in the choice's list. */
  readonly rows: readonly number[];
}

export function declarationsOf(choice: SampleChoice): SampleDeclarations {
  const rows = choice.fields.flatMap((f, i) => (f.include ? [i] : []));
  const included = rows.map((i) => choice.fields[i]!);
  const table: TargetTableInput = {
    name: choice.tableName,
    primaryKey: included.filter((f) => f.primaryKey).map((f) => f.name),
    fields: included.map((f) => ({
      name: f.name,
      type: f.type,
      ...((f.type === 'text' || f.type === 'code') && f.maxLength !== undefined ? { maxLength: f.maxLength } : {}),
      ...(f.required ? { required: true } : {}),
    })),
  };
  return {
    table,
    integration: {
      sortingOrder: choice.sortingOrder,
      name: choice.integrationName,
      type: choice.integrationType,
      targetTable: choice.tableName,
      recordsPath: choice.recordsPath,
      acceptBulkImportRequests: choice.acceptBulkImportRequests,
      writeMode: choice.writeMode,
      fields: included.map((f, k) => ({ fieldNo: k + 1, title: f.name, sourcePath: f.sourcePath })),
      mappings: included.map((f, k) => ({ fieldNo: k + 1, targetField: f.name })),
    },
    rows,
  };
}
